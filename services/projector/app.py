"""The projector: a Faust app whose agent folds the four event streams into match views.

``create_app`` puts it together from parts a reader can take one at a time:

- ``load_games``: every game's readers and encoders made before the first event;
- ``settings``: Faust's settings, each one that differs from Faust's default with its why;
- ``faust_internals.install``: the delivery the app runs on (Faust's own, without its
  per-message tasks, reading read_committed; every reach into Faust and aiokafka is
  there, with its reason and upstream version);
- the read models, each a table and an agent declared on the app: ``MatchViews``
  (services/projector/match_views.py). Another read model is another such class;
- ``watch_dead_letters`` and ``count_assigned_partitions``: the gauges operators read.
"""

from __future__ import annotations

import contextlib
import functools
import os
from typing import Any

import faust
from aiokafka.partitioner import murmur2
from google.protobuf import any_pb2

from services.adapters.game_adapter import messages_for
from services.adapters.views import encode_state
from services.common.config import Config
from services.common.heap import collect_young_forever, settle_after_startup
from services.common.kafka_access import MECHANISM
from services.common.metrics import PROJECTOR_ASSIGNED, start_metrics_server
from services.common.topics import projector_group
from services.games.registry import all_games
from services.projector import deadletters, faust_internals
from services.projector.acked_table import AckedTable
from services.projector.faust_internals import BatchStream, Fetching
from services.projector.folder import ProjectionFolder
from services.projector.match_views import MatchViews

__all__ = ["ProjectionFolder", "create_app", "main"]

#: the most events the agent's channel holds before Faust holds their partition back
STREAM_BUFFER = 16_384
#: the most a produce batch for one partition gathers (below the broker's record batch
#: limit)
PRODUCER_BATCH_BYTES = 512 * 1024
#: table writes waiting in the producer's buffer before the conductor waits for it: a
#: batch writes one per match (at Faust's 100, a rebuild's batch of a few hundred matches
#: stopped the delivery to flush, "producer buffer full", before every next record)
TABLE_WRITES_BUFFERED = 2_000


def create_app(config: Config) -> faust.App:
    load_games()
    app_id = projector_group(config.topic_prefix)
    os.makedirs(config.data_dir, exist_ok=True)  # Faust creates its folder, not the parents
    app = faust.App(app_id, **settings(config, app_id))
    faust_internals.install(
        app, Fetching(config.projector_fetch_wait_ms, config.projector_fetch_min_bytes)
    )
    app.producer.buffer.max_messages = TABLE_WRITES_BUFFERED
    MatchViews(app, config)
    watch_dead_letters(app, config)
    collect_young(app)
    count_assigned_partitions(app)
    return app


def settings(config: Config, app_id: str) -> dict[str, Any]:
    """Faust's settings for the projector (each that is not Faust's default, and why)."""
    username, password = config.kafka.credentials()
    return {
        "datadir": os.path.join(config.data_dir, app_id),
        "broker": f"kafka://{config.kafka.bootstrap}",
        # as its own Kafka user, which may not create topics: the installation creates them
        "broker_credentials": faust.SASLCredentials(
            username=username, password=password, mechanism=MECHANISM
        ),
        "topic_allow_declare": False,
        "store": "memory://",
        # folds are idempotent by sequence number; faust_internals reads read_committed
        "processing_guarantee": "at_least_once",
        "topic_partitions": config.partitions,
        "topic_replication_factor": config.replication_factor,
        "consumer_auto_offset_reset": "earliest",
        # Static membership (KIP-345) when the worker has a stable identity (its pod
        # name): restarted after a crash it rejoins as itself and gets its partitions back
        # at once, not after the session timeout (kill -9 → ready 9–10 s, with it 2–4 s).
        "consumer_group_instance_id": config.instance_id or None,
        # A killed worker's partitions move once the group notices it is gone: after
        # the session timeout (Faust's default 60 s kept views frozen for about a minute).
        "broker_session_timeout": 10.0,
        "broker_heartbeat_interval": 2.0,
        "web_enabled": False,
        "producer_acks": -1,
        # A batch sends a view and a changelog record per match: a few milliseconds'
        # linger packs them into one produce request instead of one each (py-spy at 100
        # matches: a tenth of the projector's time went to socket writes).
        "producer_linger": config.projector_linger_ms / 1000,
        # aiokafka holds a send while its partition's batch is full until that batch is
        # sent; at Faust's 16 KiB a rebuild's updates and changelog records waited on one
        # produce request after another.
        "producer_max_batch_size": PRODUCER_BATCH_BYTES,
        "producer_partitioner": key_partitioner,
        # take_events takes what the channel holds at once (faust_internals)
        "Stream": BatchStream,
        # the agent waits for its table writes before its offsets may be committed
        "Table": AckedTable,
        # A fetch brings up to 1 MiB per partition (a few thousand records): at Faust's
        # 4,096 a rebuild filled the channel, and every record past it took the
        # conductor's slow path (2% of a rebuild's samples); 16,384 records of a few KiB
        # at most are tens of MiB.
        "stream_buffer_maxsize": STREAM_BUFFER,
    }


@functools.lru_cache(maxsize=65_536)
def _key_hash(key: bytes) -> int:
    return int(murmur2(key)) & 0x7FFFFFFF


def key_partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """aiokafka's default partitioner (murmur2 of the key, in Python), each key hashed once:
    a batch sends a view and a changelog record per match, keyed by its id."""
    if key is None:
        return all_partitions[0] if not available else available[0]
    return all_partitions[_key_hash(key) % len(all_partitions)]


def load_games() -> None:
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


def collect_young(app: faust.App) -> None:
    """Young garbage collections on a clock, as every service has (services/common/heap.py)."""

    async def collect() -> None:
        await collect_young_forever()

    app.task(collect)


def watch_dead_letters(app: faust.App, config: Config) -> None:
    """The outstanding dead-lettered matches, as a gauge (deadletters.watch)."""

    async def watch() -> None:
        await deadletters.watch(config.kafka, config.topic_prefix)

    app.task(watch)


def count_assigned_partitions(app: faust.App) -> None:
    """The partitions this worker folds, once its tables are recovered (0 meanwhile)."""

    async def ready(sender: Any, *args: Any, **kwargs: Any) -> None:
        PROJECTOR_ASSIGNED.set(len(sender.consumer.assignment()))

    async def rebalancing(sender: Any, *args: Any, **kwargs: Any) -> None:
        PROJECTOR_ASSIGNED.set(0)

    app.on_rebalance_complete.connect(ready)  # type: ignore[arg-type]
    app.on_partitions_revoked.connect(rebalancing)  # type: ignore[arg-type]


def main(config: Config) -> None:
    start_metrics_server(config.metrics_port, config.grpc_host)
    app = create_app(config)
    settle_after_startup()  # the games are loaded (create_app); Faust adds little after
    worker = faust.Worker(app, loglevel=config.log_level.upper(), quiet=True)
    worker.execute_from_commandline()
