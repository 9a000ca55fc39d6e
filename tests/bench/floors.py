"""Floors: what this machine allows for the pieces every action is made of, same run.

- a bare aiokafka ``send_and_wait`` (acks=all, idempotent, linger 0 — the services' settings)
  to the same broker, sequentially and with N writers in flight;
- the same write inside a Kafka transaction (what the board does per command);
- a Kafka hop: produce (acks=all) until a read_committed consumer holds the record;
- a bare grpc.aio unary echo to another process (see ``echo_server``), sequential and N in
  flight;
- a pure-Python no-op fold over a list of events.
"""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import tempfile
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from services.common.eventlog import create_topics
from services.common.kafka_access import KafkaAccess
from services.common.topics import TopicSpec

from .echo_server import UNARY
from .timing import closed_loop, now, timed_calls, window_rates

#: a record about the size of a board event envelope
PAYLOAD = b"x" * 320


@dataclass
class FloorRun:
    """One run's floor samples (ms for latencies, per second for rates)."""

    kafka_ack_ms: list[float] = field(default_factory=list)
    kafka_txn_ms: list[float] = field(default_factory=list)
    kafka_hop_ms: list[float] = field(default_factory=list)
    grpc_echo_ms: list[float] = field(default_factory=list)
    #: concurrency → per-second rates
    kafka_ack_rate: dict[int, list[float]] = field(default_factory=dict)
    grpc_echo_rate: dict[int, list[float]] = field(default_factory=dict)
    noop_fold_rate: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class FloorSizes:
    sequential: int
    rate_seconds: float
    concurrency: tuple[int, ...]
    fold_events: int
    fold_batches: int
    warmup: float = 0.5


# -- Kafka --------------------------------------------------------------------------------
def _producer(kafka: KafkaAccess, transactional_id: str | None = None) -> AIOKafkaProducer:
    return AIOKafkaProducer(
        **kafka.client_options(),
        acks="all",
        enable_idempotence=True,
        transactional_id=transactional_id,
        linger_ms=0,
    )


async def floor_topic(kafka: KafkaAccess, prefix: str) -> str:
    topic = f"{prefix}floor"
    await create_topics(kafka, [TopicSpec(topic, 1, {}, "benchmark floors")])
    return topic


async def kafka_ack(kafka: KafkaAccess, topic: str, count: int) -> list[float]:
    producer = _producer(kafka)
    await producer.start()
    try:
        return await timed_calls(
            lambda: producer.send_and_wait(topic, PAYLOAD, key=b"floor"), count
        )
    finally:
        await producer.stop()


async def kafka_txn(kafka: KafkaAccess, topic: str, count: int) -> list[float]:
    producer = _producer(kafka, f"{topic}-{uuid.uuid4()}")
    await producer.start()

    async def one() -> None:
        async with producer.transaction():
            await producer.send(topic, PAYLOAD, key=b"floor")

    try:
        return await timed_calls(one, count, warmup=5)
    finally:
        await producer.stop()


async def kafka_hop(kafka: KafkaAccess, topic: str, count: int) -> list[float]:
    """Produce one record at a time until a read_committed consumer has it."""
    producer = _producer(kafka)
    consumer = AIOKafkaConsumer(
        **kafka.client_options(), isolation_level="read_committed", enable_auto_commit=False
    )
    await producer.start()
    await consumer.start()
    try:
        partition = TopicPartition(topic, 0)
        consumer.assign([partition])
        await consumer.seek_to_end(partition)

        async def one() -> None:
            marker = uuid.uuid4().bytes
            await producer.send_and_wait(topic, PAYLOAD, key=marker)
            for _ in range(10_000):
                record = await asyncio.wait_for(consumer.getone(partition), 10)
                if record.key == marker:
                    return
            raise RuntimeError("kafka hop: the record never arrived")

        return await timed_calls(one, count)
    finally:
        await consumer.stop()
        await producer.stop()


