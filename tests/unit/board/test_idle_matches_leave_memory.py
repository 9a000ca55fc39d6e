"""A started match unused for ``idle_held_s`` leaves the board's memory, its envelopes
too, and is reloaded from the log at its next command: it plays on exactly as a match
never evicted (a fake clock; the log in memory). Lobbies and matches with a command under
way stay."""

from __future__ import annotations

import asyncio

from services.board.matches import Matches
from services.common.envelope import Cause, make_envelope
from tabletop.v1 import board_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.board.test_board_service import MATCH, Board, _creator_sits
from tests.unit.fakes import context

IDLE_S = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def board_with(clock: Clock) -> Board:
    board = Board()
    board.service.matches = Matches(clock=clock)
    board.service.idle_held_s = IDLE_S
    return board


async def played(board: Board, clock: Clock, evicting: bool, actions: int = 8) -> list[bytes]:
    """The first legal action, ``actions`` times; evicting the match before each one."""
    await board.create(seated=_creator_sits())
    shown = []
    for i in range(actions):
        if evicting:
            clock.now += IDLE_S + 1
            assert board.service.evict_idle() == 1
            assert not board.writer.is_open(MATCH)
            assert board.service.matches.get(MATCH) is None
        legal = await board.legal()
        if not legal:
            break
        request = board_pb2.SubmitActionRequest(
            match_id=MATCH, player="ann", command_id=f"c{i}", action=legal[0]
        )
        acknowledged = await board.service.SubmitCommand(request, context())
        shown.append(acknowledged.reply.SerializeToString() + acknowledged.view_update)
    return shown


async def test_an_evicted_match_plays_on_as_one_never_evicted() -> None:
    clock = Clock()
    kept = await played(board_with(clock), clock, evicting=False)
    evicted = await played(board_with(clock), clock, evicting=True)
    assert len(kept) > 1 and evicted == kept


async def test_a_used_match_stays_and_an_unused_one_leaves() -> None:
    clock = Clock()
    board = board_with(clock)
    await board.create(seated=_creator_sits())
    clock.now += IDLE_S - 1
    await board.legal()  # used now
    clock.now += IDLE_S - 1
    assert board.service.evict_idle() == 0 and board.writer.is_open(MATCH)
    clock.now += 2
    assert board.service.evict_idle() == 1


async def test_a_lobby_and_a_match_under_its_lock_stay() -> None:
    clock = Clock()
    board = board_with(clock)
    await board.create(game="drillit", players=("ann", "bob"))  # nobody joined: a lobby
    clock.now += 10 * IDLE_S
    assert board.service.evict_idle() == 0
    other = board_with(clock)
    await other.create(seated=_creator_sits())
    clock.now += 10 * IDLE_S
    async with other.writer.lock(MATCH):
        assert other.service.evict_idle() == 0
    assert other.service.evict_idle() == 1
    await asyncio.sleep(0)


def test_a_reload_read_before_a_command_does_not_replace_the_match_it_changed() -> None:
    matches = Matches()
    opened = make_envelope(
        match_id="m",
        stream="board",
        sequence=1,
        payload=pe.MatchCreated(game="crashland", players=["ann"]),
        cause=Cause("c", "c", "board"),
    )
    seated = make_envelope(
        match_id="m",
        stream="board",
        sequence=2,
        payload=_creator_sits(),
        cause=Cause("j", "j", "x"),
    )
    newer = matches.reload([opened, seated])
    assert matches.reload([opened]) is newer and newer.version == 2
