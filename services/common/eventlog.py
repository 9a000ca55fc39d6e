"""The event log over Kafka (aiokafka): append atomically, read a stream back, tail streams.

Producers use acks=all and idempotence; a writer given a transactional id appends each
command's events in one Kafka transaction, and a newer instance with the same id fences a
zombie. Readers use read_committed so an aborted append is never seen.

One append is one Kafka record: a ``tabletop.v1.EventBatch`` of the envelopes of one
command (one match, so one partition), marked by its ``content-type`` header, so every
reader pays Kafka's and its framework's per-record cost once per command rather than once
per event. An append whose events outgrow a record takes a few, in the same transaction.
Records without the header hold a single ``EventEnvelope`` (logs written before batching)
and still read.

Every wait on Kafka has a deadline. An append that fails or times out has an unknown
outcome (the commit may have landed while its answer was lost): the log then re-creates
its producer before the next append, which fences the old one and settles its open
transaction, so the caller can read the partition back and learn what really committed
(``read_tail``; ``services.common.ledger`` does that).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections import OrderedDict
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import MessageSizeTooLargeError, ProducerFenced, TopicAlreadyExistsError
from aiokafka.partitioner import DefaultPartitioner
from aiokafka.producer import sender as _aiokafka_sender

from services.common.kafka_access import KafkaAccess
from services.common.logging import get_logger
from services.common.metrics import TRANSACTION_BATCHES
from services.common.topics import TopicSpec
from tabletop.v1 import envelope_pb2

log = get_logger(__name__)

# A transaction begun right after a commit is refused with CONCURRENT_TRANSACTIONS until
# the broker has written the previous commit's markers (a millisecond or two); aiokafka
# then sleeps a fixed 20 ms before retrying, which capped a board shard at ~45 commands/s
# for one match (measured: tests/bench, experiment txn-backoff). Retry after 2 ms instead.
TXN_RETRY_BACKOFF_S = 0.002
vars(_aiokafka_sender)["BACKOFF_OVERRIDE"] = TXN_RETRY_BACKOFF_S

#: longest wait for one append (or a producer restart, or a tail read) before giving up
KAFKA_TIMEOUT_S = 10.0
#: Kafka's default message.max.bytes is 1 MiB (1048588) for a whole record batch; a record
#: stays well under it so a batch of one never reaches the broker's limit
MAX_RECORD_BYTES = 1_000_000


class LogUnavailable(Exception):
    """An append did not happen, or its outcome is unknown: a retry can fix it."""

    def __init__(self, message: str, *, outcome_unknown: bool) -> None:
        super().__init__(message)
        self.outcome_unknown = outcome_unknown


class RecordTooLarge(ValueError):
    """An envelope exceeds the record size bound: nothing was appended, and a retry of the
    same thing never succeeds."""


#: the content-type header of a record that holds one append (an EventBatch)
CONTENT_TYPE = "content-type"
BATCH_CONTENT_TYPE = b"application/x-protobuf;messageType=tabletop.v1.EventBatch"
BATCH_HEADERS = [(CONTENT_TYPE, BATCH_CONTENT_TYPE)]

#: what a send resolves to (aiokafka's RecordMetadata: partition, offset, ...)
Written = list[Any]
#: a record as sent: (key, value, partition)
Record = tuple[bytes, bytes, int]


def encode_append(
    envelopes: Sequence[envelope_pb2.EventEnvelope], max_bytes: int = MAX_RECORD_BYTES
) -> list[bytes]:
    """The values of the records that hold an append: one, unless its events together
    exceed ``max_bytes`` (then as few as fit; the transaction keeps them atomic). Raises
    RecordTooLarge for an event that does not fit a record on its own."""
    value = envelope_pb2.EventBatch(events=envelopes).SerializeToString()
    if len(value) <= max_bytes:
        return [value]
    values: list[bytes] = []
    part: list[envelope_pb2.EventEnvelope] = []
    size = 0
    for envelope in envelopes:
        # an element of the batch: its bytes, a tag and a length of up to 5 bytes
        length = envelope.ByteSize() + 6
        if length > max_bytes:
            raise RecordTooLarge(
                f"a {envelope.event_type} event of {length} bytes exceeds the "
                f"{max_bytes}-byte record limit"
            )
        if part and size + length > max_bytes:
            values.append(envelope_pb2.EventBatch(events=part).SerializeToString())
            part, size = [], 0
        part.append(envelope)
        size += length
    values.append(envelope_pb2.EventBatch(events=part).SerializeToString())
    return values


def envelopes_of(
    value: bytes, headers: Sequence[tuple[str, bytes]] | Mapping[str, bytes] | None
) -> list[envelope_pb2.EventEnvelope]:
    """The envelopes a record of an event topic holds, in order: an append's batch, or
    one envelope (a record written before appends were batched)."""
    if headers and (
        headers.get(CONTENT_TYPE) == BATCH_CONTENT_TYPE
        if isinstance(headers, Mapping)
        else (CONTENT_TYPE, BATCH_CONTENT_TYPE) in headers
    ):
        return list(envelope_pb2.EventBatch.FromString(value).events)
    return [envelope_pb2.EventEnvelope.FromString(value)]


#: one append (its records) waiting for the next transaction
Batch = tuple[list[Record], "asyncio.Future[Written]"]


@dataclass(frozen=True)
class LogRecord:
    partition: int
    offset: int
    envelope: envelope_pb2.EventEnvelope


#: a paced log counts the matches that appended within this many intervals as the ones
#: whose next append a transaction may wait for (a bot's next command comes within ~2,
#: a person's after seconds: the transaction does not wait for it)
RECENT_INTERVALS = 10


class EventLog:
    """Appends envelopes to one stream's topic, keyed by match id.

    Transactional appends are group-committed: a Kafka producer runs one transaction at a
    time, so the batches of concurrent commands that arrive while a transaction is in
    flight share the next one. Each batch stays atomic (all of it is in one committed
    transaction or none of it is), and concurrency costs one commit instead of many.
    """

    def __init__(
        self,
        kafka: KafkaAccess,
        topic: str,
        transactional_id: str | None = None,
        timeout: float = KAFKA_TIMEOUT_S,
        max_record_bytes: int = MAX_RECORD_BYTES,
        commit_interval_ms: float = 0.0,
    ) -> None:
        self.topic = topic
        #: transactional: the least time between the starts of two transactions
        self.commit_interval = commit_interval_ms / 1000
        self.timeout = timeout
        self.max_record_bytes = max_record_bytes
        self._kafka = kafka
        self._transactional_id = transactional_id
        self._producer = self._new_producer()
        self._pending: list[Batch] = []
        self._wake = asyncio.Event()
        #: paced: match → when it last appended, for those within ``RECENT_INTERVALS``
        #: intervals (oldest first)
        self._recent: OrderedDict[str, float] = OrderedDict()
        #: paced: set by each append, to wake a transaction that waits (``_all_in``)
        self._arrived = asyncio.Event()
        self._committer: asyncio.Task[None] | None = None
        self._partitions: list[int] = []
        #: set by a failure: the producer is re-created (fencing the old one) before reuse
        self._suspect = False
        #: another instance took this transactional id over: this one must never write
        #: again (re-creating the producer would fence the rightful owner in turn)
        self.fenced = False
        self._reset_lock = asyncio.Lock()
        self._readers = RangeReaders(kafka)

    def _new_producer(self) -> AIOKafkaProducer:
        transactional = self._transactional_id is not None
        return AIOKafkaProducer(
            **self._kafka.client_options(),
            acks="all",
            enable_idempotence=True,
            transactional_id=self._transactional_id,
            # Transactional: records wait in the batch until the commit flushes them (the
            # commit never waits for the linger), so one command is one produce request.
            linger_ms=20 if transactional else 0,
            request_timeout_ms=int(self.timeout * 1000),
            max_request_size=self.max_record_bytes + 64 * 1024,
        )

    async def start(self) -> None:
        await self._producer.start()
        self._partitions = sorted(await self._producer.partitions_for(self.topic))
        if self._transactional_id is not None:
            self._committer = asyncio.create_task(self._commit_forever())

    async def stop(self) -> None:
        await self._halt(RuntimeError("the event log stopped before this append"))
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._producer.stop(), self.timeout)
        await self._readers.close()

    async def _halt(self, error: BaseException) -> None:
        if self._committer is not None:
            # Cancelling mid-transaction makes aiokafka try to abort it, which can hang
            # while the broker is away; the replacement producer settles it anyway.
            self._committer.cancel()
            await asyncio.wait({self._committer}, timeout=1.0)
            self._committer = None
        for _, done in self._pending:
            if not done.done():
                done.set_exception(error)
        self._pending = []

    def partition_of(self, match_id: str) -> int:
        """The partition holding ``match_id`` (the producer's own key hashing)."""
        return _partition_of(match_id, tuple(self._partitions))

    async def fence(self) -> None:
        """After a failure: replace the producer. A transactional replacement fences the
        old one and settles its transaction (committed or aborted for good) before it
        returns, so a read of the log afterwards tells what became of it."""
        async with self._reset_lock:
            self._refuse_if_fenced()
            if not self._suspect:
                return
            await self._halt(LogUnavailable("the producer was replaced", outcome_unknown=True))
            old, self._producer = self._producer, self._new_producer()
            await _abandon(old)
            try:
                await asyncio.wait_for(self._producer.start(), self.timeout)
            except Exception as error:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(self._producer.stop(), 1.0)
                raise LogUnavailable(
                    f"Kafka is unreachable ({type(error).__name__})", outcome_unknown=True
                ) from error
            if self._transactional_id is not None:
                self._committer = asyncio.create_task(self._commit_forever())
            self._suspect = False
            log.info("producer_replaced", topic=self.topic)

    def distrust(self) -> None:
        """An append was abandoned midway (its caller was cancelled): it may still commit,
        so replace the producer before the next append (which settles its fate)."""
        self._suspect = True

    def _refuse_if_fenced(self) -> None:
        if self.fenced:
            raise LogUnavailable(
                "another instance of this writer took over; this one no longer writes",
                outcome_unknown=True,
            )

    def _failed(self, error: BaseException) -> None:
        self._suspect = True
        if isinstance(error, ProducerFenced) and not self.fenced:
            self.fenced = True
            log.error("producer_fenced", topic=self.topic)

    async def append(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> dict[int, int]:
        """Durably append ``envelopes`` of one match (all or none): one record, or a few
        in one transaction when they outgrow a record; returns the partition written and
        the offset after the last record.

        Raises RecordTooLarge before anything is sent, and LogUnavailable when the append
        failed or did not finish within the deadline (its outcome is then unknown).
        """
        if not envelopes:
            return {}
        match_id = envelopes[0].match_id
        if any(e.match_id != match_id for e in envelopes):
            raise ValueError("an append holds the events of one match")
        values = encode_append(envelopes, self.max_record_bytes)  # serialized once
        if len(values) > 1 and self._transactional_id is None:
            raise RecordTooLarge(
                f"{len(envelopes)} events take more than the {self.max_record_bytes}-byte "
                "record limit, and only a transactional log appends several records at once"
            )
        key, partition = match_id.encode(), self.partition_of(match_id)
        records: list[Record] = [(key, value, partition) for value in values]
        self._refuse_if_fenced()
        if self._suspect:
            await self.fence()
        try:
            if self._transactional_id is not None:
                done: asyncio.Future[Written] = asyncio.get_running_loop().create_future()
                self._pending.append((records, done))
                if self.commit_interval:
                    self._recent[match_id] = asyncio.get_running_loop().time()
                    self._recent.move_to_end(match_id)
                    self._arrived.set()
                self._wake.set()
                written = await asyncio.wait_for(asyncio.shield(done), self.timeout)
            else:
                written = [await asyncio.wait_for(await self._send(records[0]), self.timeout)]
        except MessageSizeTooLargeError as error:
            self._failed(error)
            raise RecordTooLarge(str(error)) from error
        except LogUnavailable as error:
            self._failed(error.__cause__ or error)
            raise
        except Exception as error:
            self._failed(error)
            raise LogUnavailable(
                f"the append failed ({type(error).__name__ or 'timeout'})", outcome_unknown=True
            ) from error
        return {partition: max(metadata.offset for metadata in written) + 1}

    async def _send(self, record: Record) -> asyncio.Future[object]:
        key, value, partition = record
        # the partition is given: aiokafka would hash the key again (murmur2 in Python)
        future: asyncio.Future[object] = await self._producer.send(
            self.topic, value=value, key=key, partition=partition, headers=BATCH_HEADERS
        )
        return future

    async def _commit_forever(self) -> None:
        loop = asyncio.get_running_loop()
        began = -self.commit_interval
        while True:
            await self._wake.wait()
            self._wake.clear()
            if not self._pending:  # taken by the transaction that was open when it arrived
                continue
            batches: list[Batch] = []
            sent: list[list[asyncio.Future[object]]] = []
            try:
                async with self._producer.transaction():
                    # Paced: a transaction costs the broker and this client ~2-4 ms of CPU
                    # whatever it carries, so one begun within the interval after the last
                    # waits for the rest of it, gathering what arrives meanwhile, unless
                    # every match that appended of late is waiting in it already
                    # (``_all_in``). An idle log commits at once. The transaction is open
                    # while it gathers: the partitions it will write are registered with
                    # the coordinator (AddPartitionsToTxn, a round trip and a write of the
                    # broker's transaction log) and each append's records go to the
                    # producer as they arrive, so the end of the interval leaves only the
                    # produce request and the commit to wait for.
                    self._expect(self._recent)
                    await self._gather(batches, sent)
                    pause = began + self.commit_interval - loop.time()
                    while pause > 0 and not self._all_in(loop.time(), len(batches)):
                        self._arrived.clear()
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._arrived.wait(), pause)
                        await self._gather(batches, sent)
                        pause = began + self.commit_interval - loop.time()
                    began = loop.time()
                    await self._gather(batches, sent)
                    TRANSACTION_BATCHES.labels(self.topic).observe(len(batches))
            except Exception as error:  # every batch of the failed transaction fails
                self._failed(error)
                for _, done in batches:
                    if not done.done():
                        done.set_exception(error)
                continue
            for (_, done), futures in zip(batches, sent, strict=True):
                if not done.done():  # the commit flushed every record: all resolved
                    done.set_result([future.result() for future in futures])

    async def _gather(self, batches: list[Batch], sent: list[list[asyncio.Future[object]]]) -> None:
        """Send the appends waiting into the open transaction (they are its batches now)."""
        while self._pending:
            taken, self._pending = self._pending, []
            for batch in taken:
                batches.append(batch)
                sent.append([await self._send(record) for record in batch[0]])

    def _expect(self, matches: Mapping[str, float]) -> None:
        """Add the partitions of ``matches`` to the open transaction ahead of their records
        (aiokafka adds a partition with its first record; its transaction manager is
        what the producer itself calls, version pinned in pyproject.toml)."""
        if not self.commit_interval:
            return
        manager = self._producer._txn_manager
        for partition in {self.partition_of(match_id) for match_id in matches}:
            manager.maybe_add_partition_to_txn(TopicPartition(self.topic, partition))

    def finished(self, match_id: str) -> None:
        """``match_id`` appends no more commands: no transaction waits for it."""
        self._recent.pop(match_id, None)

    def _all_in(self, now: float, gathered: int) -> bool:
        """Whether each match that appended within the last ``RECENT_INTERVALS`` intervals
        has an append waiting (``gathered`` of them in the open transaction already). A
        match appends one command at a time (its lock, and its player waits for the
        answer), so then no append is on its way that waiting could gather, only one from a
        match idle until now: one match alone paid the whole interval on every command (20
        ms of its ~22), where many share it."""
        recent, horizon = self._recent, now - RECENT_INTERVALS * self.commit_interval
        while recent:
            match_id, at = next(iter(recent.items()))
            if at >= horizon:
                break
            del recent[match_id]
        return len(recent) <= gathered + len(self._pending)

    async def read_tail(self, partition: int, start: int) -> list[LogRecord]:
        """Every committed record of ``partition`` from offset ``start`` to the end as of
        now (the last stable offset), within the deadline."""
        try:
            return await asyncio.wait_for(
                _read_partition(self._kafka, self.topic, partition, start), self.timeout
            )
        except Exception as error:
            raise LogUnavailable(
                f"the log could not be read back ({type(error).__name__})", outcome_unknown=True
            ) from error

    async def read_range(
        self, partition: int, start: int, end: int, key: bytes | None = None
    ) -> list[LogRecord]:
        """The committed records of ``partition`` in offsets [start, end), within the
        deadline (a finished match's events, read back on demand); with ``key``, only the
        records of that key (the match id): the others in the range are never parsed."""
        try:
            return await asyncio.wait_for(
                self._readers.read(self.topic, partition, start, end, key), self.timeout
            )
        except Exception as error:
            raise LogUnavailable(
                f"the log could not be read ({type(error).__name__})", outcome_unknown=True
            ) from error


@functools.lru_cache(maxsize=16_384)
def _partition_of(match_id: str, partitions: tuple[int, ...]) -> int:
    """The producer's key hashing (murmur2 in Python), once per match rather than per record."""
    return int(DefaultPartitioner()(match_id.encode(), list(partitions), list(partitions)))


async def _abandon(producer: AIOKafkaProducer) -> None:
    """Stop a producer for good, even while the broker is away: its stop() would flush
    pending batches, which may still be retrying, and deliver them later (after the log
    was read back) unless its sender is cancelled too."""
    with contextlib.suppress(Exception):
        await asyncio.wait_for(producer.stop(), 1.0)
    sender = getattr(producer, "_sender", None)
    task = getattr(sender, "sender_task", None)
    if task is not None and not task.done():
        task.cancel()
        await asyncio.wait({task}, timeout=1.0)
    with contextlib.suppress(Exception):
        await asyncio.wait_for(producer.client.close(), 1.0)


def _range_consumer(kafka: KafkaAccess) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        **kafka.client_options(),
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )


