"""The projector's lean delivery path reads what aiokafka and Faust would have delivered."""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import faust
from aiokafka.consumer.fetcher import READ_COMMITTED, PartitionRecords
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.structs import TopicPartition
from faust.types import Message
from mode.utils.queues import FlowControlEvent, FlowControlQueue

from services.common.config import Config
from services.projector.app import create_app
from services.projector.delivery import (
    key_partitioner,
    parse_abort_markers_only_when_aborting,
    refetch_what_resuming_clears,
    seek_to_committed_or_beginning,
)

ABORT, COMMIT = 0, 1


@dataclass
class Record:
    offset: int
    key: bytes | None = None
    value: bytes | None = b"v"
    timestamp: int = 0
    timestamp_type: int = 0
    checksum: int | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)


@dataclass
class Batch:
    """A record batch as aiokafka's fetcher reads it (one producer's records, or a
    transaction's control marker)."""

    base_offset: int
    producer_id: int
    records: list[Record]
    is_control_batch: bool = False
    is_transactional: bool = True

    def __post_init__(self) -> None:
        self._iter = iter(self.records)

    @property
    def next_offset(self) -> int:
        return self.records[-1].offset + 1

    def __iter__(self) -> Iterator[Record]:
        return iter(self.records)

    def __next__(self) -> Record:
        return next(self._iter)


class Records:
    def __init__(self, batches: list[Batch]) -> None:
        self._batches = list(batches)

    def has_next(self) -> bool:
        return bool(self._batches)

    def next_batch(self) -> Batch:
        return self._batches.pop(0)


def marker(offset: int, producer: int, kind: int) -> Batch:
    key = struct.pack(">HH", 0, kind)
    return Batch(offset, producer, [Record(offset, key=key, value=b"")], is_control_batch=True)


def fetched(batches: list[Batch], aborted: list[tuple[int, int]]) -> list[int]:
    """The offsets aiokafka delivers from one partition's fetch, read_committed."""
    partition = PartitionRecords(
        TopicPartition("board.events", 0),
        Records(batches),
        aborted,
        0,
        None,
        None,
        False,
        READ_COMMITTED,
    )
    return [record.offset for record in partition]


def log() -> list[Batch]:
    # producer 7 commits offsets 0-1, aborts 3-4, commits 6; producer 8 commits 8
    return [
        Batch(0, 7, [Record(0), Record(1)]),
        marker(2, 7, COMMIT),
        Batch(3, 7, [Record(3), Record(4)]),
        marker(5, 7, ABORT),
        Batch(6, 7, [Record(6)]),
        marker(7, 7, COMMIT),
        Batch(8, 8, [Record(8)]),
        marker(9, 8, COMMIT),
    ]


def test_aborted_transactions_are_skipped_and_later_ones_read_with_markers_parsed_lazily() -> None:
    # Given the projector's lazier abort-marker check (applied once however often asked)
    parse_abort_markers_only_when_aborting()
    parse_abort_markers_only_when_aborting()
    # When a fetch holds an aborted transaction of producer 7 (from offset 3)
    # Then its records are skipped and the transactions after its marker are read
    assert fetched(log(), aborted=[(7, 3)]) == [0, 1, 6, 8]
    # And without aborted transactions every record is read
    assert fetched(log(), aborted=[]) == [0, 1, 3, 4, 6, 8]


def test_keys_go_to_the_partitions_aiokafka_would_choose() -> None:
    partitions = [0, 1, 2]
    for i in range(200):
        key = f"match-{i}".encode()
        expected: Any = DefaultPartitioner()(key, partitions, partitions)
        assert key_partitioner(key, partitions, partitions) == expected


async def test_a_batch_holds_what_is_queued_and_is_acked_once_handled() -> None:
    # Given the projector's app (flow resumed, as once it is ready), a stream, and five
    # records queued on its channel (the last fetched before a rebalance: another worker
    # may own it now)
    app: Any = create_app(Config.from_env("projector"))
    app.flow_control.resume()
    channel: Any = app.channel()
    stream = app.stream(channel)
    assert isinstance(stream, faust.Stream) and type(stream).__name__ == "BatchStream"
    messages = []
    for offset in range(5):
        message = Message("board.events", 0, offset, 0.0, 0, None, b"k", b"v", None)
        message.generation_id = app.consumer_generation_id if offset < 4 else -1
        message.refcount = 1
        messages.append(message)
        await channel.put(app.create_event(b"k", b"v", None, message))
    # When the agent takes batches of at most three
    batches: list[list[int]] = []
    taken = stream.take_events(3, within=0)
    async for events in taken:
        # Then nothing of a batch is acked before the body has handled it
        assert not any(event.message.acked for event in events)
        batches.append([event.message.offset for event in events])
        if sum(map(len, batches)) >= 4:
            break
    await taken.aclose()
    # And the batches hold what was queued, in order, without the stale record
    assert batches == [[0, 1, 2], [3]]
    # And every record taken was acked, the stale one too (it is another worker's now)
    assert all(m.acked for m in messages)


async def test_a_resume_that_drops_queued_events_asks_for_them_again() -> None:
    flow = FlowControlEvent(initially_suspended=False)
    channel: FlowControlQueue[str] = FlowControlQueue(flow_control=flow, clear_on_resume=True)
    asked: list[bool] = []
    refetch_what_resuming_clears(flow, lambda: asked.append(True))
    flow.resume()
    assert asked == []  # nothing queued, nothing lost
    channel.put_nowait("an event fetched while the stream's seek was awaited")
    flow.resume()
    assert channel.empty()  # Faust's resume drops it ...
    assert asked == [True]  # ... so the consumer is told to fetch it again


class SeekingThread:
    """aiokafka's seeks as the consumer thread makes them: ``seek_to_committed`` moves only
    partitions committed above 0."""

    def __init__(
        self, committed: dict[TopicPartition, int | None], positions: dict[TopicPartition, int]
    ) -> None:
        self.committed = committed
        self.positions = positions

    async def seek_to_committed(self) -> dict[TopicPartition, int | None]:
        for tp, offset in self.committed.items():
            if offset and offset > 0:
                self.positions[tp] = offset
        return dict(self.committed)

    async def seek_to_beginning(self, *partitions: TopicPartition) -> None:
        for tp in partitions:
            self.positions[tp] = 0


async def test_a_seek_to_committed_offsets_reads_a_never_committed_partition_again() -> None:
    # Each partition's fetcher is past the records it fetched, which a resume dropped.
    committed_tp, never, at_zero, changelog = (
        TopicPartition("board.events", 0),
        TopicPartition("board.events", 1),
        TopicPartition("board.events", 2),
        TopicPartition("match_states-changelog", 1),
    )
    thread = SeekingThread(
        committed={committed_tp: 7, never: None, at_zero: 0, changelog: None},
        positions={committed_tp: 12, never: 13, at_zero: 3, changelog: 40},
    )
    committed: Mapping[Any, Any] = await seek_to_committed_or_beginning(
        thread, lambda topic: topic == "board.events"
    )
    # a stream's partitions read again from where they start; a changelog is left to
    # Faust's recovery
    assert thread.positions == {committed_tp: 7, never: 0, at_zero: 0, changelog: 40}
    assert committed == {committed_tp: 7, never: None, at_zero: 0, changelog: None}
