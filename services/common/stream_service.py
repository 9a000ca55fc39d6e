"""Running a service that owns one event stream (dice, decks): restore its newest snapshot
and the tail of its stream, then serve (and snapshot now and then, and at a clean stop)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Protocol

import grpc
from google.protobuf import message

from services.common.config import Config
from services.common.eventlog import EventLog
from services.common.holding import Holding, evict_forever
from services.common.ledger import EventSourceServicer, StreamWriter
from services.common.server import run_until_signalled
from services.common.snapshots import (
    KafkaSnapshotStore,
    Snapshot,
    Snapshotter,
    Take,
    release_memory,
)
from services.common.topics import event_topic, snapshot_topic, transactional_id
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc


class StreamOwner(Protocol):
    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None: ...

    def begin_recovery(self) -> None:
        """From here until ``end_recovery`` the owner may hold back what ``apply`` gets."""

    def end_recovery(self) -> None:
        """Fold what was held back: the state is complete from here on."""

    def snapshot(self) -> list[message.Message]:
        """The owner's own state as snapshot parts (what the writer's open matches lack)."""

    def restore(self, snapshot: Snapshot) -> None:
        """Take the owner's state from ``snapshot`` (before the open matches are folded)."""

    @property
    def holding(self) -> Holding:
        """Which of its matches the owner may let go of (``evict_idle``)."""

    def evict_idle(self) -> int:
        """Let go of the matches past the holding limits; how many left."""


def snapshotter_for(
    config: Config, stream: str, take: Take, changes: Callable[[], int]
) -> tuple[KafkaSnapshotStore, Snapshotter]:
    store = KafkaSnapshotStore(
        config.kafka,
        snapshot_topic(stream, config.topic_prefix),
        stream,
        config.shard,
        shards=config.shards,
    )
    snapshotter = Snapshotter(
        store,
        stream,
        take,
        changes,
        config.snapshot_every_events,
        config.snapshot_every_seconds,
    )
    return store, snapshotter


async def serve_stream_owner(
    config: Config,
    stream: str,
    make_service: Callable[[StreamWriter], StreamOwner],
    add_to_server: Callable[[Any, grpc.aio.Server], None],
    service_name: str,
) -> None:
    # Transactional, like the board: after an append with an unknown outcome the writer
    # replaces its producer, and only a transactional replacement fences the old one (a
    # late write of the old producer is refused, so reading the log back is conclusive).
    event_log = EventLog(
        config.kafka,
        event_topic(stream, config.topic_prefix),
        transactional_id=transactional_id(stream, config.topic_prefix, config.shard),
    )
    writer = StreamWriter(stream, event_log, config.kafka, config.shard, config.shards)
    service = make_service(writer)
    store, snapshotter = snapshotter_for(
        config, stream, lambda: writer.snapshot() + service.snapshot(), lambda: writer.changes
    )

    def register(server: grpc.aio.Server) -> list[str]:
        add_to_server(service, server)
        envelope_pb2_grpc.add_EventSourceServicer_to_server(EventSourceServicer(writer), server)
        return [service_name, envelope_pb2.DESCRIPTOR.services_by_name["EventSource"].full_name]

    evicting: asyncio.Task[None] | None = None

    async def start() -> None:
        await event_log.start()  # fences a previous instance: the tail read is conclusive
        await store.start()
        snapshot = await snapshotter.load()
        service.begin_recovery()
        if snapshot is not None:
            service.restore(snapshot)
        await writer.recover(service.apply, snapshot)
        service.end_recovery()
        del snapshot
        release_memory()
        snapshotter.start()
        nonlocal evicting
        evicting = asyncio.create_task(evict_forever(service.holding, service.evict_idle))

    async def stop() -> None:
        if evicting is not None:
            evicting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await evicting
        await snapshotter.stop()
        await store.stop()
        await event_log.stop()

    await run_until_signalled(config, register, on_start=start, on_stop=stop)