async def _read_partition(
    kafka: KafkaAccess, topic: str, partition: int, start: int, until: int | None = None
) -> list[LogRecord]:
    """A read on a consumer of its own: the read-back after an unknown outcome, which
    must not depend on a consumer that lived through the failure."""
    consumer = _range_consumer(kafka)
    await consumer.start()
    try:
        return await _read_with(consumer, topic, partition, start, until, None)
    finally:
        await consumer.stop()


async def _read_with(
    consumer: AIOKafkaConsumer,
    topic: str,
    partition: int,
    start: int,
    until: int | None,
    key: bytes | None,
) -> list[LogRecord]:
    """The committed records of ``partition`` from ``start`` to ``until`` (None: the end as
    of now), of ``key`` only if given. The partition is left paused, so a kept consumer
    fetches nothing meanwhile."""
    tp = TopicPartition(topic, partition)
    end = (await consumer.end_offsets([tp]))[tp]
    while until is not None and end < until:
        # Another writer's transaction still open below ``until`` holds the last stable
        # offset back (read_committed); it ends within a moment.
        await asyncio.sleep(0.05)
        end = (await consumer.end_offsets([tp]))[tp]
    if until is not None:
        end = until
    records: list[LogRecord] = []
    if end <= start:
        return records
    # no await from here to the fetch: the fetcher starts at ``start``
    if consumer.assignment() != {tp}:
        consumer.assign([tp])
    consumer.seek(tp, start)
    consumer.resume(tp)
    try:
        while await consumer.position(tp) < end:
            batches = await consumer.getmany(tp, timeout_ms=200)
            for record in batches.get(tp, []):
                if record.offset >= end:
                    return records
                if key is not None and record.key != key:
                    continue  # another match's record in the same span
                records.extend(
                    LogRecord(partition, record.offset, envelope)
                    for envelope in envelopes_of(record.value, record.headers)
                )
        return records
    finally:
        consumer.pause(tp)


