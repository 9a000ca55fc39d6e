"""The projector: a Faust app folding the four event streams into match views.

Its table ``match_states`` (changelog-backed, keyed by match id, co-partitioned with the
event topics) holds each match's folded state; once per match per batch of events it
publishes a ``ViewUpdate`` (summary, provenance and the state of its last whole command) on
the views topic, from which the gateways render the views their clients ask for.

Nothing one match does can stop the stream: an event that fails to fold, or whose
record or view would exceed the broker's message limit, goes to the dead-letter topic
(ids and reason only) and is counted; that match's views stop, every other match's go on,
until an operator asks for the match to be folded again from its events
(``tabletop admin deadletter retry``, services/projector/deadletters.py).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any, cast

import faust
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

from services.adapters.folding import FoldedMatch
from services.adapters.projection import Projection, revealed_seed
from services.common.config import Config
from services.common.envelope import is_a
from services.common.eventlog import MAX_RECORD_BYTES, envelopes_of
from services.common.logging import get_logger
from services.common.metrics import (
    LOG_DUPLICATES,
    PROJECTOR_ASSIGNED,
    PROJECTOR_DEAD_LETTERS,
    PROJECTOR_FOLD_ERRORS,
    PROJECTOR_FOLDED,
    PROJECTOR_LAG,
    start_metrics_server,
)
from services.common.topics import (
    PROJECTOR_APP_ID,
    STREAMS,
    dead_letter_topic,
    event_topic,
    retry_topic,
    views_topic,
)
from services.projector import deadletters
from services.projector.delivery import BatchStream, LeanConsumer
from tabletop.v1 import envelope_pb2, platform_events_pb2

log = get_logger(__name__)

#: a table record or a published view of one match may not exceed this (Kafka's limit is
#: 1 MiB per record batch); the projector checks before it writes
MAX_VIEW_BYTES = MAX_RECORD_BYTES
#: a retry reads the match's events for at most this long (the stream waits meanwhile)
RETRY_READ_LIMIT_S = 60.0
#: the most a produce batch for one partition gathers (below the broker's record batch
#: limit)
PRODUCER_BATCH_BYTES = 512 * 1024
#: board event ids kept per match to tell a duplicate append from a re-read
RECENT_IDS = 32


#: marks a record that stands for the cached projection inside a batch (never stored)
_STUB = "_stub"


class TooLarge(ValueError):
    """A match's record or view would exceed the broker's message limit."""


def encode_record(record: dict[str, Any]) -> bytes:
    """A table record as stored: JSON, serialized once (the table stores bytes as given)."""
    return json.dumps(record, separators=(",", ":")).encode()


def decode_record(stored: bytes | None) -> dict[str, Any] | None:
    return None if stored is None else cast(dict[str, Any], json.loads(stored))


def check_sizes(record: bytes | None, update: bytes | None) -> None:
    if update is not None and len(update) > MAX_VIEW_BYTES:
        raise TooLarge(f"the views would take {len(update)} bytes (limit {MAX_VIEW_BYTES})")
    if record is not None and len(record) > MAX_VIEW_BYTES:
        raise TooLarge(f"the record would take {len(record)} bytes (limit {MAX_VIEW_BYTES})")


def dead_letter(envelope: envelope_pb2.EventEnvelope, reason: str, error: BaseException) -> bytes:
    """The dead-letter record of an event: where to find it and why, never its payload."""
    return json.dumps(
        {
            "match_id": envelope.match_id,
            "stream": envelope.stream,
            "sequence": envelope.sequence,
            "event_id": envelope.event_id,
            "event_type": envelope.event_type,
            "reason": reason,
            "error": f"{type(error).__name__}: {error}"[:1000],
        }
    ).encode()


def _duplicate(record: dict[str, Any], envelope: envelope_pb2.EventEnvelope) -> bool:
    """A board event at a sequence already folded under another event id."""
    seen = record.get("recent_ids", {}).get(str(envelope.sequence))
    return seen is not None and seen != envelope.event_id


def _with_recent_id(
    record: dict[str, Any], previous: dict[str, Any] | None, envelope: envelope_pb2.EventEnvelope
) -> dict[str, Any]:
    recent = dict((previous or {}).get("recent_ids", {}))
    recent[str(envelope.sequence)] = envelope.event_id
    for old in sorted(recent, key=int)[:-RECENT_IDS]:
        del recent[old]
    record["recent_ids"] = recent
    return record


class ProjectionFolder:
    """Folds envelopes into table records. Keeps the decoded projection of each match in
    memory, so a fold decodes the stored record only after a restart or a rebalance; the
    table (and its changelog) stays the authority."""

    def __init__(self) -> None:
        self._cache: dict[str, Projection] = {}

    def forget(self) -> None:
        """Drop the cache (partitions moved: another worker may have folded since)."""
        self._cache.clear()

    def forget_match(self, match_id: str) -> None:
        """Decode this match from its stored record next time (a fold of it failed)."""
        self._cache.pop(match_id, None)

    def projection(self, match_id: str) -> Projection:
        """The match as folded so far (a match this folder has folded since its creation)."""
        return self._cache[match_id]

    def _projection(self, record: dict[str, Any]) -> Projection:
        cached = self._cache.get(record["match_id"])
        if cached is not None and cached.match.version == record["version"]:
            return cached
        return Projection.from_record(record)

    def fold(
        self,
        record: dict[str, Any] | None,
        envelope: envelope_pb2.EventEnvelope,
        stored: bool = True,
    ) -> tuple[dict[str, Any] | None, Projection | None]:
        """The table record after one envelope, and the projection to publish (if any).

        ``stored=False`` (inside a batch): a board event's record is a stub (ids and
        version) standing for the cached projection; ``fold_batch`` writes the whole
        record once, after the batch's last event."""
        pending = record if record is not None and "game" not in record else None
        if (
            envelope.stream == "board"
            and record is not None
            and pending is None
            and envelope.sequence <= record["version"]
        ):
            # Read again (at-least-once, after a restart): folded already. A re-read
            # MatchCreated must not start the match over (it would drop revealed seeds).
            if _duplicate(record, envelope):
                LOG_DUPLICATES.labels("board").inc()
                log.error(
                    "duplicate_sequence",
                    match_id=envelope.match_id,
                    sequence=envelope.sequence,
                    event_id=envelope.event_id,
                )
            return record, None
        if envelope.stream == "board" and is_a(envelope, platform_events_pb2.MatchCreated):
            projection = Projection(FoldedMatch.created(envelope))
            if pending:  # seeds revealed before the board stream was read (a rebuild)
                projection.dice_seed = pending.get("dice_seed", "")
                projection.decks_seed = pending.get("decks_seed", "")
            self._cache[envelope.match_id] = projection
            created = _with_recent_id(projection.to_record(), None, envelope)
            return created, projection if envelope.last_in_batch else None
        if record is None or pending is not None:
            seed = revealed_seed(envelope)
            if seed is None:
                return record, None
            return {**(pending or {}), seed[0]: seed[1]}, None
        projection = self._projection(record)
        if envelope.stream == "board":
            changed = projection.match.fold(envelope)
        else:
            changed = projection.note(envelope)
        if not changed:
            return record, None
        self._cache[envelope.match_id] = projection
        if envelope.stream == "board" and not stored:
            m = projection.match
            folded = {"match_id": m.match_id, "game": m.game.name, "version": m.version}
            folded[_STUB] = True
        else:
            folded = projection.to_record()
        if envelope.stream != "board":
            folded["recent_ids"] = record.get("recent_ids", {})
            return folded, projection
        folded = _with_recent_id(folded, record, envelope)
        if not envelope.last_in_batch:
            return folded, None  # mid-command: publish once the command is whole
        return folded, projection

    def fold_batch(
        self, record: dict[str, Any] | None, envelopes: list[envelope_pb2.EventEnvelope]
    ) -> tuple[dict[str, Any] | None, bytes | None]:
        """One match's events of a batch, in order: the record after the last, and the
        serialized ``ViewUpdate`` of its last whole state (None: nothing to publish).

        Views are rendered once per batch, not per command: the state to show is rendered
        only when no later whole command in the batch supersedes it; when the batch ends
        mid-command, the last whole state is rendered before that command's first event
        is folded."""
        whole_after = [False] * (len(envelopes) + 1)  # a command ends at or after i
        for i in range(len(envelopes) - 1, -1, -1):
            ends = envelopes[i].stream == "board" and envelopes[i].last_in_batch
            whole_after[i] = ends or whole_after[i + 1]
        owed: Projection | None = None  # the last whole state, not rendered yet
        rendered: bytes | None = None
        for i, envelope in enumerate(envelopes):
            if owed is not None and envelope.stream == "board" and not whole_after[i]:
                rendered, owed = owed.update().SerializeToString(), None
            record, projection = self.fold(record, envelope, stored=False)
            if projection is not None:
                owed = projection
        if owed is not None:
            rendered = owed.update().SerializeToString()
        if record is not None and record.get(_STUB):
            whole = self._cache[record["match_id"]].to_record()
            whole["recent_ids"] = record["recent_ids"]
            record = whole
        return record, rendered


