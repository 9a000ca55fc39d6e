"""The bots process: plays every seat reserved for a bot (a seat with a bot level) of every
match in play, whoever created it, as a client of the gateway's public API with its own
credential (TABLETOP_BOTS_TOKEN). It keeps nothing: started again, it finds its seats
through the gateway. It serves gRPC health (and reflection) only, for probes."""

from __future__ import annotations

import asyncio
import contextlib

import grpc

from services.bots.dealer import Dealer
from services.bots.decide import workers
from services.bots.gateway_client import BotsGateway, channel
from services.bots.replicas import Replica
from services.bots.seat import in_workers
from services.common.config import Config
from services.common.logging import get_logger
from services.common.server import run_until_signalled

log = get_logger(__name__)


async def main(config: Config) -> None:
    replica = Replica(config.shard, config.bots_replicas)
    pool = workers(config.bots_workers)
    gateway_channel = channel(config.gateway_addr, config.tls_ca)
    dealer = Dealer(
        BotsGateway(gateway_channel, config.bots_token.decode()), replica, in_workers(pool)
    )
    running: asyncio.Task[None] | None = None

    def register(server: grpc.aio.Server) -> list[str]:
        return []

    async def start() -> None:
        nonlocal running
        running = asyncio.create_task(dealer.run())
        log.info("bots_playing", replica=replica.index, replicas=replica.count)

    async def stop() -> None:
        if running is not None:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        await gateway_channel.close()
        pool.shutdown(wait=False, cancel_futures=True)

    await run_until_signalled(config, register, start, stop)
