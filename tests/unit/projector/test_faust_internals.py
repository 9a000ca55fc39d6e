"""What services/projector/faust_internals.py relies on in Faust and aiokafka, reach by
reach: each test here fails when an upgrade changes a name, a signature or the effect a
reach depends on (and the lean delivery still delivers what Faust's would have)."""

from __future__ import annotations

import dataclasses
import inspect
import re
import struct
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiokafka
import faust
import pytest
from aiokafka.consumer import consumer as aiokafka_consumer
from aiokafka.consumer.fetcher import READ_COMMITTED, Fetcher, PartitionRecords
from aiokafka.record.default_records import DefaultRecordBatchBuilder
from aiokafka.structs import TopicPartition
from faust.transport.conductor import Conductor
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread
from faust.transport.drivers.aiokafka import Consumer as FaustConsumer
from faust.types import TP, Message
from faust.types.tuples import ack_lock
from mode.utils.queues import FlowControlEvent, FlowControlQueue

from services.common.config import Config
from services.projector.app import create_app
from services.projector.faust_internals import (
    AIOKAFKA_VERSION,
    FAUST_VERSION,
    IDLE_FETCH_WAIT_MS,
    Fetching,
    LeanConductor,
    LeanConsumer,
    adapt_fetches,
    parse_abort_markers_only_when_aborting,
    refetch_what_resuming_clears,
    seek_to_committed_or_beginning,
)

ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture(autouse=True)
def kafka_password(monkeypatch: pytest.MonkeyPatch) -> None:
    """The app is built, never connected: any password does."""
    monkeypatch.setenv("TABLETOP_KAFKA_PASSWORD", "no-broker-here")


def app(**settings: Any) -> Any:
    return create_app(dataclasses.replace(Config.from_env("projector"), **settings))


# -- the versions the reaches were checked against ------------------------------------------
def test_the_installed_libraries_are_the_versions_the_reaches_were_checked_against() -> None:
    assert faust.__version__ == FAUST_VERSION
    assert aiokafka.__version__ == AIOKAFKA_VERSION
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    assert f"faust-streaming=={FAUST_VERSION}" in pinned
    assert f"aiokafka=={AIOKAFKA_VERSION}" in pinned


def test_the_app_runs_on_the_lean_delivery() -> None:
    projector = app()
    assert isinstance(projector.consumer, LeanConsumer)
    assert isinstance(projector.topics, LeanConductor)
    assert type(projector.stream(projector.channel())).__name__ == "BatchStream"


# -- 1 and 2: the consumer Faust builds -----------------------------------------------------
def _signature(function: Any) -> list[str]:
    return list(inspect.signature(function).parameters)


async def test_the_projectors_aiokafka_consumer_reads_committed_with_its_fetch_wait() -> None:
    # Faust's worker consumer, as the projector's consumer thread makes it
    assert _signature(AIOKafkaConsumerThread._create_worker_consumer) == ["self", "transport"]
    projector = app(instance_id="projector-0", projector_fetch_wait_ms=77)
    thread = projector.consumer._thread
    consumer = thread._create_worker_consumer(projector.transport)
    try:
        assert consumer._isolation_level == "read_committed"
        assert consumer._fetch_max_wait_ms == 77
        assert consumer._group_instance_id == "projector-0"  # Faust's own setting
        # the attributes are where aiokafka's constructor keeps those options …
        plain = aiokafka.AIOKafkaConsumer(isolation_level="read_committed", fetch_max_wait_ms=9)
        assert (plain._isolation_level, plain._fetch_max_wait_ms) == ("read_committed", 9)
        await plain.stop()
        # … and start() hands them to the fetcher it makes
        assert await _fetcher_options(consumer) == {
            "isolation_level": "read_committed",
            "fetch_max_wait_ms": 77,
        }
    finally:
        await consumer.stop()


class _Made(Exception):
    pass


async def _fetcher_options(consumer: Any) -> dict[str, Any]:
    """The options ``consumer.start()`` makes its Fetcher with (stopped right there)."""
    made: dict[str, Any] = {}

    def fetcher(*args: Any, **kwargs: Any) -> None:
        made.update(kwargs)
        raise _Made

    async def nothing() -> None:
        return None

    consumer._client.bootstrap = nothing
    consumer._wait_topics = nothing
    original, aiokafka_consumer.Fetcher = aiokafka_consumer.Fetcher, fetcher
    try:
        with pytest.raises(_Made):
            await consumer.start()
    finally:
        aiokafka_consumer.Fetcher = original
    return {key: made[key] for key in ("isolation_level", "fetch_max_wait_ms")}


