"""Taking back a move (services/board/undo.py), per game: given a match played on the
board to a seat's command, when the seat asks UndoCommand, then an ActionsUndone that
restores the state before the command, or a refusal with the reason. Undoable: a move
that showed nobody anything new; not undoable: one after which a die was rolled, a card
drawn or turned, a flick's outcome shown, or secret choices revealed."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.adapters.game_adapter import messages_for
from services.adapters.verify import verify_match
from services.adapters.views import encode_state
from services.board.lobby import LobbyService
from services.common.envelope import is_a, unpack
from services.games.crashland import events as crashland
from services.games.drillit import events as drillit
from services.games.dungeon_drop import events as dungeon_drop
from services.games.imperial_miners import events as miners
from tabletop.v1 import board_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board, _creator_sits, refused
from tests.unit.fakes import context

#: a seat's command (its events) the test waits for
Wanted = Callable[[str, Sequence[Any]], bool]


def only(*kinds: type) -> Wanted:
    return lambda seat, events: all(type(e) in kinds for e in events)


def having(kind: type, without: tuple[type, ...] = ()) -> Wanted:
    return lambda seat, events: (
        any(type(e) is kind for e in events) and not any(type(e) in without for e in events)
    )


class Table:
    """A match on the board, played by seeded random moves."""

    def __init__(
        self, game: str, players: tuple[str, ...], seed: int, options: dict[str, str] | None = None
    ) -> None:
        self.board, self.game, self.players = Board(), game, players
        self.rng = random.Random(seed)
        self.moves = 0
        self.options = options or {}

    async def open(self) -> Table:
        """The match, its first seat taken with it, then the others joined."""
        request = board_pb2.CreateMatchRequest(
            game=self.game,
            players=self.players,
            match_id=MATCH,
            command_id=f"create:{MATCH}",
            options=self.options,
            seated=_creator_sits(self.players[0]),
        )
        await self.board.service.CreateMatch(request, context())
        lobby = LobbyService(self.board.service)
        for seat in self.players[1:]:  # every seat joined: the match starts, clocks run
            join = board_pb2.JoinSeatRequest(
                match_id=MATCH, seat=seat, display_name=seat, join_id=f"j-{seat}", by="free"
            )
            await lobby.JoinSeat(join, context())
        return self

    @property
    def envelopes(self) -> list[Any]:
        return [e for e in self.board.event_log.envelopes if e.match_id == MATCH]

    def events_of(self, command_id: str) -> list[Any]:
        messages = messages_for(self.game)
        return [
            messages.event_from_any(e.payload)
            for e in self.envelopes
            if e.correlation_id == command_id and messages.is_game_event(e.payload)
        ]

    async def play_until(self, wanted: Wanted, limit: int = 3000) -> str:
        """Random moves until a seat's command is ``wanted``: that seat."""
        for _ in range(limit):
            seat, legal = await self._to_play()
            self.moves += 1
            command_id = f"c{self.moves}"
            reply = await self.board.submit(
                command_id, legal[self.rng.randrange(len(legal))], player=seat
            )
            if reply.finished:
                raise AssertionError("the match ended first")
            if wanted(seat, self.events_of(command_id)):
                return seat
        raise AssertionError("no such command")

    async def _to_play(self) -> tuple[str, list[Any]]:
        for seat in self.rng.sample(self.players, len(self.players)):
            legal = await self.board.legal(seat)
            if legal:
                return seat, legal
        raise AssertionError("nobody to play")

    async def undo(self, seat: str, command_id: str = "") -> board_pb2.AcknowledgedAction:
        self.moves += 1
        request = board_pb2.BoardUndoRequest(
            match_id=MATCH, player=seat, command_id=command_id or f"u{self.moves}"
        )
        return await self.board.service.UndoCommand(request, context())

    async def can_undo(self, seat: str) -> bool:
        request = board_pb2.GetLegalActionsRequest(match_id=MATCH, player=seat)
        return (await self.board.service.GetLegalActions(request, context())).can_undo


async def _undone(table: Table, seat: str) -> None:
    """The seat takes back its last command: the match, as the board holds it and as any
    reader folds its log, is as it was before the command, and verification agrees."""
    before_undo = len(table.envelopes)
    command = [e for e in table.envelopes if e.correlation_id == f"c{table.moves}"]
    assert await table.can_undo(seat)
    reply = await table.undo(seat)
    assert reply.reply.version == before_undo + 1
    last = table.envelopes[-1]
    assert is_a(last, platform_events_pb2.ActionsUndone)
    undone = unpack(last, platform_events_pb2.ActionsUndone)
    assert isinstance(undone, platform_events_pb2.ActionsUndone)
    assert (undone.seat, undone.to_version) == (seat, command[0].sequence - 1)
    earlier = encode_state(fold_board_events(table.envelopes[: undone.to_version]).state)
    held = table.board.service.matches.get(MATCH)
    assert held is not None
    assert encode_state(held.state) == earlier
    assert encode_state(fold_board_events(table.envelopes).state) == earlier
    verified = verify_match(table.envelopes)
    assert not [p for p in verified.problems if p.startswith("board")]