class RangeReaders:
    """Started consumers kept for reads of finished matches (ReplayMatch, ExportMatch, a
    late command): starting one costs ~4 ms of CPU and ~6 ms before its first fetch, more
    than reading a match. One read at a time per consumer, up to ``keep`` kept idle; a
    consumer whose read failed or was cancelled is stopped, not kept."""

    def __init__(self, kafka: KafkaAccess, keep: int = 4) -> None:
        self._kafka = kafka
        self._keep = keep
        self._idle: list[AIOKafkaConsumer] = []
        self._stopping: set[asyncio.Task[None]] = set()

    async def read(
        self, topic: str, partition: int, start: int, until: int, key: bytes | None
    ) -> list[LogRecord]:
        if self._idle:
            consumer = self._idle.pop()
        else:
            consumer = _range_consumer(self._kafka)
            await consumer.start()
        try:
            records = await _read_with(consumer, topic, partition, start, until, key)
        except BaseException:
            # its fetcher's state is unknown: stopped apart, so a cancellation stays prompt
            task = asyncio.ensure_future(_stop_quietly(consumer))
            self._stopping.add(task)
            task.add_done_callback(self._stopping.discard)
            raise
        if len(self._idle) < self._keep:
            self._idle.append(consumer)
        else:
            await _stop_quietly(consumer)
        return records

    async def close(self) -> None:
        idle, self._idle = self._idle, []
        for consumer in idle:
            await _stop_quietly(consumer)
        if self._stopping:
            await asyncio.wait(set(self._stopping), timeout=1.0)


