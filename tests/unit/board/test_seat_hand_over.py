"""A seat given up and handed over (services/board/lobby.py): its holder leaves it
(SeatLeft), its tokens stop acting, nobody takes it until the creator or a seated player
hands it over (SeatHandedOver) to a bot or opens it for a new player; every reader folds
both the same way. And per game, what the new holder sees of what the old one saw
(services/games/handover.py). Given events, when a seat change is asked, then events or
a refusal."""

from __future__ import annotations

import dataclasses

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.adapters.views import from_update, update, view
from services.board.lobby import LobbyService
from services.games import handover
from services.games.imperial_miners.view import make_view
from services.games.match import Match
from services.projector.folder import ProjectionFolder, decode_record, encode_record
from tabletop.v1 import board_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import Aborted, context

ANA, BO, CY, DEE = ("p-" + c * 32 for c in "abcd")


async def _table(
    game: str = "drillit", players: tuple[str, ...] = ("ann", "bob")
) -> tuple[Board, LobbyService]:
    """A match ANA created, each seat joined: ann by ANA, bob by BO (and so on)."""
    board = Board()
    await board.service.CreateMatch(
        board_pb2.CreateMatchRequest(
            game=game,
            players=players,
            match_id=MATCH,
            command_id=f"create:{MATCH}",
            lobby=platform_events_pb2.MatchLobby(creator=ANA, open_s=300),
        ),
        context(),
    )
    lobby = LobbyService(board.service)
    for seat, player in zip(players, (ANA, BO, CY), strict=False):
        await _join(lobby, player, seat)
    return board, lobby


async def _join(
    lobby: LobbyService, player: str, seat: str, by: str = "free"
) -> board_pb2.JoinSeatReply:
    return await lobby.JoinSeat(
        board_pb2.JoinSeatRequest(
            match_id=MATCH,
            seat=seat,
            display_name=seat,
            join_id=f"j-{player}-{seat}",
            by=by,
            player_id=player,
        ),
        context(),
    )


async def _leave(
    lobby: LobbyService, seat: str, player: str = "", token: str = "", command: str = "leave-1"
) -> board_pb2.SeatChangeReply:
    return await lobby.LeaveSeat(
        board_pb2.BoardLeaveSeatRequest(
            match_id=MATCH, seat=seat, player_id=player, seat_token=token, command_id=command
        ),
        context(),
    )


async def _hand_over(
    lobby: LobbyService, seat: str, by: str, level: str = "", command: str = "over-1"
) -> board_pb2.SeatChangeReply:
    return await lobby.HandOverSeat(
        board_pb2.BoardHandOverSeatRequest(
            match_id=MATCH,
            seat=seat,
            to="bot" if level else "open",
            level=level,
            player_id=by,
            command_id=command,
        ),
        context(),
    )


async def _refused(call: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(Aborted) as aborted:
        await call  # type: ignore[misc]
    return aborted.value.code, aborted.value.reason


def _types(board: Board) -> list[str]:
    return [e.event_type.rsplit(".", 1)[1] for e in board.event_log.envelopes]


def _match(board: Board) -> Match:
    match = board.service.matches.get(MATCH)
    assert match is not None
    return match


async def test_a_holder_leaves_by_its_token_and_every_reader_folds_the_seat_as_left() -> None:
    board, lobby = await _table()
    await _leave(lobby, "bob", token=f"j-{BO}-bob")
    assert _types(board)[-1] == "SeatLeft"
    folder = ProjectionFolder()
    for envelope in board.event_log.envelopes:
        folder.fold(envelope)
    for match in (_match(board), fold_board_events(board.event_log.envelopes), folder.match(MATCH)):
        assert match.holders == {"ann": ANA}
        assert "bob" not in match.seat_tokens
        assert match.seat_states() == {"ann": "held", "bob": "left"}
    # the gateway's copy (the update on the wire) says the same
    assert update(_match(board)).summary.seat_states == {"ann": "held", "bob": "left"}


async def test_the_old_token_of_a_left_seat_acts_no_more() -> None:
    board, lobby = await _table()
    await _leave(lobby, "bob", player=BO)
    request = board_pb2.GetLegalActionsRequest(
        match_id=MATCH, player="bob", seat_token=f"j-{BO}-bob"
    )
    code, reason = await _refused(board.service.GetLegalActions(request, context()))
    assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "SEAT_GIVEN_UP")


