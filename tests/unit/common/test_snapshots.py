"""Snapshots: chunks and heads on the store, and each stream service restored from its
snapshot plus the tail of its log answering exactly as before the restart."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from functools import partial
from typing import Any, Protocol, cast

import grpc
import pytest
from google.protobuf import message

from services.board.chance import RemoteChance
from services.board.service import BoardService
from services.common.envelope import Cause
from services.common.eventlog import EventLog, LogRecord, LogUnavailable
from services.common.ledger import StreamWriter
from services.common.metrics import LOG_DUPLICATES
from services.common.snapshots import Snapshot, Snapshotter, chunked, pack
from services.decks.service import DecksService
from services.dice.service import DiceService
from services.scoring.service import ScoringService
from tabletop.v1 import (
    board_pb2,
    decks_pb2_grpc,
    dice_pb2,
    dice_pb2_grpc,
    envelope_pb2,
    games_pb2,
    scoring_pb2,
    snapshot_pb2,
)
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.board.test_board_service import MATCH, SECRET, Board, play_to_the_end
from tests.unit.fakes import (
    NO_KAFKA,
    Aborted,
    MemoryEventLog,
    MemorySnapshotStore,
    context,
    memory_writer,
    unavailable,
)
from tests.unit.gateway.test_scoring_and_gateway import board_envelopes, fetched


class Owner(Protocol):
    def apply(self, envelope: Any) -> None: ...

    def snapshot(self) -> list[message.Message]: ...

    def restore(self, snapshot: Snapshot) -> None: ...


def cause(command: str) -> Cause:
    return Cause(command, command, "test")


def spans(count: int, first: int = 0) -> snapshot_pb2.MatchSpans:
    ids = [f"match-{n:06d}" for n in range(first, first + count)]
    return snapshot_pb2.MatchSpans(
        match_ids=ids, versions=[1] * count, firsts=[0] * count, ends=[1] * count
    )


async def save(store: MemorySnapshotStore, writer: StreamWriter, owner: Owner | None) -> None:
    parts = writer.snapshot() + (owner.snapshot() if owner is not None else [])
    await store.save(pack(parts))


async def restart(
    stream: str,
    event_log: MemoryEventLog,
    store: MemorySnapshotStore,
    make_owner: Callable[[StreamWriter], Any],
) -> tuple[StreamWriter, Any]:
    """A new process: the newest snapshot, then the tail of the log after it."""
    writer = StreamWriter(stream, cast(EventLog, event_log), NO_KAFKA)
    owner = make_owner(writer)
    snapshot = await MemorySnapshotStore(store.records).load()
    assert snapshot is not None
    if hasattr(owner, "begin_recovery"):
        owner.begin_recovery()
    owner.restore(snapshot)
    writer.restore_snapshot(snapshot, owner.apply)
    await writer.restore(event_log.records(writer.tail_starts()), owner.apply)
    if hasattr(owner, "end_recovery"):
        owner.end_recovery()
    return writer, owner


class WriterOnly:
    """An owner with no state of its own: what the writer alone restores."""

    def __init__(self, writer: StreamWriter) -> None:
        self.applied: list[str] = []

    def apply(self, envelope: Any) -> None:
        self.applied.append(f"{envelope.match_id}:{envelope.sequence}")

    def snapshot(self) -> list[message.Message]:
        return []

    def restore(self, snapshot: Snapshot) -> None:
        pass


# -- the store ------------------------------------------------------------------------


def test_chunks_keep_the_parts_in_order_and_under_the_limit() -> None:
    parts = pack([spans(n % 7 + 1, n * 10) for n in range(40)])
    limit = 3 * max(p.ByteSize() for p in parts)
    chunks = chunked(parts, limit)
    assert len(chunks) > 1
    assert [p for chunk in chunks for p in chunk] == parts
    assert all(sum(p.ByteSize() for p in chunk) <= limit for chunk in chunks)
    # a part larger than the limit goes alone in its chunk, up to what a record may hold
    assert chunked(parts, limit=10, most=limit) == [[p] for p in parts]
    with pytest.raises(ValueError):
        chunked(parts, limit=10, most=10)


async def test_a_snapshot_reads_back_whole_across_chunks() -> None:
    store = MemorySnapshotStore()
    assert await store.load() is None
    parts = [spans(20_000, first=n * 20_000) for n in range(3)]  # 3 × ~330 kB: 3 chunks
    await store.save(pack(parts))
    assert sum(1 for key, _ in store.records if key != b"0/head") == 3
    loaded = await MemorySnapshotStore(store.records).load()
    assert loaded is not None
    assert loaded.of(snapshot_pb2.MatchSpans) == parts


async def test_a_shard_reads_only_the_snapshots_taken_under_its_shard_count() -> None:
    # Shard 0 of one owns every match; shard 0 of three a third of them. After a rescale a
    # snapshot of the other count would bring (or, the other way, leave out) matches: the
    # shard rebuilds from its stream instead.
    records: list[tuple[bytes, bytes | None]] = []
    await MemorySnapshotStore(records).save(pack([spans(3)]))
    assert await MemorySnapshotStore(records, shard=0, shards=3).load() is None
    await MemorySnapshotStore(records, shard=0, shards=3).save(pack([spans(4)]))
    one = await MemorySnapshotStore(records).load()
    three = await MemorySnapshotStore(records, shard=0, shards=3).load()
    assert one is not None and one.of(snapshot_pb2.MatchSpans) == [spans(3)]
    assert three is not None and three.of(snapshot_pb2.MatchSpans) == [spans(4)]
    assert await MemorySnapshotStore(records, shard=1, shards=3).load() is None


async def test_a_snapshot_whose_writer_died_midway_is_never_read() -> None:
    store = MemorySnapshotStore()
    first = [spans(20_000, first=n * 20_000) for n in range(3)]
    await store.save(pack(first))
    second = [spans(20_000, first=100_000 + n * 20_000) for n in range(3)]
    store.failing_after = 1  # one chunk of the next snapshot is written, then no more
    with pytest.raises(RuntimeError):
        await store.save(pack(second))
    loaded = await MemorySnapshotStore(store.records).load()
    assert loaded is not None and loaded.of(snapshot_pb2.MatchSpans) == first
    # the next snapshot writes the other slot again; a smaller one tombstones the rest
    restarted = MemorySnapshotStore(store.records)
    assert await restarted.load() is not None
    await restarted.save(pack([spans(3)]))
    await restarted.save(pack([spans(4)]))
    await restarted.save(pack([spans(5)]))
    loaded = await MemorySnapshotStore(store.records).load()
    assert loaded is not None and loaded.of(snapshot_pb2.MatchSpans) == [spans(5)]
    latest = dict(store.records)
    assert [k for k, v in latest.items() if v is not None and k != b"0/head"] == [
        b"0/0/0",
        b"0/1/0",
    ]


async def test_the_snapshotter_writes_at_a_clean_stop_only_what_changed() -> None:
    store = MemorySnapshotStore()
    changes = [0]
    taken: list[int] = []

    def take() -> list[message.Message]:
        taken.append(changes[0])
        return [spans(1)]

    snapshotter = Snapshotter(store, "memory", take, lambda: changes[0], 100, 3600)
    snapshotter.start()
    changes[0] = 5
    await snapshotter.stop()
    assert taken == [5]
    snapshotter = Snapshotter(store, "memory", take, lambda: changes[0], 100, 3600)
    await snapshotter.stop()  # never started (the state was not complete): nothing
    assert taken == [5]


# -- the stream writer ----------------------------------------------------------------


async def test_a_writer_restores_from_its_snapshot_and_reads_only_the_tail() -> None:
    writer, event_log = memory_writer("scoring")
    for turn in range(3):
        for match_id in ("a", "b", "c"):
            await writer.append(match_id, [pe.MatchEnded(reason=f"{turn}")], cause(f"{turn}"))
    writer.close("a")
    store = MemorySnapshotStore()
    await save(store, writer, None)
    await writer.append("b", [pe.MatchEnded(reason="after")], cause("after"))
    await writer.append("d", [pe.MatchEnded(reason="new")], cause("new"))

    restored, owner = await restart("scoring", event_log, store, WriterOnly)
    # open matches folded from the snapshot, then only the tail's two events
    assert owner.applied == ["b:1", "b:2", "b:3", "c:1", "c:2", "c:3", "b:4", "d:1"]
    assert restored.changes == 2
    for match_id in "abcd":
        assert restored.version(match_id) == writer.version(match_id)
        assert restored.is_open(match_id) == writer.is_open(match_id)
        assert [e.event_id for e in await restored.read_events(match_id)] == [
            e.event_id for e in await writer.read_events(match_id)
        ]
    # a closed match is read back from its span; appends go on with the next sequence
    assert not restored.is_open("a") and event_log.ranges_read >= 1
    [appended] = await restored.append("c", [pe.MatchEnded(reason="next")], cause("next"))
    assert appended.sequence == 4


async def test_an_open_match_with_an_event_near_the_record_limit_fits_a_snapshot() -> None:
    writer, event_log = memory_writer("scoring")
    big = pe.MatchEnded(reason="x" * 900_000)  # the event log takes up to 1,000,000 bytes
    for turn in range(2):
        await writer.append("big", [big], cause(f"b{turn}"))
        await writer.append("small", [pe.MatchEnded(reason="y")], cause(f"s{turn}"))
    store = MemorySnapshotStore()
    await save(store, writer, None)
    assert max(len(v or b"") for _, v in store.records) < 1_000_000 + 2048

    restored, owner = await restart("scoring", event_log, store, WriterOnly)
    assert owner.applied == ["big:1", "big:2", "small:1", "small:2"]
    assert [e.event_id for e in restored.events("big")] == [
        e.event_id for e in writer.events("big")
    ]


async def test_an_unsettled_append_across_a_snapshot_is_adopted_on_restore() -> None:
    writer, event_log = memory_writer("scoring")

    async def broker_gone() -> None:  # x is written; its answer and the read-back fail
        event_log.down = True

    event_log.while_appending = broker_gone
    event_log.lose_answers = True
    with pytest.raises(LogUnavailable):
        await writer.append("x", [pe.MatchEnded(reason="lost answer")], cause("x1"))
    event_log.lose_answers = event_log.down = False
    await writer.append("y", [pe.MatchEnded(reason="later")], cause("y1"))
    assert writer.version("x") == 0  # unsettled: committed, not known yet
    store = MemorySnapshotStore()
    await save(store, writer, None)

    restored, owner = await restart("scoring", event_log, store, WriterOnly)
    assert restored.version("x") == 1 and owner.applied == ["y:1", "x:1"]
    [next_one] = await restored.append("x", [pe.MatchEnded(reason="next")], cause("x2"))
    assert next_one.sequence == 2 and len(event_log.envelopes) == 3


async def test_an_append_in_flight_while_a_snapshot_is_taken_is_read_back() -> None:
    writer, event_log = memory_writer("scoring")
    store = MemorySnapshotStore()

    async def meanwhile() -> None:
        # x is written but not answered yet; y's append moves the known end past it
        await writer.append("y", [pe.MatchEnded(reason="y")], cause("y1"))
        await save(store, writer, None)

    event_log.while_appending = meanwhile
    await writer.append("x", [pe.MatchEnded(reason="x")], cause("x1"))
    restored, _ = await restart("scoring", event_log, store, WriterOnly)
    assert (restored.version("x"), restored.version("y")) == (1, 1)


# -- dice and decks -------------------------------------------------------------------


async def test_dice_and_decks_answer_a_revealed_match_from_the_snapshot() -> None:
    for make in (DiceService, DecksService):
        writer, event_log = memory_writer("dice")
        service = make(writer, SECRET)
        commit = dice_pb2.CommitRequest(match_id="done", correlation_id="c")
        committed = await service.Commit(commit, context())
        await service.Commit(dice_pb2.CommitRequest(match_id="open", correlation_id="c"), context())
        reveal = dice_pb2.RevealRequest(match_id="done", correlation_id="c")
        revealed = await service.Reveal(reveal, context())
        store = MemorySnapshotStore()
        await save(store, writer, service)
        if isinstance(service, DiceService):
            roll = dice_pb2.RollRequest(match_id="open", count=3, sides=6, request_id="r1")
            rolled = await service.Roll(roll, context())
        logged = len(event_log.envelopes)

        _, again = await restart("dice", event_log, store, partial(make, secret=SECRET))
        assert await again.Commit(commit, context()) == committed
        assert await again.Reveal(reveal, context()) == revealed
        assert len(event_log.envelopes) == logged  # answered, nothing appended
        if isinstance(again, DiceService):
            assert await again.Roll(roll, context()) == rolled  # a roll after the snapshot
            late = dice_pb2.RollRequest(match_id="done", count=1, sides=6, request_id="late")
            with pytest.raises(Aborted) as aborted:
                await again.Roll(late, context())
            assert aborted.value.code == grpc.StatusCode.FAILED_PRECONDITION


# -- board ----------------------------------------------------------------------------


def restarted_board(board: Board) -> Callable[[StreamWriter], BoardService]:
    chance = RemoteChance(
        cast(dice_pb2_grpc.DiceStub, board.dice), cast(decks_pb2_grpc.DecksStub, board.decks)
    )
    return lambda writer: BoardService(writer, chance)


async def reveal_down(request: dice_pb2.RevealRequest, **call: object) -> None:
    raise unavailable()


async def finish(board: Board, seed: int) -> board_pb2.SubmitActionReply:
    rng = random.Random(seed)
    for turn in range(10_000):
        legal = await board.legal()
        reply = await board.submit(f"c{turn}", legal[rng.randrange(len(legal))])
        if reply.finished:
            return reply
    raise AssertionError("no end")


async def test_a_board_keeps_its_pending_reveals_and_finished_matches_in_the_snapshot() -> None:
    board = Board()
    vars(board.dice)["Reveal"] = reveal_down  # the seeds cannot be revealed: outbox
    last = await play_to_the_end(board, 7)
    assert board.service.reveals.pending() == {MATCH}
    store = MemorySnapshotStore()
    await save(store, board.writer, board.service)

    writer, service = await restart("board", board.event_log, store, restarted_board(board))
    assert service.reveals.pending() == {MATCH}
    assert writer.version(MATCH) == last.version and not writer.is_open(MATCH)
    found = await service.find(MATCH)  # finished: read back from its span
    assert found is not None and found.finished and found.version == last.version
    late = board_pb2.SubmitActionRequest(
        match_id=MATCH, player="ann", command_id="late", action=games_pb2.GameAction()
    )
    with pytest.raises(Aborted) as aborted:
        await service.SubmitCommand(late, context())
    assert aborted.value.reason == "MATCH_OVER"


async def test_an_active_match_goes_on_and_one_ending_after_the_snapshot_is_revealed() -> None:
    board = Board()
    await board.create()
    action = (await board.legal())[0]
    first = await board.submit("c-first", action)
    store = MemorySnapshotStore()
    await save(store, board.writer, board.service)
    _, service = await restart("board", board.event_log, store, restarted_board(board))
    # a retried command of the active match gets its first answer, nothing is appended
    logged = len(board.event_log.envelopes)
    retried = board_pb2.SubmitActionRequest(
        match_id=MATCH, player="ann", command_id="c-first", action=action
    )
    again = (await service.SubmitCommand(retried, context())).reply
    assert again.duplicate and again.version == first.version
    assert len(board.event_log.envelopes) == logged

    await finish(board, 3)  # the old process plays on: the match ends after the snapshot
    revealed = board.dice.calls.count("Reveal")
    _, service = await restart("board", board.event_log, store, restarted_board(board))
    assert service.reveals.pending() == {MATCH}
    await service.reveals.drain_once()  # revealed again: an idempotent call
    assert service.reveals.pending() == set()
    assert board.dice.calls.count("Reveal") == revealed + 1


# -- scoring --------------------------------------------------------------------------


async def test_scoring_restores_its_standings_and_follows_on_where_it_stood() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    _, done = board_envelopes(1, "done")
    _, playing = board_envelopes(2, "playing")
    records = [*done, *playing]
    for offset, envelope in enumerate(records[:-3]):  # "playing" has three events to go
        await scoring.on_board_records([LogRecord(0, offset, envelope)])
    store = MemorySnapshotStore()
    await save(store, writer, scoring)
    request = scoring_pb2.GetStandingsRequest(game="crashland")
    before = await scoring.GetStandings(request, context())

    _, restored = await restart("scoring", event_log, store, ScoringService)
    assert restored.position == {0: len(records) - 3}
    assert await restored.GetStandings(request, context()) == before
    for offset in range(restored.position[0], len(records)):
        await restored.on_board_records([LogRecord(0, offset, records[offset])])
    standings = await restored.GetStandings(request, context())
    assert standings.matches == 2
    assert [e.match_id for e in event_log.envelopes] == ["done", "playing"]


async def test_scoring_scores_a_match_whose_end_it_had_folded_before_the_snapshot() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    _, envelopes = board_envelopes(1, "m")
    store = MemorySnapshotStore()

    async def meanwhile() -> None:  # the snapshot is taken while the result is appended
        await save(store, writer, scoring)

    event_log.while_appending = meanwhile
    event_log.lose_answers = True  # ... and that append's answer is lost
    for offset, envelope in enumerate(envelopes):
        with contextlib.suppress(LogUnavailable):
            await scoring.on_board_records([LogRecord(0, offset, envelope)])
    event_log.envelopes.clear()  # it never committed after all
    event_log.lose_answers = False
    _, restored = await restart("scoring", event_log, store, ScoringService)
    await restored.resume()
    assert [e.match_id for e in event_log.envelopes] == ["m"]


async def test_scoring_counts_a_second_event_id_at_a_folded_board_sequence() -> None:
    scoring = ScoringService(memory_writer("scoring")[0])
    _, envelopes = board_envelopes(1, "m")
    await scoring.on_board_records(fetched(envelopes[:3]))
    counted = LOG_DUPLICATES.labels("board")._value.get()
    await scoring.on_board_records(fetched(envelopes[1:2]))  # redelivered: not a duplicate
    assert LOG_DUPLICATES.labels("board")._value.get() == counted
    impostor = envelope_pb2.EventEnvelope()
    impostor.CopyFrom(envelopes[1])
    impostor.event_id = "another"
    await scoring.on_board_records(fetched([impostor]))
    assert LOG_DUPLICATES.labels("board")._value.get() == counted + 1
