"""A service's own event stream: the per-match sequence, open matches in memory, the Kafka log.

Each service is the single writer of its stream for the matches its shard owns. State
changes only after Kafka acknowledged the append (acks=all), so what a service answers
is always durable. On start it rebuilds from its topic.

Bounded memory: the writer holds the envelopes of open matches only. When its owner
closes a match (the board when it ended, dice and decks when the seed is revealed,
scoring once it is scored) the envelopes leave memory; the writer keeps the match's
version and the offset span of its partition that holds its records (a few integers),
and ListEvents reads them back from Kafka within a deadline.

Snapshots (``services.common.snapshots``): ``snapshot`` gives the writer's state as parts
(every partition's known end, the unsettled matches, every match's version and span, the
envelopes of open matches); ``restore_snapshot`` takes it back, and the restart reads only
the tail of the topic from ``tail_starts``.

Exactly once under broker faults: an append whose outcome is unknown (the broker died
mid-commit, an answer was lost, the deadline passed) leaves the match *unsettled*. The
writer then fences its producer and reads the match's partition back (read_committed)
from where it stood before the append: what committed is adopted, so a retry of the same
command returns the first result instead of appending a second copy at the same
sequence numbers. Until that read succeeds no new append is made for the match.
"""

from __future__ import annotations

import asyncio
import weakref
from collections import OrderedDict, defaultdict
from collections.abc import AsyncIterator, Callable, Sequence

import grpc
from google.protobuf import any_pb2, message

from services.common.envelope import Cause, make_envelope, pack
from services.common.eventlog import (
    EventLog,
    LogRecord,
    LogUnavailable,
    RecordTooLarge,
    read_records,
)
from services.common.kafka_access import KafkaAccess
from services.common.logging import get_logger
from services.common.metrics import APPENDS_SETTLED, EVENTS_APPENDED, LOG_DUPLICATES
from services.common.sharding import shard_of
from services.common.snapshots import Snapshot, batches, sized
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc, snapshot_pb2

log = get_logger(__name__)

#: ListEventBatches cuts a match's events into messages of at most this many bytes (one
#: larger envelope goes alone, at most MAX_RECORD_BYTES): well under gRPC's 4 MB limit
LIST_BATCH_BYTES = 1024 * 1024

Apply = Callable[[envelope_pb2.EventEnvelope], None]

#: serialized bytes of closed matches' envelopes a writer keeps, least recently read
#: first out: a replay or an export soon after a match ends is the common read, and
#: reading a closed match back costs a pass over a partition span it shares with every
#: match played meanwhile (~15 ms of the board's CPU after 40 concurrent matches)
RECENT_BYTES = 16 * 1024 * 1024


