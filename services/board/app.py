"""The board process: recover matches from board.events, then serve tabletop.v1.Board."""

from __future__ import annotations

import asyncio

import grpc

from services.board.chance import RemoteChance
from services.board.lobby import LobbyService
from services.board.reveals import unrevealed
from services.board.service import BoardService
from services.common.calls.channel import CallChannel
from services.common.config import Config
from services.common.eventlog import EventLog
from services.common.ledger import EventSourceServicer, StreamWriter
from services.common.logging import get_logger
from services.common.server import peer_channel, run_until_signalled
from services.common.snapshots import release_memory
from services.common.stream_service import snapshotter_for
from services.common.topics import event_topic, transactional_id
from tabletop.v1 import (
    board_pb2,
    board_pb2_grpc,
    decks_pb2_grpc,
    dice_pb2_grpc,
    envelope_pb2,
    envelope_pb2_grpc,
)

log = get_logger(__name__)


async def main(config: Config) -> None:
    # One transactional id per shard: a restarted or duplicated shard fences the old one.
    event_log = EventLog(
        config.kafka,
        event_topic("board", config.topic_prefix),
        transactional_id=transactional_id("board", config.topic_prefix, config.shard),
        commit_interval_ms=config.board_commit_interval_ms,
    )
    writer = StreamWriter("board", event_log, config.kafka, config.shard, config.shards)
    dice_channel = peer_channel(config.dice_addrs[config.shard % len(config.dice_addrs)], config)
    decks_channel = peer_channel(config.decks_addrs[config.shard % len(config.decks_addrs)], config)
    # the calls to dice and decks go on one stream to each (services/common/calls/)
    dice = CallChannel(dice_channel, "dice")
    decks = CallChannel(decks_channel, "decks")
    chance = RemoteChance(dice_pb2_grpc.DiceStub(dice), decks_pb2_grpc.DecksStub(decks))
    service = BoardService(writer, chance, config.board_idle_held_s)
    lobby = LobbyService(service)
    store, snapshotter = snapshotter_for(
        config, "board", lambda: writer.snapshot() + service.snapshot(), lambda: writer.changes
    )

    def register(server: grpc.aio.Server) -> list[str]:
        board_pb2_grpc.add_BoardServicer_to_server(service, server)
        board_pb2_grpc.add_LobbyServicer_to_server(lobby, server)
        envelope_pb2_grpc.add_EventSourceServicer_to_server(EventSourceServicer(writer), server)
        return [
            board_pb2.DESCRIPTOR.services_by_name["Board"].full_name,
            board_pb2.DESCRIPTOR.services_by_name["Lobby"].full_name,
            envelope_pb2.DESCRIPTOR.services_by_name["EventSource"].full_name,
        ]

    tasks: list[asyncio.Task[None]] = []

    async def start() -> None:
        # Initialising the transactional producer aborts a zombie's open transaction.
        await event_log.start()
        await store.start()
        snapshot = await snapshotter.load()
        service.begin_recovery()
        if snapshot is not None:
            service.restore(snapshot)
        await writer.recover(service.apply, snapshot)
        service.end_recovery()
        service.refresh_gauges()
        restored, snapshot = snapshot is not None, None
        release_memory()
        tasks.append(asyncio.create_task(service.reveals.run()))
        tasks.append(asyncio.create_task(lobby.run()))
        tasks.append(asyncio.create_task(service.evict_forever()))
        tasks.append(asyncio.create_task(service.run_clocks()))
        if not restored:
            tasks.append(asyncio.create_task(resume_reveals()))
        else:
            snapshotter.start()

    async def resume_reveals() -> None:
        """Finished matches whose seeds were never revealed (the board stopped first)."""
        finished = set(writer.closed())  # the board closes a match when it ends
        topics = [event_topic(s, config.topic_prefix) for s in ("dice", "decks")]
        pending = sorted(await unrevealed(config.kafka, topics, finished))
        for match_id in pending:
            service.reveals.add(match_id, f"reveal:{match_id}")
        log.info("reveals_resumed", pending=len(pending))
        snapshotter.start()  # only now does the outbox hold every pending reveal

    async def stop() -> None:
        for task in tasks:
            task.cancel()
        await snapshotter.stop()
        await store.stop()
        await event_log.stop()
        await dice.close()
        await decks.close()
        await dice_channel.close()
        await decks_channel.close()

    await run_until_signalled(config, register, on_start=start, on_stop=stop)