class _Client:
    def __init__(self, response: Any = None) -> None:
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._metadata_max_age_ms = 300_000
        self.response = response

    async def send(self, node_id: int, request: Any) -> Any:
        return self.response


@dataclass
class _State:
    position: int = 0
    has_valid_position: bool = True
    highwater: int | None = None
    lso: int | None = None
    timestamp: int | None = None


class _Assignment:
    active = True

    def __init__(self) -> None:
        self.state = _State()

    def state_value(self, tp: Any) -> _State:
        return self.state


@dataclass
class _Response:
    topics: list[Any]
    API_VERSION: int = 11


@dataclass
class _Request:
    topics: list[Any]


def _record_batch() -> bytes:
    builder = DefaultRecordBatchBuilder(
        magic=2,
        compression_type=0,
        is_transactional=0,
        producer_id=-1,
        producer_epoch=-1,
        base_sequence=-1,
        batch_size=1 << 16,
    )
    builder.append(0, timestamp=0, key=b"m", value=b"v", headers=[])
    return bytes(builder.build())


async def test_a_fetch_says_whether_it_buffered_records_and_reads_its_wait_per_request() -> None:
    from aiokafka.consumer.subscription_state import SubscriptionState

    assert _signature(Fetcher._proc_fetch_request) == ["self", "assignment", "node_id", "request"]
    # the request a fetch sends is made from these two, read afresh for every request
    source = inspect.getsource(Fetcher._get_actions_per_node)
    assert re.search(r"FetchRequest\(\s*self\._fetch_max_wait_ms,\s*self\._fetch_min_bytes", source)
    request = _Request([("board.events", [(0, 0, 1 << 20)])])
    partition: Any = ("board.events", [(0, 0, 1, 1, 0, [], -1, _record_batch())])
    for response, buffered in ((_Response([]), False), (_Response([partition]), True)):
        fetcher = Fetcher(
            _Client(response), SubscriptionState(), fetch_max_wait_ms=7, fetch_min_bytes=3
        )
        try:
            assert (fetcher._fetch_max_wait_ms, fetcher._fetch_min_bytes) == (7, 3)
            got = await fetcher._proc_fetch_request(_Assignment(), 0, request)
            assert got is buffered
        finally:
            await fetcher.close()


async def test_the_fetch_waits_long_only_after_an_empty_fetch_with_nothing_paused() -> None:
    class Fetched:
        _fetch_max_wait_ms = 1500
        _fetch_min_bytes = 1
        results = [True, False, False]

        async def _proc_fetch_request(self, *args: Any) -> bool:
            return self.results.pop(0)

    fetcher: Any = Fetched()
    paused = [False, True]  # asked after an empty fetch only
    adapt_fetches(fetcher, Fetching(max_wait_ms=100, min_bytes=65536), lambda: paused.pop(0))
    assert (fetcher._fetch_max_wait_ms, fetcher._fetch_min_bytes) == (100, 65536)
    assert await fetcher._proc_fetch_request() is True  # events flow
    assert (fetcher._fetch_max_wait_ms, fetcher._fetch_min_bytes) == (100, 65536)
    assert await fetcher._proc_fetch_request() is False  # nothing, nothing paused
    assert (fetcher._fetch_max_wait_ms, fetcher._fetch_min_bytes) == (IDLE_FETCH_WAIT_MS, 1)
    assert await fetcher._proc_fetch_request() is False  # nothing, but a partition paused
    assert (fetcher._fetch_max_wait_ms, fetcher._fetch_min_bytes) == (100, 65536)


# -- 3: delivery without per-message tasks --------------------------------------------------
def test_the_consumer_overrides_what_faust_defines_with_the_same_signatures() -> None:
    for name in (
        "_new_consumer_thread",
        "_new_offset",
        "_add_gap",
        "getmany",
        "_drain_messages",
        "seek_to_committed",
    ):
        assert _signature(getattr(LeanConsumer, name)) == _signature(
            getattr(FaustConsumer, name)
        ), name