async def kafka_ack_rate(
    kafka: KafkaAccess, topic: str, concurrency: int, seconds: float, warmup: float = 0.5
) -> list[float]:
    producer = _producer(kafka)
    await producer.start()
    try:
        stamps, start, end = await closed_loop(
            lambda: producer.send_and_wait(topic, PAYLOAD, key=b"floor"),
            concurrency,
            seconds,
            warmup,
        )
        return window_rates(stamps, start, end)
    finally:
        await producer.stop()


# -- gRPC ---------------------------------------------------------------------------------
@contextlib.asynccontextmanager
async def echo_server(start_limit_s: float = 30.0) -> AsyncIterator[str]:
    """An echo server in its own process; yields its address."""
    with tempfile.TemporaryDirectory(prefix="tabletop-bench-") as folder:
        port_file = Path(folder) / "port"
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "tests.bench.echo_server",
            str(port_file),
            stdin=subprocess.DEVNULL,
        )
        try:
            deadline = now() + start_limit_s
            while not (port := await asyncio.to_thread(_read_port, port_file)):
                if process.returncode is not None or now() > deadline:
                    raise RuntimeError("the echo server did not start")
                await asyncio.sleep(0.05)
            yield f"127.0.0.1:{port}"
        finally:
            await stop_process(process)


def _read_port(port_file: Path) -> str:
    try:
        return port_file.read_text().strip()
    except OSError:
        return ""


async def stop_process(process: asyncio.subprocess.Process, grace_s: float = 10.0) -> None:
    """SIGTERM the process we started, SIGKILL it if it does not go within ``grace_s``."""
    if process.returncode is not None:
        return
    process.terminate()
    try:
        await asyncio.wait_for(process.wait(), grace_s)
    except TimeoutError:
        process.kill()
        await asyncio.wait_for(process.wait(), grace_s)


def _echo_stub(channel: grpc.aio.Channel) -> Any:
    return channel.unary_unary(UNARY)


async def grpc_echo(address: str, count: int, payload: bytes = PAYLOAD) -> list[float]:
    async with grpc.aio.insecure_channel(address) as channel:
        echo = _echo_stub(channel)
        return await timed_calls(lambda: echo(payload), count, warmup=50)


async def grpc_echo_rate(
    address: str, concurrency: int, seconds: float, warmup: float = 0.5, payload: bytes = PAYLOAD
) -> list[float]:
    async with grpc.aio.insecure_channel(address) as channel:
        echo = _echo_stub(channel)
        stamps, start, end = await closed_loop(lambda: echo(payload), concurrency, seconds, warmup)
        return window_rates(stamps, start, end)


# -- folding ------------------------------------------------------------------------------
def _noop(state: Any, event: Any) -> Any:
    return state


def noop_fold_rate(events: Sequence[Any], batches: int) -> list[float]:
    """Events per second of ``state = evolve(state, event)`` with an evolve that does nothing."""
    rates: list[float] = []
    for _ in range(batches):
        state: Any = None
        began = now()
        for event in events:
            state = _noop(state, event)
        elapsed = now() - began
        if elapsed > 0:
            rates.append(len(events) / elapsed)
    return rates


# -- one run ------------------------------------------------------------------------------
async def measure_floors(kafka: KafkaAccess, prefix: str, sizes: FloorSizes) -> FloorRun:
    run = FloorRun()
    topic = await floor_topic(kafka, prefix)
    run.kafka_ack_ms = await kafka_ack(kafka, topic, sizes.sequential)
    run.kafka_txn_ms = await kafka_txn(kafka, topic, max(10, sizes.sequential // 4))
    run.kafka_hop_ms = await kafka_hop(kafka, topic, max(10, sizes.sequential // 2))
    for concurrency in sizes.concurrency:
        run.kafka_ack_rate[concurrency] = await kafka_ack_rate(
            kafka, topic, concurrency, sizes.rate_seconds, sizes.warmup
        )
    async with echo_server() as address:
        run.grpc_echo_ms = await grpc_echo(address, sizes.sequential * 2)
        for concurrency in sizes.concurrency:
            run.grpc_echo_rate[concurrency] = await grpc_echo_rate(
                address, concurrency, sizes.rate_seconds, sizes.warmup
            )
    events = list(range(sizes.fold_events))
    run.noop_fold_rate = noop_fold_rate(events, sizes.fold_batches)
    return run
