"""The gateway process: follow the views topic, serve tabletop.v1.Gateway."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from services.common.config import Config
from services.common.eventlog import Tail
from services.common.server import peer_channel, run_until_signalled
from services.common.topics import views_topic
from services.gateway.auth import MAX_REQUEST_BYTES
from services.gateway.service import GatewayService
from services.gateway.sessionlog import SessionLog
from services.gateway.shards import Shard
from services.gateway.talk import TalkStore
from services.gateway.talklog import TalkLog
from services.gateway.viewstore import Holding, ViewStore
from services.gateway.web import WebServer, web_app


async def main(config: Config) -> None:
    views = ViewStore(Holding(config.finished_held_s, config.idle_held_s, config.matches_held))
    shards = [
        Shard(
            board,
            config.dice_addrs[i % len(config.dice_addrs)],
            config.decks_addrs[i % len(config.decks_addrs)],
            config,
            views.acknowledged,
        )
        for i, board in enumerate(config.board_addrs)
    ]
    scoring = peer_channel(config.scoring_addr, config)
    # No consumer group: every gateway replica keeps every match's newest view.
    # read_uncommitted: the projector publishes inside its Kafka transactions (committed
    # every few seconds); a view is a snapshot of committed board events, so showing it
    # before the projector's own commit is safe, and an aborted one is superseded.
    tail = Tail(
        config.kafka,
        [views_topic(config.topic_prefix)],
        None,
        isolation_level="read_uncommitted",
    )
    # table talk: its own producer and reader, beside the game's path (talklog.py)
    talk = TalkLog(config.kafka, config.topic_prefix, TalkStore())
    # refresh trades: every replica's, folded in the log's order (sessionlog.py)
    sessions = SessionLog(config.kafka, config.topic_prefix)
    service = GatewayService(shards, scoring, views, config, talk, sessions)
    edge = service.edge()
    consumer: asyncio.Task[None] | None = None
    evicting: asyncio.Task[None] | None = None

    def register(server: grpc.Server) -> list[str]:
        return edge.register(server)

    # The web port serves the same handlers over gRPC-Web, and the page.
    web = (
        WebServer(
            config,
            web_app(register, config.web_origins, config.web_dir, MAX_REQUEST_BYTES),
        )
        if config.web_port
        else None
    )

    async def start() -> None:
        nonlocal consumer, evicting
        await tail.start()
        consumer = asyncio.create_task(views.consume(tail))
        await talk.start()
        await sessions.start()
        evicting = asyncio.create_task(views.evict_forever())
        if web is not None:
            await web.start()

    async def stop() -> None:
        if web is not None:
            await web.stop()
        for task in (consumer, evicting):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        await tail.stop()
        await talk.stop()
        await sessions.stop()
        for shard in shards:
            await shard.close()
        await service.close()
        await scoring.close()

    await run_until_signalled(
        config, register, on_start=start, on_stop=stop, max_request_bytes=MAX_REQUEST_BYTES
    )
