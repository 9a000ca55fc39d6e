"""A seat is held by the player who joined it (services/board/lobby.py): that player joins
it again from any device, naming it or not; no other player, the creator included, takes
it; the holder is recorded in SeatJoined and every reader folds it the same way. Given
events, when a seat is claimed, then events or a refusal."""

from __future__ import annotations

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.board.lobby import LobbyService
from services.projector.folder import ProjectionFolder
from tabletop.v1 import board_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import Aborted, context

ANA, BO = "p-" + "a" * 32, "p-" + "b" * 32


async def _lobby() -> tuple[Board, LobbyService]:
    board = Board()
    await board.service.CreateMatch(
        board_pb2.CreateMatchRequest(
            game="drillit",
            players=["ann", "bob"],
            match_id=MATCH,
            command_id=f"create:{MATCH}",
            lobby=platform_events_pb2.MatchLobby(creator=ANA, open_s=300),
        ),
        context(),
    )
    return board, LobbyService(board.service)


async def _join(
    lobby: LobbyService, player: str, seat: str = "", by: str = "free", join_id: str = ""
) -> board_pb2.JoinSeatReply:
    return await lobby.JoinSeat(
        board_pb2.JoinSeatRequest(
            match_id=MATCH,
            seat=seat,
            display_name=seat or "someone",
            join_id=join_id or f"j-{player}-{seat}-{by}",
            by=by,
            player_id=player,
        ),
        context(),
    )


def _joins(board: Board) -> list[platform_events_pb2.SeatJoined]:
    out = []
    for envelope in board.event_log.envelopes:
        if envelope.event_type == "tabletop.v1.SeatJoined":
            joined = platform_events_pb2.SeatJoined()
            envelope.payload.Unpack(joined)
            out.append(joined)
    return out


async def test_a_player_joins_its_own_seat_again_from_another_device_without_naming_it() -> None:
    board, lobby = await _lobby()
    assert (await _join(lobby, ANA, "ann")).seat == "ann"
    # another device: the same player, a new token id, no seat named
    again = await _join(lobby, ANA, join_id="second-device")
    assert again.seat == "ann"
    first, second = _joins(board)
    assert (first.by, first.player_id) == ("free", ANA)
    assert (second.by, second.player_id, second.join_id) == ("holder", ANA, "second-device")
    match = fold_board_events(board.event_log.envelopes)
    assert match.holders == {"ann": ANA}
    assert match.seat_tokens["ann"] == "second-device"  # the older token stops acting


async def test_no_other_player_takes_a_held_seat_not_even_the_creator() -> None:
    board, lobby = await _lobby()
    await _join(lobby, BO, "bob")
    for by in ("free", "creator", "holder"):
        with pytest.raises(Aborted) as refused:
            await _join(lobby, ANA, "bob", by=by)
        assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
        assert "only the player who holds it" in refused.value.details
    assert len(_joins(board)) == 1  # nothing appended


async def test_a_free_seat_goes_to_a_player_who_holds_none_and_the_projector_knows_holders() -> (
    None
):
    board, lobby = await _lobby()
    await _join(lobby, ANA, "ann")
    assert (await _join(lobby, BO)).seat == "bob"  # the first free seat
    folder = ProjectionFolder()
    for envelope in board.event_log.envelopes:
        folder.fold(envelope)
    assert folder.match(MATCH).holders == {"ann": ANA, "bob": BO}
    assert folder.match(MATCH).creator == ANA