class _ReadCommittedConsumerThread(AIOKafkaConsumerThread):
    """Faust reads read_committed only under exactly_once, whose transactions delay every
    view by a commit interval; at_least_once with read_committed gives both: a fold never
    sees an aborted board transaction, and views follow within milliseconds."""

    #: Static membership (KIP-345) when the worker has a stable identity (its pod name):
    #: restarted after a crash it rejoins as itself and gets its partitions back at once,
    #: not after the session timeout (measured: kill -9 → ready 9–10 s, with it 2–4 s).
    group_instance_id: str | None = None
    #: Faust hard-codes a 1,500 ms fetch long-poll; aiokafka keeps one fetch in flight per
    #: broker, so a fetch for quiet partitions held the busy ones back for up to that long
    #: (measured at 100 matches: views 0.7-4 s behind the board).
    fetch_max_wait_ms = 1500

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        # read by AIOKafkaConsumer.start(); Faust's constructor call does not pass them
        consumer._isolation_level = "read_committed"
        consumer._group_instance_id = self.group_instance_id
        consumer._fetch_max_wait_ms = self.fetch_max_wait_ms
        return consumer


class _ReadCommittedConsumer(LeanConsumer):
    def _new_consumer_thread(self) -> _ReadCommittedConsumerThread:
        return _ReadCommittedConsumerThread(self, loop=self.loop, beacon=self.beacon)