async def _stop_quietly(consumer: AIOKafkaConsumer) -> None:
    with contextlib.suppress(Exception):
        await asyncio.wait_for(consumer.stop(), 1.0)


async def read_stream(
    kafka: KafkaAccess, topics: Sequence[str]
) -> AsyncIterator[envelope_pb2.EventEnvelope]:
    """Every committed envelope in ``topics`` from the beginning to the end as of now."""
    async for record in read_records(kafka, topics):
        yield record.envelope


async def read_records(
    kafka: KafkaAccess, topics: Sequence[str], starts: dict[int, int] | None = None
) -> AsyncIterator[LogRecord]:
    """Every committed record in ``topics`` from the beginning (or, for a partition in
    ``starts``, from the offset given: the tail after a snapshot) to the end as of now."""
    consumer = AIOKafkaConsumer(
        **kafka.client_options(),
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        partitions = [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(await partitions_of(consumer, topic))
        ]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        for tp in partitions:
            if starts and tp.partition in starts:
                consumer.seek(tp, starts[tp.partition])
        ends = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if ends[tp] > (starts or {}).get(tp.partition, 0)}
        while pending:
            batches = await consumer.getmany(*pending, timeout_ms=500)
            for tp, records in batches.items():
                for record in records:
                    for envelope in envelopes_of(record.value, record.headers):
                        yield LogRecord(tp.partition, record.offset, envelope)
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()


