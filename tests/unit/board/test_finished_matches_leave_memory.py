"""Finished matches leave the stream writers' memory but for a bounded keep of recent
ones; ListEvents reads the others back from the log (the offset span the writer kept), so
export and verify see every event. Tests of the read-back turn the keep off."""

from __future__ import annotations

import random

import grpc
import pytest

from services.board.matches import Matches
from services.common import ledger
from services.common.envelope import Cause
from services.common.eventlog import LogUnavailable
from services.common.ledger import EventSourceServicer, StreamWriter
from tabletop.v1 import board_pb2, envelope_pb2, games_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.board.test_board_service import MATCH, Board, play_to_the_end, refused
from tests.unit.fakes import Aborted, context, memory_writer


async def listed(writer: StreamWriter, match_id: str, after: int = 0) -> list[str]:
    """The ids ListEvents answers, checked against ListEventBatches' (the same, in order)."""
    request = envelope_pb2.ListEventsRequest(match_id=match_id, after_sequence=after)
    servicer = EventSourceServicer(writer)
    one_each = [e.event_id async for e in servicer.ListEvents(request, context())]
    batches = [b async for b in servicer.ListEventBatches(request, context())]
    assert [e.event_id for b in batches for e in b.events] == one_each
    assert all(b.events for b in batches)
    return one_each


def cause(command: str) -> Cause:
    return Cause(command, command, "test")


async def test_a_finished_board_match_is_read_back_from_the_log() -> None:
    board = Board()
    board.writer.recent_limit = 0
    last = await play_to_the_end(board, 7)
    assert not board.writer.is_open(MATCH)
    assert board.writer.version(MATCH) == last.version
    assert board.event_log.ranges_read == 0
    logged = [e.event_id for e in board.event_log.envelopes if e.match_id == MATCH]
    assert await listed(board.writer, MATCH) == logged
    assert await listed(board.writer, MATCH, after=3) == logged[3:]
    assert board.event_log.ranges_read == 4  # two listings, each one-each and batched


async def test_an_open_match_is_answered_from_memory() -> None:
    board = Board()
    await board.create()
    await board.submit("c1", (await board.legal())[0])
    assert board.writer.is_open(MATCH)
    assert len(await listed(board.writer, MATCH)) == board.writer.version(MATCH)
    assert board.event_log.ranges_read == 0


async def test_interleaved_matches_read_back_only_their_own_events_in_order() -> None:
    writer, event_log = memory_writer("scoring")
    writer.recent_limit = 0
    for turn in range(3):
        for match_id in ("a", "b", "c"):
            await writer.append(match_id, [pe.MatchEnded(reason=f"{turn}")], cause(f"{turn}"))
    writer.close("b")
    read = await writer.read_events("b")
    assert [(e.match_id, e.sequence) for e in read] == [("b", 1), ("b", 2), ("b", 3)]
    assert [e.event_id for e in read] == [e.event_id for e in event_log.envelopes[1::3]]
    # an append after the close counts and is read back, though it is not held
    await writer.append("b", [pe.MatchEnded(reason="late")], cause("late"))
    assert not writer.is_open("b") and writer.version("b") == 4
    assert [e.sequence for e in await writer.read_events("b", after=2)] == [3, 4]


async def test_a_closed_match_cannot_be_listed_while_the_log_is_down() -> None:
    writer, event_log = memory_writer("scoring")
    writer.recent_limit = 0
    await writer.append("a", [pe.MatchEnded(reason="x")], cause("1"))
    writer.close("a")
    event_log.down = True
    with pytest.raises(LogUnavailable):
        await writer.read_events("a")
    with pytest.raises(Aborted) as aborted:
        await listed(writer, "a")
    assert aborted.value.code == grpc.StatusCode.UNAVAILABLE


async def test_batches_stay_under_their_byte_limit_and_keep_the_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer, _ = memory_writer("scoring")
    for turn in range(40):
        await writer.append("a", [pe.MatchEnded(reason="x" * 100)], cause(f"{turn}"))
    size = (await writer.read_events("a"))[0].ByteSize()
    monkeypatch.setattr(ledger, "LIST_BATCH_BYTES", 10 * size)
    request = envelope_pb2.ListEventsRequest(match_id="a")
    servicer = EventSourceServicer(writer)
    batches = [b async for b in servicer.ListEventBatches(request, context())]
    assert len(batches) > 4
    assert all(b.ByteSize() <= 10 * size for b in batches)
    assert [e.sequence for b in batches for e in b.events] == list(range(1, 41))


async def test_an_unknown_match_lists_nothing() -> None:
    writer, _ = memory_writer("board")
    assert await listed(writer, "nobody") == []