async def _refused(table: Table, seat: str, reason: str) -> None:
    appended = len(table.envelopes)
    assert not await table.can_undo(seat)
    assert await refused(table.undo(seat)) == (grpc.StatusCode.FAILED_PRECONDITION, reason)
    assert len(table.envelopes) == appended  # nothing appended


# -- Crashland ------------------------------------------------------------------------------


async def test_crashland_a_move_onto_a_card_already_turned_is_taken_back() -> None:
    table = await Table("crashland", ("ann",), 3).open()
    seat = await table.play_until(only(crashland.AstronautMoved))
    await _undone(table, seat)


async def test_crashland_a_move_that_turned_a_card_stands() -> None:
    table = await Table("crashland", ("ann",), 3).open()
    seat = await table.play_until(having(crashland.CardRevealed))
    await _refused(table, seat, "REVEALED_SINCE")


async def test_crashland_the_end_of_movement_stands_once_event_cards_are_drawn() -> None:
    table = await Table("crashland", ("ann",), 5).open()
    seat = await table.play_until(having(crashland.EventCardsDrawn))
    await _refused(table, seat, "CHANCE_SINCE")


# -- Drillit! -------------------------------------------------------------------------------


async def test_drillit_a_gnome_moved_is_taken_back() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    await _undone(table, seat)


async def test_drillit_a_turn_ended_with_a_die_rolled_stands() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(having(drillit.FireDieRolled))
    await _refused(table, seat, "CHANCE_SINCE")


# -- Dungeon Drop ---------------------------------------------------------------------------


async def test_dungeon_drop_a_pillar_moved_is_taken_back() -> None:
    table = await Table("dungeon_drop", ("ann", "bob"), 2).open()
    seat = await table.play_until(only(dungeon_drop.PillarMoved))
    await _undone(table, seat)


async def test_dungeon_drop_a_flick_stands_once_the_cubes_have_moved() -> None:
    table = await Table("dungeon_drop", ("ann", "bob"), 2).open()
    seat = await table.play_until(having(dungeon_drop.CubeFlicked))
    await _refused(table, seat, "CHANCE_SINCE")  # (the physics draws from the dice seed)


# -- Imperial Miners ------------------------------------------------------------------------


async def test_imperial_miners_a_secret_choice_is_taken_back_before_the_reveal() -> None:
    table = await Table("imperial_miners", ("ann", "bob"), 6).open()
    seat = await table.play_until(only(miners.CardChosen))
    await _undone(table, seat)
    # the other seat still has its choice to make; the first chooses again
    assert await table.board.legal(seat)


async def test_imperial_miners_the_choice_that_revealed_every_card_stands() -> None:
    table = await Table("imperial_miners", ("ann", "bob"), 6).open()
    seat = await table.play_until(having(miners.CardsRevealed, without=(miners.MineCardsDrawn,)))
    await _refused(table, seat, "REVEALED_SINCE")


# -- across games ---------------------------------------------------------------------------


async def test_another_seats_move_since_is_not_taken_back() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    other = next(p for p in table.players if p != seat)
    assert not await table.can_undo(other)
    assert await refused(table.undo(other)) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOT_YOUR_MOVE",
    )


async def test_undo_twice_goes_one_move_further_back_within_the_turn() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    first = next(e for e in table.envelopes if e.correlation_id == f"c{table.moves}")
    moved = only(drillit.GnomeMoved)
    seat = await table.play_until(lambda s, events: s == seat and moved(s, events))
    await _undone(table, seat)
    await _undone_to(table, seat)
    assert table.envelopes[-1].sequence > first.sequence


async def _undone_to(table: Table, seat: str) -> None:
    """A second undo: the match goes back to before the seat's previous command."""
    previous = [e for e in table.envelopes if e.correlation_id == f"c{table.moves - 2}"]
    reply = await table.undo(seat)
    undone = unpack(table.envelopes[-1], platform_events_pb2.ActionsUndone)
    assert isinstance(undone, platform_events_pb2.ActionsUndone)
    assert reply.reply.version == table.envelopes[-1].sequence
    assert undone.to_version == previous[0].sequence - 1
    earlier = encode_state(fold_board_events(table.envelopes[: undone.to_version]).state)
    assert encode_state(fold_board_events(table.envelopes).state) == earlier


async def test_a_retried_undo_takes_back_nothing_more() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    first = await table.undo(seat, "undo-1")
    again = await table.undo(seat, "undo-1")
    assert again.reply.duplicate and again.reply.version == first.reply.version
    assert sum(is_a(e, platform_events_pb2.ActionsUndone) for e in table.envelopes) == 1


