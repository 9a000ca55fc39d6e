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
import contextlib
import itertools
import os
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import faust
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread
from google.protobuf import any_pb2
from prometheus_client import Gauge

from services.adapters.game_adapter import messages_for
from services.adapters.projection import encode_state
from services.common.config import Config
from services.common.heap import settle_after_startup
from services.common.logging import get_logger
from services.common.metrics import (
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
from services.games.registry import all_games
from services.projector import deadletters
from services.projector.delivery import (
    BatchStream,
    LeanConductor,
    LeanConsumer,
    LeanProducer,
    key_partitioner,
    parse_abort_markers_only_when_aborting,
)
from services.projector.folder import (
    MAX_VIEW_BYTES,
    WHOLE,
    MatchFold,
    ProjectionFolder,
    TooLarge,
    appended,
    check_sizes,
    dead_letter,
    decode_record,
    encode_record,
)
from tabletop.v1 import envelope_pb2

__all__ = [
    "MAX_VIEW_BYTES",
    "ProjectionFolder",
    "TooLarge",
    "check_sizes",
    "create_app",
    "dead_letter",
    "decode_record",
    "encode_record",
    "main",
]

log = get_logger(__name__)

#: the most events the agent's channel holds before Faust holds their partition back
STREAM_BUFFER = 16_384
#: when the projector last finished folding a batch (staleness; a rebuild's end)
LAST_FOLD = Gauge(
    "tabletop_projector_last_fold_timestamp_seconds",
    "Unix time at which the projector last finished folding a batch of events.",
)

#: a retry reads the match's events for at most this long (the stream waits meanwhile)
RETRY_READ_LIMIT_S = 60.0
#: the most a produce batch for one partition gathers (below the broker's record batch
#: limit)
PRODUCER_BATCH_BYTES = 512 * 1024


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
    #: The long-poll after a fetch that brought nothing while no partition is paused:
    #: such a fetch asks for every partition (aiokafka fetches from a broker only once all
    #: its records are consumed), so it returns as soon as any has data, and a longer poll
    #: only spares the empty round trips (each ~1 ms of CPU for 15 partitions: an idle
    #: projector spent 50 ms of CPU per second on them at 20 ms).
    idle_fetch_max_wait_ms = 500
    #: The least data a fetch waits for (up to ``fetch_max_wait_ms``) while events flow;
    #: after an empty fetch, any: the first events after a quiet spell go at once
    fetch_min_bytes = 1

    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        # read by AIOKafkaConsumer.start(); Faust's constructor call does not pass them
        consumer._isolation_level = "read_committed"
        consumer._group_instance_id = self.group_instance_id
        consumer._fetch_max_wait_ms = self.fetch_max_wait_ms
        return consumer

    async def on_start(self) -> None:
        await super().on_start()
        consumer = cast(Any, self._consumer)
        fetcher = consumer._fetcher
        fetch = fetcher._proc_fetch_request
        busy, idle = (
            self.fetch_max_wait_ms,
            max(self.fetch_max_wait_ms, self.idle_fetch_max_wait_ms),
        )
        min_bytes = self.fetch_min_bytes

        async def fetch_then_adapt(*args: Any) -> bool:
            # A paused partition (Faust's buffer under pressure) is left out of fetches:
            # resumed, it waits for the fetch in flight, so that one stays short.
            fetched = bool(await fetch(*args))
            flowing = fetched or consumer.paused()
            fetcher._fetch_max_wait_ms = busy if flowing else idle
            fetcher._fetch_min_bytes = min_bytes if flowing else 1
            return fetched

        fetcher._proc_fetch_request = fetch_then_adapt


class _ReadCommittedConsumer(LeanConsumer):
    def _new_consumer_thread(self) -> _ReadCommittedConsumerThread:
        return _ReadCommittedConsumerThread(self, loop=self.loop, beacon=self.beacon)


def _load_games() -> None:
    """Every game's engine, event readers and state encoders made before the first event,
    not while folding it: importing the games took ~0.5 s of CPU inside a rebuild's first
    batch, and compiling the readers and encoders on first use ~35 ms (a bench rebuild
    folds ~4,000 events in ~0.3 s)."""
    for name, game in all_games().items():
        messages = messages_for(name)
        for event_type in game.event_types:
            empty = any_pb2.Any(type_url=f"type.googleapis.com/{messages.message_name(event_type)}")
            # the reader is compiled and kept before it reads; an empty message may not
            # be a valid event, which does not matter here
            with contextlib.suppress(Exception):
                messages.event_from_any(empty)
        encode_state(game.initial_state())


def create_app(config: Config) -> faust.App:
    _load_games()
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
        producer_partitioner=key_partitioner,
        # A fetch brings up to 1 MiB per partition (a few thousand records): at Faust's
        # 4,096 a rebuild filled the channel, and every record past it took the
        # conductor's slow path (2% of a rebuild's samples); 16,384 records of a few KiB
        # at most are tens of MiB.
        stream_buffer_maxsize=STREAM_BUFFER,
    )
    app.transport.Consumer = _ReadCommittedConsumer  # type: ignore[misc]
    app.transport.Producer = LeanProducer  # type: ignore[misc]
    app.transport.Conductor = LeanConductor  # type: ignore[misc]
    parse_abort_markers_only_when_aborting()
    _ReadCommittedConsumerThread.group_instance_id = config.instance_id or None
    _ReadCommittedConsumerThread.fetch_max_wait_ms = config.projector_fetch_wait_ms
    _ReadCommittedConsumerThread.fetch_min_bytes = config.projector_fetch_min_bytes
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

    def update_of(fold: MatchFold) -> bytes:
        assert fold.projection is not None
        return fold.projection.update_bytes()

    async def fold_one_by_one(
        key: str, appends: Sequence[Sequence[envelope_pb2.EventEnvelope]]
    ) -> int:
        """The careful path: each event folded, checked, written and published on its own,
        so the one that fails (or outgrows the limit) is dead-lettered and the rest go on.
        Returns how many were dead-lettered."""
        folder.forget_match(key)
        failed = 0
        for envelope in itertools.chain.from_iterable(appends):
            try:
                fold = folder.match(key, states.get(key))
                done = folder.fold(fold, envelope)
                stored = encode_record(fold) if done else None
                update = update_of(fold) if done == WHOLE else None
                check_sizes(stored, update)
            except Exception as error:
                folder.forget_match(key)  # the table holds the match as it was
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
                fold.stored = stored
                states[key] = stored
            if update is not None:
                await views.send(key=key.encode(), value=update)
        return failed

    async def fold_match(key: str, appends: Sequence[Sequence[envelope_pb2.EventEnvelope]]) -> int:
        """One match's events of a batch: one table write and at most one view published.
        Returns how many events were dead-lettered."""
        try:
            stored, update = folder.fold_batch(key, states.get(key), appends)
            check_sizes(stored, update)
        except Exception:
            return await fold_one_by_one(key, appends)
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
        failed = await fold_match(key, [envelopes])
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
            by_match: dict[str, list[Sequence[envelope_pb2.EventEnvelope]]] = {}
            retried: dict[str, int] = {}
            folded: Counter[str] = Counter()
            last: envelope_pb2.EventEnvelope | None = None
            for event in events:
                message = event.message
                if message.topic == retries:
                    retried[(message.key or b"").decode()] = message.partition
                    continue
                envelopes = appended(event.value, message.headers)
                last = envelopes[-1]
                by_match.setdefault(last.match_id, []).append(envelopes)
                folded[last.stream] += len(envelopes)
            for key, appends in by_match.items():
                await fold_match(key, appends)
            for key, partition in retried.items():
                await fold_again(key, partition)
            if folded:  # first: a scrape that sees the new count sees this batch's end
                LAST_FOLD.set(time.time())
            for stream_name, count in folded.items():
                PROJECTOR_FOLDED.labels(stream_name).inc(count)
            if last is not None:
                PROJECTOR_LAG.set(max(0.0, time.time() - last.occurred_at.ToNanoseconds() / 1e9))

    return app


def main(config: Config) -> None:
    start_metrics_server(config.metrics_port, config.grpc_host)
    app = create_app(config)
    settle_after_startup()  # the games are loaded (create_app); Faust adds little after
    worker = faust.Worker(app, loglevel=config.log_level.upper(), quiet=True)
    worker.execute_from_commandline()