class StreamWriter:
    """Appends a stream's events per match with gapless sequence numbers."""

    def __init__(
        self,
        stream: str,
        event_log: EventLog,
        kafka: KafkaAccess,
        shard: int = 0,
        shards: int = 1,
        recent_bytes: int = RECENT_BYTES,
    ) -> None:
        self.stream = stream
        self._event_log = event_log
        self._kafka = kafka
        self._shard = shard
        self._shards = shards
        #: open match → its envelopes, in order (a closed match is not held)
        self._events: dict[str, list[envelope_pb2.EventEnvelope]] = defaultdict(list)
        #: closed match → its envelopes, while they fit in ``recent_bytes`` (RECENT_BYTES)
        self._recent: OrderedDict[str, list[envelope_pb2.EventEnvelope]] = OrderedDict()
        self._recent_sizes: dict[str, int] = {}
        self._recent_bytes = 0
        self.recent_limit = recent_bytes
        #: match → how many of its events are in the log (open or closed)
        self._versions: dict[str, int] = {}
        #: match → (first, end): its records lie in [first, end) of its partition
        self._spans: dict[str, tuple[int, int]] = {}
        #: only the locks in use stay (a finished match's lock is not kept forever)
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()
        #: partition → an offset before which every record is known to this writer
        self._known: dict[int, int] = {}
        #: match → the offset of its partition to read back from (outcome unknown)
        self._unsettled: dict[str, int] = {}
        #: match → where its partition stood before its append now in flight (a snapshot
        #: taken meanwhile must read it back: other appends may move the known end past it)
        self._in_flight: dict[str, int] = {}
        #: folds envelopes adopted from the log into the owner's state (set by recover)
        self._apply: Apply = lambda envelope: None
        #: envelopes taken since the start (appended or read from the log), beyond a
        #: restored snapshot: what a new snapshot would add
        self.changes = 0

    def owns(self, match_id: str) -> bool:
        return shard_of(match_id, self._shards) == self._shard

    def lock(self, match_id: str) -> asyncio.Lock:
        """Serialises the commands of one match (single writer)."""
        lock = self._locks.get(match_id)
        if lock is None:
            lock = self._locks[match_id] = asyncio.Lock()
        return lock

    def version(self, match_id: str) -> int:
        return self._versions.get(match_id, 0)

    def events(self, match_id: str, after: int = 0) -> list[envelope_pb2.EventEnvelope]:
        """The held envelopes of an open match (``read_events`` answers closed ones too)."""
        return self._events.get(match_id, [])[after:]

    def close(self, match_id: str, remember: bool = True) -> None:
        """The owner needs no more of this match's envelopes in memory: ListEvents reads
        them back from the log, or from the recent matches' bounded keep (not with
        ``remember=False``, which takes it out of that keep too: a match let go of while
        idle, whose next read is its owner's at its next request, if any). Appends to it
        stay possible (not held either)."""
        self._event_log.finished(match_id)
        held = self._events.pop(match_id, None)
        if not remember:
            self._forget(match_id)
        elif held:
            self._remember(match_id, held)

    def _remember(self, match_id: str, envelopes: list[envelope_pb2.EventEnvelope]) -> None:
        """Keep a closed match's envelopes among the recent ones, the least recently read
        leaving first while they exceed ``recent_limit``."""
        self._forget(match_id)
        size = sum(e.ByteSize() for e in envelopes)
        if size > self.recent_limit:
            return
        self._recent[match_id] = envelopes
        self._recent_sizes[match_id] = size
        self._recent_bytes += size
        while self._recent_bytes > self.recent_limit:
            self._forget(next(iter(self._recent)))

    def _forget(self, match_id: str) -> None:
        if self._recent.pop(match_id, None) is not None:
            self._recent_bytes -= self._recent_sizes.pop(match_id)

    def is_open(self, match_id: str) -> bool:
        return match_id in self._events

    def closed(self) -> list[str]:
        return [m for m in self._versions if m not in self._events]

    async def read_events(self, match_id: str, after: int = 0) -> list[envelope_pb2.EventEnvelope]:
        """Every event of ``match_id`` after sequence ``after``: from memory while the match
        is open, else from its span of the log. Raises LogUnavailable past the deadline."""
        if match_id in self._events or match_id not in self._spans:
            return self.events(match_id, after)
        version = self.version(match_id)
        recent = self._recent.get(match_id)
        if recent is not None and len(recent) == version:
            self._recent.move_to_end(match_id)
            return recent[after:]
        first, end = self._spans[match_id]
        records = await self._event_log.read_range(
            self._event_log.partition_of(match_id), first, end, match_id.encode()
        )
        found: list[envelope_pb2.EventEnvelope] = []
        for record in _of_match(records, match_id):
            if record.envelope.sequence == len(found) + 1 and len(found) < version:
                found.append(record.envelope)  # a duplicate sequence keeps the first
        if len(found) != version:
            raise LogUnavailable(
                f"{len(found)} of the match's {version} events were read back",
                outcome_unknown=False,
            )
        self._remember(match_id, found)
        return found[after:]

    async def recover(self, apply: Apply, snapshot: Snapshot | None = None) -> int:
        """Rebuild from the topic: every envelope of an owned match, in order; from the
        snapshot's offsets on when there is one. ``apply`` also folds what a later
        read-back adopts."""
        starts: dict[int, int] = {}
        if snapshot is not None:
            self.restore_snapshot(snapshot, apply)
            starts = self.tail_starts()
        records = read_records(self._kafka, [self._event_log.topic], starts)
        return await self.restore(records, apply)

    def snapshot(self) -> list[message.Message]:
        """The writer's state as snapshot parts (synchronously: between two appends)."""
        unsettled = dict(self._in_flight)
        for match_id, offset in self._unsettled.items():
            unsettled[match_id] = min(unsettled.get(match_id, offset), offset)
        parts: list[message.Message] = [
            snapshot_pb2.WriterPositions(known=self._known, unsettled=unsettled)
        ]
        ids = list(self._versions)
        spans = [self._spans.get(m, (0, 0)) for m in ids]
        versions = [self._versions[m] for m in ids]
        for part in batches(len(ids)):
            parts.append(
                snapshot_pb2.MatchSpans(
                    match_ids=ids[part],
                    versions=versions[part],
                    firsts=[s[0] for s in spans[part]],
                    ends=[s[1] for s in spans[part]],
                )
            )
        held = [e for envelopes in self._events.values() for e in envelopes]
        parts.extend(snapshot_pb2.OpenEvents(envelopes=held[part]) for part in sized(held))
        return parts

    def restore_snapshot(self, snapshot: Snapshot, apply: Apply) -> None:
        """Take the writer's state from ``snapshot`` and fold the open matches' envelopes
        with ``apply``; the tail of the topic from ``tail_starts`` follows."""
        self._apply = apply
        for positions in snapshot.of(snapshot_pb2.WriterPositions):
            self._known.update(positions.known)
            self._unsettled.update(positions.unsettled)
        for spans in snapshot.of(snapshot_pb2.MatchSpans):
            self._versions.update(zip(spans.match_ids, spans.versions, strict=True))
            ranges = zip(spans.firsts, spans.ends, strict=True)
            self._spans.update(zip(spans.match_ids, ranges, strict=True))
        for open_events in snapshot.of(snapshot_pb2.OpenEvents):
            for envelope in open_events.envelopes:
                self._events[envelope.match_id].append(envelope)
                apply(envelope)
        log.info(
            "snapshot_restored",
            stream=self.stream,
            snapshot=snapshot.snapshot_id,
            matches=len(self._versions),
            open=len(self._events),
            unsettled=len(self._unsettled),
        )

    def tail_starts(self) -> dict[int, int]:
        """Per partition, where the tail after a restored snapshot begins: its known end,
        or earlier where an append's outcome was unknown. Reading the tail settles those
        (the restarted writer's producer fenced the old one), so they are settled here."""
        starts = dict(self._known)
        partition_of = self._event_log.partition_of
        for match_id, offset in self._unsettled.items():
            partition = partition_of(match_id)
            starts[partition] = min(starts.get(partition, offset), offset)
        self._unsettled.clear()
        return starts

    async def restore(self, records: AsyncIterator[LogRecord], apply: Apply) -> int:
        """Rebuild from ``records`` (the topic from its start, or the tail after a restored
        snapshot, in offset order)."""
        self._apply = apply
        count = 0
        async for record in records:
            self._known[record.partition] = max(
                self._known.get(record.partition, 0), record.offset + 1
            )
            envelope = record.envelope
            if envelope.stream != self.stream or not self.owns(envelope.match_id):
                continue
            if self._take(envelope, record.offset):
                apply(envelope)
                count += 1
        log.info(
            "recovered",
            stream=self.stream,
            events=count,
            matches=len(self._versions),
            open=len(self._events),
        )
        return count

    def _take(self, envelope: envelope_pb2.EventEnvelope, offset: int) -> bool:
        """Count (and hold, while its match is open) the next envelope of its match, read
        back at ``offset``; False for one taken already. A second event id at a held
        sequence is a duplicate append: counted and logged, not folded."""
        match_id = envelope.match_id
        version = self.version(match_id)
        if envelope.sequence == version + 1:
            self._taken([envelope], offset, offset + 1)
            return True
        held = self._events.get(match_id)
        if envelope.sequence <= version:
            first = held[envelope.sequence - 1] if held is not None else envelope
            if first.event_id != envelope.event_id:
                LOG_DUPLICATES.labels(self.stream).inc()
                log.error(
                    "duplicate_sequence",
                    stream=self.stream,
                    match_id=envelope.match_id,
                    sequence=envelope.sequence,
                    kept=first.event_id,
                    dropped=envelope.event_id,
                )
            return False
        raise RuntimeError(
            f"{self.stream}: match {match_id} jumps from {version} to {envelope.sequence}"
        )

    def _taken(self, envelopes: list[envelope_pb2.EventEnvelope], first: int, end: int) -> None:
        """Count envelopes that lie in [first, end) of their match's partition."""
        match_id = envelopes[0].match_id
        self.changes += len(envelopes)
        if match_id not in self._versions:
            self._versions[match_id] = 0
            self._events[match_id] = []  # a new match is open
        self._versions[match_id] += len(envelopes)
        held = self._events.get(match_id)
        if held is not None:
            held.extend(envelopes)
        else:
            self._forget(match_id)  # a closed match appended to: read it back whole
        span = self._spans.get(match_id)
        self._spans[match_id] = (first, end) if span is None else (span[0], max(span[1], end))

    async def append(
        self,
        match_id: str,
        payloads: Sequence[message.Message | any_pb2.Any],
        cause: Cause,
        game: str = "",
        rules_version: str = "",
    ) -> list[envelope_pb2.EventEnvelope]:
        """Append ``payloads`` for ``match_id``; the caller holds ``lock(match_id)``.

        Raises LogUnavailable (retry with the same command) or RecordTooLarge (never).
        """
        if match_id in self._unsettled:
            adopted = await self._settle(match_id)
            if adopted and _same_command([r.envelope for r in adopted], payloads, cause):
                return self._took(adopted, game)  # the first attempt committed after all
            if adopted:
                self._adopt(adopted, game)
                raise LogUnavailable(
                    "an earlier command of this match committed after all; decide again",
                    outcome_unknown=False,
                )
        start = self.version(match_id)
        envelopes = [
            make_envelope(
                match_id=match_id,
                stream=self.stream,
                sequence=start + i + 1,
                payload=payload,
                cause=cause,
                game=game,
                rules_version=rules_version,
            )
            for i, payload in enumerate(payloads)
        ]
        envelopes[-1].last_in_batch = True
        partition = self._event_log.partition_of(match_id)
        before = self._known.get(partition, 0)
        self._in_flight[match_id] = before
        try:
            written = await self._event_log.append(envelopes)
        except LogUnavailable as failure:
            self._unsettled[match_id] = before
            try:
                adopted = await self._settle(match_id)
            except LogUnavailable:
                raise failure from None  # still unknown: settled before the next append
            if [r.envelope.event_id for r in adopted] == [e.event_id for e in envelopes]:
                return self._took(adopted, game)
            if adopted:  # not ours (cannot happen under the match lock): fold, never lose
                self._adopt(adopted, game)
            raise LogUnavailable("nothing was appended", outcome_unknown=False) from failure
        except BaseException:
            # Cancelled (the caller's deadline passed, its client went away): the append
            # may still commit, so it is settled before this match's next append.
            self._unsettled[match_id] = before
            self._event_log.distrust()
            raise
        finally:
            del self._in_flight[match_id]
        for p, end in written.items():
            self._known[p] = max(self._known.get(p, 0), end)
        # Every record before ``before`` was known before this append: its own records
        # lie after it, and before the end the broker reported.
        self._taken(envelopes, before, written.get(partition, before + len(envelopes)))
        return self._counted(envelopes, game)

    def _counted(
        self, envelopes: list[envelope_pb2.EventEnvelope], game: str
    ) -> list[envelope_pb2.EventEnvelope]:
        EVENTS_APPENDED.labels(self.stream, game or "none").inc(len(envelopes))
        return envelopes

    def _took(self, adopted: list[LogRecord], game: str) -> list[envelope_pb2.EventEnvelope]:
        """Take envelopes read back from the log."""
        for record in adopted:
            self._taken([record.envelope], record.offset, record.offset + 1)
        return self._counted([r.envelope for r in adopted], game)

    def _adopt(self, adopted: list[LogRecord], game: str) -> None:
        """Take and fold committed envelopes that no caller is waiting for."""
        for envelope in self._took(adopted, game):
            self._apply(envelope)

    async def _settle(self, match_id: str) -> list[LogRecord]:
        """Fence the producer, read the match's partition back from before the unsettled
        append, and return its events that committed but are not held yet."""
        await self._event_log.fence()
        records = await self._event_log.read_tail(
            self._event_log.partition_of(match_id), self._unsettled[match_id]
        )
        del self._unsettled[match_id]
        held = self.version(match_id)
        adopted: list[LogRecord] = []
        for record in _of_match(records, match_id):
            envelope = record.envelope
            if envelope.sequence == held + len(adopted) + 1:
                adopted.append(record)
            elif envelope.sequence <= held:
                self._take(envelope, record.offset)  # counts a duplicate if there is one
        APPENDS_SETTLED.labels(self.stream, "committed" if adopted else "absent").inc()
        log.warning("append_settled", match_id=match_id, committed=len(adopted))
        return adopted