async def test_only_its_holder_leaves_a_seat() -> None:
    board, lobby = await _table()
    before = len(board.event_log.envelopes)
    assert await _refused(_leave(lobby, "bob", player=ANA)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_SEAT",
    )
    assert await _refused(_leave(lobby, "bob", token="an-older-token")) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SEAT_REJOINED",
    )
    assert len(board.event_log.envelopes) == before  # nothing appended


async def test_a_left_seat_is_taken_by_nobody_until_it_is_handed_over() -> None:
    board, lobby = await _table()
    await _leave(lobby, "bob", player=BO)
    before = len(board.event_log.envelopes)
    for player, by in ((BO, "holder"), (ANA, "creator"), (CY, "free")):
        code, reason = await _refused(_join(lobby, player, "bob", by))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "SEAT_LEFT")
    assert len(board.event_log.envelopes) == before


async def test_a_seat_a_player_holds_is_not_handed_over_and_a_stranger_hands_over_nothing() -> None:
    board, lobby = await _table()
    assert await _refused(_hand_over(lobby, "bob", ANA)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SEAT_HELD",
    )
    await _leave(lobby, "bob", player=BO)
    assert await _refused(_hand_over(lobby, "bob", DEE)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_AT_THE_TABLE",
    )
    assert _types(board)[-1] == "SeatLeft"


async def test_an_opened_seat_goes_to_a_new_player_recorded_as_its_holder() -> None:
    board, lobby = await _table()
    await _leave(lobby, "bob", player=BO)
    await _hand_over(lobby, "bob", ANA)
    assert _match(board).seat_states()["bob"] == "open"
    # the creator, who holds ann, takes no second seat
    code, reason = await _refused(_join(lobby, ANA, "bob"))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "ONE_SEAT_EACH")
    joined = await _join(lobby, CY, "")  # the first free seat: the opened one
    assert joined.seat == "bob"
    assert _types(board)[-3:] == ["SeatLeft", "SeatHandedOver", "SeatJoined"]
    match = fold_board_events(board.event_log.envelopes)
    assert match.holders == {"ann": ANA, "bob": CY}
    assert match.seat_states() == {"ann": "held", "bob": "held"}


async def test_a_seat_handed_to_a_bot_is_the_bots_services_alone() -> None:
    board, lobby = await _table()
    await _leave(lobby, "bob", player=BO)
    await _hand_over(lobby, "bob", ANA, level="easy")
    match = _match(board)
    assert match.bot_levels == {"bob": "easy"} and match.seat_states()["bob"] == "bot"
    assert await _refused(_join(lobby, CY, "bob")) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SEAT_FOR_A_BOT",
    )
    joined = await _join(lobby, "", "bob", by="bots")
    assert joined.seat == "bob"
    assert fold_board_events(board.event_log.envelopes).holders == {"ann": ANA}


async def test_a_seated_player_hands_over_the_creators_seat_when_the_creator_left() -> None:
    board, lobby = await _table()
    await _leave(lobby, "ann", player=ANA)
    await _hand_over(lobby, "ann", BO, level="easy")
    handed = platform_events_pb2.SeatHandedOver()
    board.event_log.envelopes[-1].payload.Unpack(handed)
    assert (handed.seat, handed.to, handed.level, handed.by) == ("ann", "bot", "easy", BO)


async def test_a_retried_change_appends_nothing() -> None:
    board, lobby = await _table()
    first = await _leave(lobby, "bob", player=BO, command="same")
    again = await _leave(lobby, "bob", player=BO, command="same")
    assert again.version == first.version
    assert _types(board).count("SeatLeft") == 1


# -- what the new holder sees, game by game ---------------------------------------------------
async def _play_until(board: Board, seat: str, done: object) -> None:
    """The seat (or, while the game awaits only others, the first of them) plays its
    first legal action until ``done(match)``."""
    for number in range(80):
        match = _match(board)
        if done(match):  # type: ignore[operator]
            return
        awaited = match.game.next_step(match.state).players  # type: ignore[union-attr]
        player = seat if seat in awaited else awaited[0]
        actions = await board.legal(player)
        await board.submit(f"c-{player}-{number}", actions[0], player=player)
    raise AssertionError("not reached")