async def test_nothing_to_take_back_at_the_start() -> None:
    table = await Table("crashland", ("ann",), 3).open()
    assert await refused(table.undo("ann")) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "NOTHING_TO_UNDO",
    )


async def test_a_board_recovered_from_the_log_holds_the_match_as_the_undo_left_it() -> None:
    table = await Table("imperial_miners", ("ann", "bob"), 6, {"clock": "live:10m+5s"}).open()
    seat = await table.play_until(only(miners.CardChosen))
    await table.undo(seat, "undo-1")
    recovered = Board()
    for envelope in table.envelopes:
        recovered.service.apply(envelope)
    held, again = table.board.service.matches.get(MATCH), recovered.service.matches.get(MATCH)
    assert held is not None and again is not None
    assert encode_state(again.state) == encode_state(held.state)
    assert held.clock is not None and again.clock is not None
    assert held.clock.awaited  # (running: every seat joined)
    assert again.clock.facts() == held.clock.facts()
    retried = board_pb2.BoardUndoRequest(match_id=MATCH, player=seat, command_id="undo-1")
    assert (await recovered.service.UndoCommand(retried, context())).reply.duplicate


async def test_a_match_evicted_while_idle_still_takes_a_move_back_reading_the_log_only_then() -> (
    None
):
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    other = next(p for p in table.players if p != seat)
    table.board.service.matches.evict(MATCH)  # as ``evict_idle`` lets an idle match go
    table.board.service.writer.close(MATCH, remember=False)
    # the other seat's player comes back (reloading the match; a seat event passes over)
    join = board_pb2.JoinSeatRequest(
        match_id=MATCH, seat=other, display_name=other, join_id="again", by="holder"
    )
    await LobbyService(table.board.service).JoinSeat(join, context())
    reads = table.board.event_log.ranges_read
    assert not await table.can_undo(other)  # its last move is not the other seat's:
    assert table.board.event_log.ranges_read == reads  # no more reading of the log
    await _undone(table, seat)


async def test_verification_finds_an_undo_that_restores_another_state() -> None:
    table = await Table("drillit", ("ann", "bob"), 4).open()
    seat = await table.play_until(only(drillit.GnomeMoved))
    await table.undo(seat)
    envelopes = table.envelopes
    forged = unpack(envelopes[-1], platform_events_pb2.ActionsUndone)
    assert isinstance(forged, platform_events_pb2.ActionsUndone)
    forged.state = encode_state(fold_board_events(envelopes[:-1]).state)  # the move kept
    envelopes[-1].payload.Pack(forged)
    assert any("takes the match back" in p for p in verify_match(envelopes).problems)


# -- with a clock: no time given back -------------------------------------------------------


async def test_a_live_clock_gives_no_time_back_and_takes_the_moves_increment_back() -> None:
    table = await Table("crashland", ("ann",), 3, {"clock": "live:10m+5s"}).open()
    seat = await table.play_until(only(crashland.AstronautMoved))
    command = [e for e in table.envelopes if e.correlation_id == f"c{table.moves}"]
    earlier = fold_board_events(table.envelopes[: command[0].sequence - 1]).clock
    moved = table.board.service.matches.get(MATCH)
    assert earlier is not None and moved is not None and moved.clock is not None
    bank_before, bank_moved = earlier.banks[seat], moved.clock.banks[seat]
    assert bank_moved > bank_before + 4  # the move earned its 5 s increment
    await _undone(table, seat)
    held = table.board.service.matches.get(MATCH)
    assert held is not None and held.clock is not None
    assert held.clock.banks[seat] <= bank_before  # the time since is charged, not given back
    folded = fold_board_events(table.envelopes).clock
    assert folded is not None and folded.facts() == held.clock.facts()  # as every reader has it


async def test_a_turn_clock_keeps_the_turns_start_through_an_undo() -> None:
    table = await Table("crashland", ("ann",), 3, {"clock": "turn:24h"}).open()
    seat = await table.play_until(only(crashland.AstronautMoved))
    command = [e for e in table.envelopes if e.correlation_id == f"c{table.moves}"]
    earlier = fold_board_events(table.envelopes[: command[0].sequence - 1]).clock
    assert earlier is not None
    await _undone(table, seat)
    held = table.board.service.matches.get(MATCH)
    assert held is not None and held.clock is not None
    assert held.clock.started[seat] == earlier.started[seat]  # no fresh move window


@pytest.mark.parametrize("game", ["crashland", "drillit", "dungeon_drop", "imperial_miners"])
def test_every_game_names_what_reveals(game: str) -> None:
    from services.games.registry import all_games

    assert all_games()[game].revealing_events is not None