def test_faust_keeps_the_state_the_lean_delivery_reads_and_writes() -> None:
    projector = app()
    consumer = projector.consumer
    for name in (
        "_acked",
        "_acked_index",
        "_committed_offset",
        "_unacked_messages",
        "_waiting_for_ack",
        "_read_offset",
        "_commit_every",
        "_n_acked",
        "_buffered_partitions",
        "_stopped",
        "_thread",
        "suspend_flow",
        "diag",
    ):
        assert hasattr(consumer, name), name
    for name in ("_wait_next_records", "_to_message", "perform_seek", "callback", "wait_first"):
        assert callable(getattr(consumer, name)), name
    assert callable(consumer._thread.seek_to_beginning)
    conductor = projector.topics
    assert isinstance(conductor._tp_index, Mapping)
    assert conductor._tp_to_callback_lock.locked() is False
    assert "acking_topics" in vars(type(conductor)) or hasattr(conductor, "acking_topics")
    stream = projector.stream(projector.channel())
    for name in ("_finalized", "events_total", "current_event"):
        assert hasattr(stream, name), name
    assert callable(stream.maybe_start) and callable(stream.service_reset)
    message = Message("t", 0, 0, 0.0, 0, None, b"k", b"v", None)
    for name in ("refcount", "acked", "tracked", "generation_id"):
        assert hasattr(message, name), name
    assert hasattr(ack_lock, "acquire")
    assert _signature(FlowControlQueue.put_nowait_enhanced)[:2] == ["self", "value"]
    assert {"on_pressure_high", "on_pressure_drop"} <= set(
        _signature(FlowControlQueue.put_nowait_enhanced)
    )
    assert issubclass(LeanConductor, Conductor)


def consumer() -> Any:
    return app().consumer


async def test_offsets_skipped_by_commit_markers_do_not_stall_commits() -> None:
    # Given three board transactions read: records 0-3, marker 4, records 5-7, marker 8,
    # records 9-10, every record acked
    commits = consumer()
    tp = TP("board.events", 0)
    commits._acked[tp].extend([0, 1, 2, 3, 5, 6, 7, 9, 10])
    # Then the commit goes past all of them, and no further until more are acked
    assert commits._new_offset(tp) == 11
    assert commits._new_offset(tp) is None
    commits._acked[tp].extend([12, 13])
    assert commits._new_offset(tp) == 14


async def test_gaps_are_not_tracked() -> None:
    # Faust's interval tree of skipped offsets is not needed: the stream acks in order
    commits = consumer()
    tp = TP("board.events", 0)
    await commits._add_gap(tp, 4, 5)
    assert not commits._gap[tp]


async def test_a_partition_with_nothing_acked_commits_nothing() -> None:
    assert consumer()._new_offset(TP("board.events", 1)) is None


async def test_a_record_goes_straight_to_the_channels_of_its_partition() -> None:
    # Given the projector's conductor with a raw topic's channel indexed for partition 0
    projector = app()
    projector.flow_control.resume()
    conductor = projector.topics
    topic = projector.topic("board.events", key_serializer="raw", value_serializer="raw")
    conductor.add(topic)
    conductor._tp_index[TP("board.events", 0)] = {topic}
    # When a record of that partition is delivered without waiting
    message = Message("board.events", 0, 7, 0.0, 0, None, b"k", b"v", None)
    assert conductor.deliver_nowait(message)
    # Then its channel holds its event, the bytes as they came, referenced once
    event = topic.queue.get_nowait()
    assert (event.key, event.value, event.message) == (b"k", b"v", message)
    assert message.refcount == 1
    # And a record of a partition no channel reads is left to Faust's path
    assert not conductor.deliver_nowait(Message("other", 0, 1, 0.0, 0, None, b"k", b"v", None))
    # And so is one that a channel decodes (it may fail to: Faust's callback handles that)
    typed = projector.topic("typed", key_type=str, value_serializer="json")
    conductor.add(typed)
    conductor._tp_index[TP("typed", 0)] = {typed}
    assert not conductor.deliver_nowait(Message("typed", 0, 1, 0.0, 0, None, b"k", b"{}", None))
    assert typed.queue.empty()


async def test_a_batch_holds_what_is_queued_and_is_acked_once_handled() -> None:
    # Given the projector's app (flow resumed, as once it is ready), a stream, and five
    # records queued on its channel (the last fetched before a rebalance: another worker
    # may own it now)
    projector = app()
    projector.flow_control.resume()
    channel: Any = projector.channel()
    stream = projector.stream(channel)
    messages = []
    for offset in range(5):
        message = Message("board.events", 0, offset, 0.0, 0, None, b"k", b"v", None)
        message.generation_id = projector.consumer_generation_id if offset < 4 else -1
        message.refcount = 1
        messages.append(message)
        await channel.put(projector.create_event(b"k", b"v", None, message))
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