Played = list[tuple[str, games_pb2.GameAction]]


async def finished_board() -> tuple[Board, Played, int]:
    """A board with one finished match, the commands that played it, its created version."""
    board = Board()
    board.writer.recent_limit = 0
    rng = random.Random(7)
    created = (await board.create()).version
    played: Played = []
    for turn in range(10_000):
        legal = await board.legal()
        played.append((f"c{turn}", legal[rng.randrange(len(legal))]))
        if (await board.submit(*played[-1])).finished:
            return board, played, created
    raise AssertionError("no end")


async def test_a_finished_match_leaves_the_board_and_still_answers_as_before() -> None:
    board, played, created = await finished_board()
    assert MATCH not in {m.match_id for m in board.service.matches}
    last_id, last_action = played[-1]
    retried = await board.submit(last_id, last_action)  # reloaded from the log
    assert retried.duplicate and retried.finished
    assert retried.version == board.writer.version(MATCH)
    first_id, first_action = played[0]
    assert (await board.submit(first_id, first_action)).duplicate
    assert await refused(board.submit("late", games_pb2.GameAction())) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "MATCH_OVER",
    )
    reply = await board.service.GetLegalActions(
        board_pb2.GetLegalActionsRequest(match_id=MATCH, player="ann"), context()
    )
    assert reply.version == board.writer.version(MATCH) and not reply.actions
    assert (await board.create()).version == created  # a retried create: the first answer


async def test_a_restarted_board_keeps_only_active_matches_and_reloads_finished_ones() -> None:
    board, played, _ = await finished_board()
    await board.create("m-2")
    restarted = Board()
    restarted.writer.recent_limit = 0
    restarted.event_log.envelopes = list(board.event_log.envelopes)
    restarted.service.begin_recovery()
    await restarted.writer.restore(restarted.event_log.records(), restarted.service.apply)
    restarted.service.end_recovery()
    assert [m.match_id for m in restarted.service.matches] == ["m-2"]
    assert restarted.writer.closed() == [MATCH]
    assert restarted.writer.is_open("m-2")
    again = await restarted.submit(*played[-1])
    assert again.duplicate and again.version == board.writer.version(MATCH)
    assert await listed(restarted.writer, MATCH) == await listed(board.writer, MATCH)


async def test_a_finished_match_is_unavailable_while_the_log_cannot_be_read() -> None:
    board, played, _ = await finished_board()
    board.service.matches = Matches()  # nothing reloaded is kept
    board.event_log.down = True
    assert await refused(board.submit(*played[-1])) == (
        grpc.StatusCode.UNAVAILABLE,
        "LOG_UNAVAILABLE",
    )


async def test_a_recently_finished_match_is_answered_from_the_keep() -> None:
    board = Board()
    await play_to_the_end(board, 7)
    assert not board.writer.is_open(MATCH)
    logged = [e.event_id for e in board.event_log.envelopes if e.match_id == MATCH]
    board.event_log.down = True  # the keep holds committed events: the log is not asked
    assert await listed(board.writer, MATCH) == logged
    assert await listed(board.writer, MATCH, after=3) == logged[3:]
    assert board.event_log.ranges_read == 0


async def test_the_keep_holds_its_bytes_at_most_the_least_recently_read_leaving_first() -> None:
    writer, event_log = memory_writer("scoring")
    for match_id in ("a", "b", "c"):
        await writer.append(match_id, [pe.MatchEnded(reason="x" * 200)], cause(match_id))
    size = (await writer.read_events("a"))[0].ByteSize()
    writer.recent_limit = 2 * size
    writer.close("a")
    writer.close("b")
    assert [e.match_id for e in await writer.read_events("a")] == ["a"]  # kept; a read last
    writer.close("c")  # over the bound: b leaves
    assert event_log.ranges_read == 0
    assert [e.match_id for e in await writer.read_events("b")] == ["b"]  # from the log
    assert event_log.ranges_read == 1
    await writer.read_events("c")  # kept still; b, read back, is kept again and a left
    await writer.read_events("b")
    assert event_log.ranges_read == 1
    await writer.read_events("a")
    assert event_log.ranges_read == 2


async def test_an_append_to_a_closed_match_drops_its_kept_copy() -> None:
    writer, event_log = memory_writer("scoring")
    await writer.append("b", [pe.MatchEnded(reason="1")], cause("1"))
    writer.close("b")
    await writer.append("b", [pe.MatchEnded(reason="late")], cause("late"))
    assert [e.sequence for e in await writer.read_events("b")] == [1, 2]
    assert event_log.ranges_read == 1
