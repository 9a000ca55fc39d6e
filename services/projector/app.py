"""The projector: a Faust app folding the four event streams into match views.

Its table ``match_states`` (changelog-backed, keyed by match id, co-partitioned with the
event topics) holds each match's folded state; after every fold it publishes a
``ViewUpdate`` (every viewer's view) on the views topic for the gateway.
"""

from __future__ import annotations

import os
import time
from typing import Any

import faust
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread
from faust.transport.drivers.aiokafka import Consumer as AIOKafkaConsumer

from services.adapters.folding import FoldedMatch
from services.adapters.projection import Projection, revealed_seed
from services.common.config import Config
from services.common.envelope import is_a
from services.common.logging import get_logger
from services.common.metrics import (
    PROJECTOR_ASSIGNED,
    PROJECTOR_FOLD_ERRORS,
    PROJECTOR_FOLDED,
    PROJECTOR_LAG,
    start_metrics_server,
)
from services.common.topics import PROJECTOR_APP_ID, STREAMS, event_topic, views_topic
from tabletop.v1 import envelope_pb2, platform_events_pb2

log = get_logger(__name__)


class ProjectionFolder:
    """Folds envelopes into table records. Keeps the decoded projection of each match in
    memory, so a fold decodes the stored record only after a restart or a rebalance; the
    table (and its changelog) stays the authority."""

    def __init__(self) -> None:
        self._cache: dict[str, Projection] = {}

    def forget(self) -> None:
        """Drop the cache (partitions moved: another worker may have folded since)."""
        self._cache.clear()

    def _projection(self, record: dict[str, Any]) -> Projection:
        cached = self._cache.get(record["match_id"])
        if cached is not None and cached.match.version == record["version"]:
            return cached
        return Projection.from_record(record)

    def fold(
        self, record: dict[str, Any] | None, envelope: envelope_pb2.EventEnvelope
    ) -> tuple[dict[str, Any] | None, Projection | None]:
        """The table record after one envelope, and the projection to publish (if any)."""
        pending = record if record is not None and "game" not in record else None
        if envelope.stream == "board" and is_a(envelope, platform_events_pb2.MatchCreated):
            projection = Projection(FoldedMatch.created(envelope))
            if pending:  # seeds revealed before the board stream was read (a rebuild)
                projection.dice_seed = pending.get("dice_seed", "")
                projection.decks_seed = pending.get("decks_seed", "")
            self._cache[envelope.match_id] = projection
            return projection.to_record(), projection if envelope.last_in_batch else None
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
        if envelope.stream == "board" and not envelope.last_in_batch:
            return projection.to_record(), None  # mid-command: publish once the command is whole
        return projection.to_record(), projection


class _ReadCommittedConsumerThread(AIOKafkaConsumerThread):
    """Faust reads read_committed only under exactly_once, whose transactions delay every
    view by a commit interval; at_least_once with read_committed gives both: a fold never
    sees an aborted board transaction, and views follow within milliseconds."""

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        consumer._isolation_level = "read_committed"  # read by AIOKafkaConsumer.start()
        return consumer


class _ReadCommittedConsumer(AIOKafkaConsumer):
    def _new_consumer_thread(self) -> _ReadCommittedConsumerThread:
        return _ReadCommittedConsumerThread(self, loop=self.loop, beacon=self.beacon)

    async def _add_gap(self, tp: Any, offset_from: int, offset_to: int) -> None:
        # Offsets skipped in a transactional topic are its commit markers. Faust records
        # the gap up to and including the offset of the message that revealed it; that
        # message is acked too, and the duplicate breaks the run of consecutive acked
        # offsets, so each commit advanced by one transaction only. Exclude it.
        await super()._add_gap(tp, offset_from, offset_to - 1)


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
        web_enabled=False,
        producer_acks=-1,
    )
    app.transport.Consumer = _ReadCommittedConsumer  # type: ignore[misc]
    source = app.topic(
        *(event_topic(s, config.topic_prefix) for s in STREAMS),
        key_serializer="raw",
        value_serializer="raw",
    )
    views = app.topic(
        views_topic(config.topic_prefix), key_serializer="raw", value_serializer="raw"
    )
    states = app.Table(
        "match_states",
        default=None,
        partitions=config.partitions,
        key_type=str,
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

    @app.agent(source)
    async def project(stream: faust.StreamT[bytes]) -> None:
        async for value in stream:
            envelope = envelope_pb2.EventEnvelope.FromString(value)
            key = envelope.match_id
            try:
                before = states.get(key)
                record, projection = folder.fold(before, envelope)
            except Exception:
                PROJECTOR_FOLD_ERRORS.labels(envelope.stream).inc()
                log.exception("fold_failed", match_id=envelope.match_id, stream=envelope.stream)
                continue
            if record is not None and record is not before:
                states[key] = record
            PROJECTOR_FOLDED.labels(envelope.stream).inc()
            PROJECTOR_LAG.set(max(0.0, time.time() - envelope.occurred_at.ToNanoseconds() / 1e9))
            if projection is not None:
                await views.send(key=key.encode(), value=projection.update().SerializeToString())

    return app


def main(config: Config) -> None:
    start_metrics_server(config.metrics_port, config.grpc_host)
    app = create_app(config)
    worker = faust.Worker(app, loglevel=config.log_level.upper(), quiet=True)
    worker.execute_from_commandline()