# -- 4: what a resume of the flow drops ------------------------------------------------------
async def test_a_resume_that_drops_queued_events_asks_for_them_again() -> None:
    flow = FlowControlEvent(initially_suspended=False)
    channel: FlowControlQueue[str] = FlowControlQueue(flow_control=flow, clear_on_resume=True)
    assert channel in flow._queues  # where the wrapped resume looks
    asked: list[bool] = []
    refetch_what_resuming_clears(flow, lambda: asked.append(True))
    flow.resume()
    assert asked == []  # nothing queued, nothing lost
    channel.put_nowait("an event fetched while the stream's seek was awaited")
    flow.resume()
    assert channel.empty()  # Faust's resume drops it ...
    assert asked == [True]  # ... so the consumer is told to fetch it again


async def test_a_seek_to_committed_offsets_reads_a_never_committed_partition_again() -> None:
    # aiokafka's seek_to_committed moves only partitions committed above 0; each
    # partition's fetcher is past the records it fetched, which a resume dropped
    committed_tp, never, at_zero, changelog = (
        TopicPartition("board.events", 0),
        TopicPartition("board.events", 1),
        TopicPartition("board.events", 2),
        TopicPartition("match_states-changelog", 1),
    )
    offsets: dict[Any, int | None] = {committed_tp: 7, never: None, at_zero: 0, changelog: None}
    positions = {committed_tp: 12, never: 13, at_zero: 3, changelog: 40}

    async def seek_to_committed() -> dict[Any, int | None]:
        for tp, offset in offsets.items():
            if offset and offset > 0:
                positions[tp] = offset
        return dict(offsets)

    async def seek_to_beginning(*partitions: Any) -> None:
        for tp in partitions:
            positions[tp] = 0

    committed: Mapping[Any, Any] = await seek_to_committed_or_beginning(
        seek_to_committed, seek_to_beginning, lambda topic: topic == "board.events"
    )
    # a stream's partitions read again from where they start; a changelog is left to
    # Faust's recovery
    assert positions == {committed_tp: 7, never: 0, at_zero: 0, changelog: 40}
    assert committed == offsets


# -- 5: aiokafka's abort markers -------------------------------------------------------------
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


def partition_records(batches: list[Batch], aborted: list[tuple[int, int]]) -> PartitionRecords:
    return PartitionRecords(
        TopicPartition("board.events", 0),
        Records(batches),
        aborted,
        0,
        None,
        None,
        False,
        READ_COMMITTED,
    )


def fetched(batches: list[Batch], aborted: list[tuple[int, int]]) -> list[int]:
    """The offsets aiokafka delivers from one partition's fetch, read_committed."""
    return [record.offset for record in partition_records(batches, aborted)]


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
    # Given aiokafka's check, as the lazier one wraps it
    assert _signature(PartitionRecords._contains_abort_marker) == ["self", "next_batch"]
    assert partition_records([], []).__dict__["_aborted_producers"] == set()
    # When the projector's lazier check is applied (once however often asked)
    parse_abort_markers_only_when_aborting()
    parse_abort_markers_only_when_aborting()
    asked: list[int] = []
    lazier = PartitionRecords._contains_abort_marker

    def counted(self: Any, next_batch: Any) -> bool:
        asked.append(next_batch.base_offset)
        return bool(lazier(self, next_batch))

    PartitionRecords._contains_abort_marker = counted
    try:
        # Then a fetch holding an aborted transaction of producer 7 (from offset 3) skips
        # its records and reads the transactions after its marker
        assert fetched(log(), aborted=[(7, 3)]) == [0, 1, 6, 8]
        # And aiokafka asks about every marker: the check is where it skips
        assert asked == [2, 5, 7, 9]
        # And without aborted transactions every record is read
        assert fetched(log(), aborted=[]) == [0, 1, 3, 4, 6, 8]
    finally:
        PartitionRecords._contains_abort_marker = lazier


def test_the_abort_marker_check_is_applied_by_install() -> None:
    app()
    assert getattr(PartitionRecords._contains_abort_marker, "lean", False)


# -- 6: the partitions of the topics the app writes -----------------------------------------
async def test_a_send_needs_the_partitions_the_producer_learns_before() -> None:
    """Faust chooses a partition from aiokafka's producer metadata, which holds nothing for
    a topic never fetched (the crash reach 6 prevents); ``learn_partitions`` asks the
    producer Faust keeps, through aiokafka's public ``partitions_for``."""
    producer = app().producer
    assert _signature(type(producer)._ensure_producer) == ["self"]
    assert _signature(aiokafka.AIOKafkaProducer.partitions_for) == ["self", "topic"]
    assert "producer._partition(" in inspect.getsource(type(producer).key_partition)
    plain = aiokafka.AIOKafkaProducer()
    try:
        with pytest.raises(TypeError):
            plain._partition("never-fetched", None, None, None, b"key", None)
    finally:
        await plain.stop()
