"""Unit costs behind CPU per action, measured in one process so that alternating variants
share the machine's conditions (a load run's per-process CPU moves ±30% with other work).

``python -m tests.bench.costs [--rounds N]`` prints medians of:

- a unary gRPC call between two Tabletop services (client and server in this process, the
  servers' interceptors, the peer channel), on asyncio's loop and on uvloop;
- one transactional append of three events (``EventLog``, as the board appends a command)
  with 1 and with 20 appends in flight (group commit: concurrent appends share a
  transaction), on both loops, and the Kafka broker's CPU per append (needs
  ``.cache/kafka/kafka.pid``; other clients of the broker count too, so it is an upper bound).

Uses the broker at TABLETOP_KAFKA_BOOTSTRAP (127.0.0.1:9092) as its admin (the local
broker's credentials, or TABLETOP_KAFKA_ADMIN_PASSWORD) and a topic of its own, deleted
afterwards.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import uuid
from collections.abc import Callable, Coroutine
from typing import Any

import grpc
import uvloop
from aiokafka.admin import AIOKafkaAdminClient

from services.cli.stack import broker_admin
from services.common.envelope import Cause, make_envelope
from services.common.eventlog import EventLog, create_topics
from services.common.metrics import MetricsInterceptor
from services.common.peer_auth import PeerAuthInterceptor, PeerChannel
from services.common.topics import TopicSpec
from tabletop.v1 import platform_events_pb2

from .procstat import kafka_pid, process_cpu

TOKEN = b"t" * 40
LOOPS: dict[str, Callable[[], asyncio.AbstractEventLoop]] = {
    "asyncio": asyncio.new_event_loop,
    "uvloop": uvloop.new_event_loop,
}


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


async def grpc_call_us(calls: int = 1500, in_flight: int = 20) -> float:
    """CPU µs of one unary call, client and server side together."""
    server = grpc.aio.server(interceptors=[MetricsInterceptor(), PeerAuthInterceptor(TOKEN)])
    handler = grpc.unary_unary_rpc_method_handler(_echo)
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("t.E", {"P": handler}),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = PeerChannel(grpc.aio.insecure_channel(f"127.0.0.1:{port}"), TOKEN)
    call = channel.unary_unary("/t.E/P")
    payload = b"x" * 200

    async def caller(n: int) -> None:
        for _ in range(n):
            await call(payload, timeout=5)

    try:
        await caller(100)
        began = time.process_time()
        await asyncio.gather(*(caller(calls // in_flight) for _ in range(in_flight)))
        return (time.process_time() - began) / calls * 1e6
    finally:
        await channel.close()
        await server.stop(0)


async def append_us(topic: str, in_flight: int, appends: int = 300) -> tuple[float, float | None]:
    """(CPU µs of this process, of the Kafka broker) per transactional append of 3 events."""
    log = EventLog(broker_admin(), topic, transactional_id=f"{topic}-{uuid.uuid4().hex[:6]}")
    await log.start()
    cause = Cause("bench", "bench", "board")
    payload = platform_events_pb2.SeatJoined(seat="a", display_name="b")

    async def appender(match: int, n: int) -> None:
        for _ in range(n):
            envelopes = [
                make_envelope(
                    match_id=f"m{match}",
                    stream="board",
                    sequence=i + 1,
                    payload=payload,
                    cause=cause,
                )
                for i in range(3)
            ]
            await log.append(envelopes)

    kafka = kafka_pid()
    try:
        await appender(0, 20)
        broker = process_cpu(kafka) if kafka else None
        began = time.process_time()
        await asyncio.gather(*(appender(m, appends // in_flight) for m in range(in_flight)))
        ours = (time.process_time() - began) / appends * 1e6
        after = process_cpu(kafka) if kafka else None
        theirs = (after - broker) / appends * 1e6 if after is not None and broker else None
        return ours, theirs
    finally:
        await log.stop()


async def _topic(name: str, create: bool) -> None:
    if create:
        await create_topics(broker_admin(), [TopicSpec(name, 3, {})])
        return
    admin = AIOKafkaAdminClient(**broker_admin().client_options())
    await admin.start()
    try:
        await admin.delete_topics([name])
    finally:
        await admin.close()


def _on(loop: str, work: Coroutine[Any, Any, Any]) -> Any:
    with asyncio.Runner(loop_factory=LOOPS[loop]) as runner:
        return runner.run(work)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.costs", description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    topic = f"costs{uuid.uuid4().hex[:8]}.board.events"
    asyncio.run(_topic(topic, create=True))
    samples: dict[str, list[float]] = {}
    try:
        for _ in range(args.rounds):  # variants alternate: they share the machine's moments
            for loop in LOOPS:
                samples.setdefault(f"gRPC call, {loop}", []).append(_on(loop, grpc_call_us()))
                for in_flight in (1, 20):
                    ours, broker = _on(loop, append_us(topic, in_flight))
                    key = f"append, {in_flight} in flight, {loop}"
                    samples.setdefault(f"{key}: client", []).append(ours)
                    if broker is not None:
                        samples.setdefault(f"{key}: Kafka", []).append(broker)
    finally:
        asyncio.run(_topic(topic, create=False))
    for name, values in samples.items():
        spread = ", ".join(f"{v:.0f}" for v in values)
        print(f"{name:45} {statistics.median(values):7.0f} µs CPU  ({spread})")
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