async def partitions_of(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    for _ in range(50):
        partitions = consumer.partitions_for_topic(topic)
        if partitions:
            return set(partitions)
        await consumer._client.force_metadata_update()
        await asyncio.sleep(0.1)
    raise RuntimeError(f"topic {topic!r} does not exist; create the topics first")


class Tail:
    """Follows topics in a consumer group from the committed offsets (or the beginning)."""

    def __init__(
        self,
        kafka: KafkaAccess,
        topics: Sequence[str],
        group_id: str | None,
        isolation_level: str = "read_committed",
    ) -> None:
        self._consumer = AIOKafkaConsumer(
            *topics,
            **kafka.client_options(),
            group_id=group_id,
            enable_auto_commit=group_id is not None,
            auto_offset_reset="earliest",
            isolation_level=isolation_level,
        )

    async def start(self) -> None:
        await self._consumer.start()

    async def stop(self) -> None:
        await self._consumer.stop()

    async def __aiter__(self) -> AsyncIterator[envelope_pb2.EventEnvelope]:
        async for record in self._consumer:
            for envelope in envelopes_of(record.value, record.headers):
                yield envelope

    async def records(self) -> AsyncIterator[tuple[bytes | None, bytes]]:
        """(key, value) of each record."""
        # getmany: aiokafka's per-record iteration (getone) costs more per record
        while True:
            batches = await self._consumer.getmany(timeout_ms=1_000)
            for records in batches.values():
                for record in records:
                    yield record.key, record.value


class Follower:
    """Follows every partition of one topic without a consumer group, from the beginning
    or, for a partition in ``starts``, from the offset given (a reader that keeps its own
    position, in a snapshot)."""

    def __init__(
        self,
        kafka: KafkaAccess,
        topic: str,
        starts: dict[int, int] | None = None,
        fetch_max_wait_ms: int = 500,
        fetch_min_bytes: int = 1,
    ) -> None:
        """A reader that may lag a little can fetch less often: the broker answers a fetch
        once ``fetch_min_bytes`` are there or ``fetch_max_wait_ms`` passed (aiokafka's
        defaults answer as soon as one record is, a fetch request per record or two)."""
        self._topic = topic
        self._starts = dict(starts or {})
        self._consumer = AIOKafkaConsumer(
            **kafka.client_options(),
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            isolation_level="read_committed",
            fetch_max_wait_ms=fetch_max_wait_ms,
            fetch_min_bytes=fetch_min_bytes,
        )

    async def start(self) -> None:
        await self._consumer.start()
        partitions = [
            TopicPartition(self._topic, p)
            for p in sorted(await partitions_of(self._consumer, self._topic))
        ]
        self._consumer.assign(partitions)
        await self._consumer.seek_to_beginning(*partitions)
        for tp in partitions:
            if tp.partition in self._starts:
                self._consumer.seek(tp, self._starts[tp.partition])

    async def stop(self) -> None:
        await self._consumer.stop()

    async def fetches(self) -> AsyncIterator[list[LogRecord]]:
        """The records of each fetch together, each partition's in offset order (never
        empty): a reader can act on a whole fetch at once."""
        while True:
            batches = await self._consumer.getmany(timeout_ms=1000)
            fetched = [
                LogRecord(tp.partition, record.offset, envelope)
                for tp, records in batches.items()
                for record in records
                for envelope in envelopes_of(record.value, record.headers)
            ]
            if fetched:
                yield fetched


async def create_topics(
    kafka: KafkaAccess, specs: Sequence[TopicSpec], replication_factor: int = 1
) -> list[str]:
    """Create the topics that don't exist yet; returns the names created."""
    admin = AIOKafkaAdminClient(**kafka.client_options())
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [s for s in specs if s.name not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(
                    [
                        NewTopic(
                            name=s.name,
                            num_partitions=s.partitions,
                            replication_factor=replication_factor,
                            topic_configs=s.config,
                        )
                        for s in missing
                    ]
                )
        return [s.name for s in missing]
    finally:
        await admin.close()
