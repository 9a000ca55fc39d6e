"""A started match unused for ``idle_held_s`` leaves the board's memory, its envelopes
too (the writer's keep of recently closed matches included), and is reloaded from the log
at its next command: it plays on exactly as a match never evicted, and a retried command
gets its first answer (a fake clock; the log in memory). Lobbies and matches with a
command under way stay. After many evictions the heap is given back."""

from __future__ import annotations

import asyncio
import ctypes
import types

import pytest

from services.board.matches import Matches
from services.common import holding
from services.common.envelope import Cause, make_envelope
from services.common.holding import Holding
from tabletop.v1 import board_pb2, games_pb2
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
    board.service.matches = Matches(Holding(IDLE_S, clock=clock))
    return board


async def submit(
    board: Board, command_id: str, action: games_pb2.GameAction
) -> tuple[board_pb2.AcknowledgedAction, int]:
    """The board's answer to a command, and how many events the log holds after it."""
    request = board_pb2.SubmitActionRequest(
        match_id=MATCH, player="ann", command_id=command_id, action=action
    )
    acknowledged = await board.service.SubmitCommand(request, context())
    return acknowledged, len(board.event_log.envelopes)


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
        acknowledged, _ = await submit(board, f"c{i}", legal[0])
        shown.append(acknowledged.reply.SerializeToString() + acknowledged.view_update)
    return shown


async def test_an_evicted_match_plays_on_as_one_never_evicted() -> None:
    clock = Clock()
    kept = await played(board_with(clock), clock, evicting=False)
    evicted = await played(board_with(clock), clock, evicting=True)
    assert len(kept) > 1 and evicted == kept


async def test_an_evicted_match_leaves_the_writers_keep_too() -> None:
    """Its envelopes are not kept among the recently closed matches' (as a finished
    match's are): its next command reads it back from the log."""
    clock = Clock()
    board = board_with(clock)
    await board.create(seated=_creator_sits())
    await submit(board, "c0", (await board.legal())[0])
    clock.now += IDLE_S + 1
    assert board.service.evict_idle() == 1
    reads = board.event_log.ranges_read
    assert await board.legal()  # the match reloaded
    assert board.event_log.ranges_read == reads + 1


async def test_a_command_retried_after_its_match_was_evicted_gets_its_first_answer() -> None:
    clock = Clock()
    board = board_with(clock)
    opened = await board.create(seated=_creator_sits())
    action = (await board.legal())[0]
    first, appended = await submit(board, "c0", action)
    clock.now += IDLE_S + 1
    assert board.service.evict_idle() == 1
    again, still = await submit(board, "c0", action)
    assert again.reply.duplicate and still == appended  # nothing appended
    assert again.reply.version == first.reply.version
    clock.now += IDLE_S + 1
    assert board.service.evict_idle() == 1
    created = await board.create(seated=_creator_sits())  # the create, retried
    assert created.version == opened.version and len(board.event_log.envelopes) == appended


async def test_the_board_gives_the_heap_back_after_many_evictions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    trims: list[int] = []
    libc = types.SimpleNamespace(malloc_trim=trims.append)
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    monkeypatch.setattr(holding, "TRIM_AFTER", 2)
    clock = Clock()
    board = Board()
    board.service.matches = Matches(Holding(0.02, clock=clock))  # looked at every 10 ms
    for match_id in ("m-1", "m-2"):
        await board.create(match_id, seated=_creator_sits())
    evicting = asyncio.create_task(board.service.evict_forever())
    try:
        await asyncio.sleep(0.05)
        assert not trims  # nothing left yet
        clock.now += 1
        for _ in range(100):
            await asyncio.sleep(0.01)
            if trims:
                break
        assert trims == [0]
        assert all(board.service.matches.get(m) is None for m in ("m-1", "m-2"))
    finally:
        evicting.cancel()


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