async def test_imperial_miners_a_new_holder_gets_the_hand_but_not_the_card_chosen_before() -> None:
    board, lobby = await _table("imperial_miners")
    await _play_until(board, "ann", lambda m: "ann" in m.state.chosen and not m.state.revealed)
    chosen = _match(board).state.chosen["ann"]
    before = view(_match(board), "ann").game_view.imperial_miners
    assert before.my_choice == chosen  # the old holder saw it
    await _leave(lobby, "ann", player=ANA)
    await _hand_over(lobby, "ann", BO)  # bob's holder opens it (a creator who left)
    await _join(lobby, DEE, "ann")
    for match in (
        _match(board),
        fold_board_events(board.event_log.envelopes),
        from_update(update(_match(board)), _match(board).state),  # a gateway's copy
    ):
        shown = view(match, "ann").game_view.imperial_miners
        assert list(shown.hand) == list(before.hand)  # the seat's cards: needed to play
        assert not shown.HasField("my_choice")
        assert next(s for s in shown.seats if s.player == "ann").has_chosen
    # once the round reveals it, everyone sees it, the new holder too
    await _play_until(board, "bob", lambda m: m.state.revealed or m.state.round > 1)
    shown = view(_match(board), "ann").game_view.imperial_miners
    played = next(s for s in shown.seats if s.player == "ann")
    assert played.played == chosen or shown.round > 1


async def test_drillit_nothing_is_kept_back_everything_in_hand_is_public() -> None:
    board, lobby = await _table("drillit")
    before = view(_match(board), "bob")
    await _leave(lobby, "bob", player=BO)
    await _hand_over(lobby, "bob", ANA, level="easy")
    assert _match(board).sealed == {}
    after = view(_match(board), "bob")
    assert after.game_view == before.game_view


async def test_dungeon_drop_the_new_holder_gets_the_seats_quest_and_no_other() -> None:
    board, lobby = await _table("dungeon_drop")
    await _leave(lobby, "bob", player=BO)
    await _hand_over(lobby, "bob", ANA)
    await _join(lobby, DEE, "bob")
    match = _match(board)
    assert match.sealed == {}
    seats = {s.player: s for s in view(match, "bob").game_view.dungeon_drop.seats}
    assert seats["bob"].quest == match.state.quests["bob"]
    assert not seats["ann"].HasField("quest")


async def test_crashland_a_solo_seat_is_left_but_never_handed_over() -> None:
    _, lobby = await _table("crashland", ("ann",))
    await _leave(lobby, "ann", player=ANA)
    assert await _refused(_hand_over(lobby, "ann", ANA, level="easy")) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "SOLO_MATCH",
    )


async def test_a_seat_given_up_and_what_is_sealed_survive_the_projectors_record() -> None:
    board, lobby = await _table("imperial_miners")
    await _play_until(board, "ann", lambda m: "ann" in m.state.chosen and not m.state.revealed)
    await _leave(lobby, "ann", player=ANA)
    await _hand_over(lobby, "ann", BO)
    match = _match(board)
    assert match.sealed == {"ann": match.state.chosen["ann"]}
    stored, _, _ = decode_record(encode_record(match, {}, {}))
    assert stored is not None
    assert (stored.vacated, stored.sealed) == (match.vacated, match.sealed)
    assert stored.seat_states() == {"ann": "open", "bob": "held"}


async def test_imperial_miners_masks_only_the_sealed_card_and_only_before_the_reveal() -> None:
    board, _ = await _table("imperial_miners")
    await _play_until(board, "ann", lambda m: "ann" in m.state.chosen and not m.state.revealed)
    state = _match(board).state
    chosen = state.chosen["ann"]
    shown = make_view(state, "ann")
    assert shown.my_choice == chosen
    assert handover.mask("imperial_miners", shown, chosen).my_choice is None
    assert handover.mask("imperial_miners", shown, "another card").my_choice == chosen
    assert handover.mask("drillit", shown, chosen) is shown  # a game that keeps nothing back
    # revealed to everyone: nothing left to keep back
    seats = tuple(
        dataclasses.replace(seat, played=chosen) if seat.player == "ann" else seat
        for seat in shown.seats
    )
    revealed = dataclasses.replace(shown, seats=seats)
    assert handover.mask("imperial_miners", revealed, chosen).my_choice == chosen
