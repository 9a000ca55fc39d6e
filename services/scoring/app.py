"""The scoring process: rebuild results from scoring.events, then follow board.events."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from services.common.config import Config
from services.common.eventlog import EventLog, Tail
from services.common.ledger import EventSourceServicer, StreamWriter
from services.common.logging import get_logger
from services.common.server import run_until_signalled
from services.common.topics import event_topic
from services.scoring.service import ScoringService
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc, scoring_pb2, scoring_pb2_grpc

log = get_logger(__name__)


async def main(config: Config) -> None:
    event_log = EventLog(
        config.kafka_bootstrap,
        event_topic("scoring", config.topic_prefix),
        transactional_id=f"{config.topic_prefix}tabletop-scoring",
    )
    writer = StreamWriter("scoring", event_log, config.kafka_bootstrap)
    service = ScoringService(writer)
    # No consumer group: scoring folds every match from the start of board.events, since
    # statistics need a match's whole history; results already scored are skipped.
    board = Tail(config.kafka_bootstrap, [event_topic("board", config.topic_prefix)], None)
    follower: asyncio.Task[None] | None = None

    async def follow() -> None:
        async for envelope in board:
            try:
                await service.on_board_event(envelope)
            except Exception:
                # One bad match must not stop scoring the others; it is logged loudly.
                log.exception("scoring_failed", match_id=envelope.match_id)

    def register(server: grpc.aio.Server) -> list[str]:
        scoring_pb2_grpc.add_ScoringServicer_to_server(service, server)
        envelope_pb2_grpc.add_EventSourceServicer_to_server(EventSourceServicer(writer), server)
        return [
            scoring_pb2.DESCRIPTOR.services_by_name["Scoring"].full_name,
            envelope_pb2.DESCRIPTOR.services_by_name["EventSource"].full_name,
        ]

    async def start() -> None:
        nonlocal follower
        await event_log.start()
        await writer.recover(service.apply)
        await board.start()
        follower = asyncio.create_task(follow())

    async def stop() -> None:
        if follower is not None:
            follower.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await follower
        await board.stop()
        await event_log.stop()

    await run_until_signalled(config, register, on_start=start, on_stop=stop)