def _of_match(records: list[LogRecord], match_id: str) -> list[LogRecord]:
    return [r for r in records if r.envelope.match_id == match_id]


def _same_command(
    envelopes: list[envelope_pb2.EventEnvelope],
    payloads: Sequence[message.Message | any_pb2.Any],
    cause: Cause,
) -> bool:
    """Whether committed ``envelopes`` are this very append (a retry of it)."""
    return len(envelopes) == len(payloads) and all(
        e.correlation_id == cause.correlation_id and e.payload == pack(p)
        for e, p in zip(envelopes, payloads, strict=True)
    )


async def append_or_abort(
    writer: StreamWriter,
    context: grpc.aio.ServicerContext,
    match_id: str,
    payloads: Sequence[message.Message | any_pb2.Any],
    cause: Cause,
) -> list[envelope_pb2.EventEnvelope]:
    """``writer.append`` for an RPC: a log failure ends the call with the status that says
    whether a retry can help (UNAVAILABLE) or not (INVALID_ARGUMENT)."""
    try:
        return await writer.append(match_id, payloads, cause)
    except LogUnavailable as error:
        await context.abort(grpc.StatusCode.UNAVAILABLE, f"{error}; retry with the same request id")
    except RecordTooLarge as error:
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(error))
    raise AssertionError("context.abort raises")


class EventSourceServicer(envelope_pb2_grpc.EventSourceServicer):
    """Serves a stream's events of one match (tabletop.v1.EventSource)."""

    def __init__(self, writer: StreamWriter) -> None:
        self._writer = writer

    async def _read(
        self, request: envelope_pb2.ListEventsRequest, context: grpc.aio.ServicerContext
    ) -> list[envelope_pb2.EventEnvelope]:
        if not request.match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        try:
            return await self._writer.read_events(request.match_id, int(request.after_sequence))
        except LogUnavailable as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"{error}; retry")
            raise AssertionError("context.abort raises") from error

    async def ListEvents(
        self, request: envelope_pb2.ListEventsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[envelope_pb2.EventEnvelope]:
        for envelope in await self._read(request, context):
            yield envelope

    async def ListEventBatches(
        self, request: envelope_pb2.ListEventsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[envelope_pb2.EventBatch]:
        envelopes = await self._read(request, context)
        for part in sized(envelopes, LIST_BATCH_BYTES):
            yield envelope_pb2.EventBatch(events=envelopes[part])