def create_app(config: Config) -> faust.App:
    app_id = f"{config.topic_prefix}{PROJECTOR_APP_ID}"
    os.makedirs(config.data_dir, exist_ok=True)  # Faust creates its folder, not the parents
    app = faust.App(
        app_id,
        datadir=os.path.join(config.data_dir, app_id),
        broker=f"kafka://{config.kafka_bootstrap}",
        store="memory://",
        processing_guarantee="at_least_once",  # folds are idempotent by sequence number
        topic_partitions=config.partitions,
        topic_replication_factor=config.replication_factor,
        consumer_auto_offset_reset="earliest",
        # A killed worker's partitions move once the group notices it is gone: after
        # the session timeout (Faust's default 60 s kept views frozen for about a minute).
        broker_session_timeout=10.0,
        broker_heartbeat_interval=2.0,
        web_enabled=False,
        producer_acks=-1,
        # A batch sends a view and a changelog record per match: a few milliseconds'
        # linger packs them into one produce request instead of one each (py-spy at 100
        # matches: a tenth of the projector's time went to socket writes).
        producer_linger=config.projector_linger_ms / 1000,
        # aiokafka holds a send while its partition's batch is full until that batch is
        # sent; at Faust's 16 KiB a rebuild's updates and changelog records waited on one
        # produce request after another.
        producer_max_batch_size=PRODUCER_BATCH_BYTES,
        # take_events takes what the channel holds at once (services/projector/delivery.py)
        Stream=BatchStream,
    )
    app.transport.Consumer = _ReadCommittedConsumer  # type: ignore[misc]
    _ReadCommittedConsumerThread.group_instance_id = config.instance_id or None
    _ReadCommittedConsumerThread.fetch_max_wait_ms = config.projector_fetch_wait_ms
    batch_wait = config.projector_batch_wait_ms / 1000
    retries = retry_topic(config.topic_prefix)
    source = app.topic(
        *(event_topic(s, config.topic_prefix) for s in STREAMS),
        retries,
        key_serializer="raw",
        value_serializer="raw",
    )
    views = app.topic(
        views_topic(config.topic_prefix), key_serializer="raw", value_serializer="raw"
    )
    dead_letters = app.topic(
        dead_letter_topic(config.topic_prefix), key_serializer="raw", value_serializer="raw"
    )
    states = app.Table(
        "match_states",
        default=None,
        partitions=config.partitions,
        key_type=str,
        value_type=bytes,  # raw: encode_record serializes once, its length is the size
        # Written once per match per batch, outside any one event's context: the changelog
        # partition comes from the key, as the board's producer chose the event's (both
        # the default murmur2 partitioner over the match id's UTF-8 bytes).
        use_partitioner=True,
    )

    async def ready(sender: Any, *args: Any, signal: Any = None, **kwargs: Any) -> None:
        # Sent once tables are recovered: from here on views are current.
        PROJECTOR_ASSIGNED.set(len(sender.consumer.assignment()))

    async def rebalancing(sender: Any, *args: Any, signal: Any = None, **kwargs: Any) -> None:
        PROJECTOR_ASSIGNED.set(0)
        folder.forget()

    app.on_rebalance_complete.connect(ready)  # type: ignore[arg-type]
    app.on_partitions_revoked.connect(rebalancing)  # type: ignore[arg-type]

    folder = ProjectionFolder()

    async def fold_one_by_one(key: str, envelopes: list[envelope_pb2.EventEnvelope]) -> int:
        """The careful path: each event folded, checked, written and published on its own,
        so the one that fails (or outgrows the limit) is dead-lettered and the rest go on.
        Returns how many were dead-lettered."""
        folder.forget_match(key)
        failed = 0
        for envelope in envelopes:
            try:
                before = decode_record(states.get(key))
                record, projection = folder.fold(before, envelope)
                update = projection.update().SerializeToString() if projection else None
                stored = (
                    encode_record(record) if record is not None and record is not before else None
                )
                check_sizes(stored, update)
            except Exception as error:
                reason = "too_large" if isinstance(error, TooLarge) else "fold_error"
                PROJECTOR_FOLD_ERRORS.labels(envelope.stream).inc()
                PROJECTOR_DEAD_LETTERS.labels(reason).inc()
                log.exception("fold_failed", match_id=key, stream=envelope.stream, reason=reason)
                await dead_letters.send(
                    key=key.encode(), value=dead_letter(envelope, reason, error)
                )
                failed += 1
                continue
            if stored is not None:
                states[key] = stored
            if update is not None:
                await views.send(key=key.encode(), value=update)
        return failed

    async def fold_match(key: str, envelopes: list[envelope_pb2.EventEnvelope]) -> int:
        """One match's events of a batch: one table write and at most one view published.
        Returns how many events were dead-lettered."""
        try:
            before = decode_record(states.get(key))
            record, update = folder.fold_batch(before, envelopes)
            stored = encode_record(record) if record is not None and record is not before else None
            check_sizes(stored, update)
        except Exception:
            return await fold_one_by_one(key, envelopes)
        if stored is not None:
            states[key] = stored
        if update is not None:
            await views.send(key=key.encode(), value=update)
        return 0

    async def fold_again(key: str, partition: int) -> None:
        """A retry: the match folded from nothing, from all its events so far (the ones the
        stream brings later are folded already and skipped by sequence)."""
        try:
            envelopes = await asyncio.wait_for(
                deadletters.match_events(
                    config.kafka_bootstrap, config.topic_prefix, key, partition
                ),
                RETRY_READ_LIMIT_S,
            )
        except Exception:  # the broker, not the match: the operator asks again
            log.exception("retry_read_failed", match_id=key)
            return
        if not envelopes:
            log.warning("retry_of_unknown_match", match_id=key)
            return
        folder.forget_match(key)
        if key in states:
            del states[key]
        failed = await fold_match(key, envelopes)
        log.info("match_folded_again", match_id=key, events=len(envelopes), failed=failed)
        if not failed:
            await dead_letters.send(
                key=key.encode(), value=deadletters.resolved(key, len(envelopes))
            )

    @app.task  # type: ignore[untyped-decorator]  # Faust's task decorator is untyped
    async def watch_dead_letters() -> None:
        await deadletters.watch(config.kafka_bootstrap, config.topic_prefix)

    @app.agent(source)
    async def project(events_of: faust.StreamT[bytes]) -> None:
        stream = cast(faust.Stream[bytes], events_of)  # take_events is not on StreamT
        # Faust acks a batch's offsets once this body has handled it (at least once).
        async for events in stream.take_events(config.projector_batch, within=batch_wait):
            by_match: dict[str, list[envelope_pb2.EventEnvelope]] = {}
            retried: dict[str, int] = {}
            for event in events:
                if event.message.topic == retries:
                    retried[(event.message.key or b"").decode()] = event.message.partition
                    continue
                appended = envelopes_of(event.value, event.message.headers)
                envelope = appended[-1]
                by_match.setdefault(envelope.match_id, []).extend(appended)
                PROJECTOR_FOLDED.labels(envelope.stream).inc(len(appended))
            for key, envelopes in by_match.items():
                await fold_match(key, envelopes)
            for key, partition in retried.items():
                await fold_again(key, partition)
            if by_match:
                PROJECTOR_LAG.set(
                    max(0.0, time.time() - envelope.occurred_at.ToNanoseconds() / 1e9)
                )

    return app


def main(config: Config) -> None:
    start_metrics_server(config.metrics_port, config.grpc_host)
    app = create_app(config)
    worker = faust.Worker(app, loglevel=config.log_level.upper(), quiet=True)
    worker.execute_from_commandline()
