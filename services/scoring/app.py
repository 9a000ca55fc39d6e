"""The scoring process: restore its snapshot and the tail of scoring.events, then follow
board.events from the position the snapshot holds (from the start without one)."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from services.common.config import Config
from services.common.eventlog import EventLog, Follower
from services.common.holding import Holding, evict_forever
from services.common.ledger import EventSourceServicer, StreamWriter
from services.common.server import run_until_signalled
from services.common.snapshots import release_memory
from services.common.stream_service import snapshotter_for
from services.common.topics import event_topic, transactional_id
from services.scoring.service import ScoringService
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc, scoring_pb2, scoring_pb2_grpc

#: board.events is read in fetches of this much data, or after this long with less
SCORING_FETCH_MIN_BYTES = 256 * 1024
SCORING_FETCH_WAIT_MS = 200


async def main(config: Config) -> None:
    event_log = EventLog(
        config.kafka,
        event_topic("scoring", config.topic_prefix),
        transactional_id=transactional_id("scoring", config.topic_prefix),
    )
    writer = StreamWriter("scoring", event_log, config.kafka)
    service = ScoringService(
        writer, Holding(config.scoring_idle_held_s, config.scoring_matches_held)
    )
    store, snapshotter = snapshotter_for(
        config,
        "scoring",
        lambda: writer.snapshot() + service.snapshot(),
        lambda: writer.changes + service.followed_events,
    )
    board: Follower | None = None
    follower: asyncio.Task[None] | None = None
    evicting: asyncio.Task[None] | None = None

    async def follow(board: Follower) -> None:
        await service.resume()
        async for records in board.fetches():
            await service.on_board_records(records)

    def register(server: grpc.aio.Server) -> list[str]:
        scoring_pb2_grpc.add_ScoringServicer_to_server(service, server)
        envelope_pb2_grpc.add_EventSourceServicer_to_server(EventSourceServicer(writer), server)
        return [
            scoring_pb2.DESCRIPTOR.services_by_name["Scoring"].full_name,
            envelope_pb2.DESCRIPTOR.services_by_name["EventSource"].full_name,
        ]

    async def start() -> None:
        nonlocal board, follower, evicting
        await event_log.start()
        await store.start()
        snapshot = await snapshotter.load()
        if snapshot is not None:
            service.restore(snapshot)
        await writer.recover(service.apply, snapshot)
        del snapshot
        release_memory()
        # No consumer group: statistics need a match's whole history, so scoring keeps
        # its own position in board.events (and the envelopes of unscored matches).
        board = Follower(
            config.kafka,
            event_topic("board", config.topic_prefix),
            service.position,
            # Results are not awaited by a player: fetch a few times a second, not per event.
            fetch_max_wait_ms=SCORING_FETCH_WAIT_MS,
            fetch_min_bytes=SCORING_FETCH_MIN_BYTES,
        )
        await board.start()
        follower = asyncio.create_task(follow(board))
        evicting = asyncio.create_task(evict_forever(service.holding, service.evict_idle))
        snapshotter.start()

    async def stop() -> None:
        for task in (follower, evicting):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await snapshotter.stop()
        await store.stop()
        if board is not None:
            await board.stop()
        await event_log.stop()

    await run_until_signalled(config, register, on_start=start, on_stop=stop)
