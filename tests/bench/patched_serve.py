"""Experiments (``python -m tests.bench --experiment NAME``): a service run with one change
applied in memory, to measure a proposed optimisation before anyone writes it for real.
The shipped code is never modified; ``make bench`` without ``--experiment`` measures it as is.
(``txn-lock`` and ``group-commit`` patch the board's event log; the services' own group commit
landed in 51e8e59, so on later code they measure an equivalent of what ships.)

``python -m tests.bench.patched_serve SERVICE EXPERIMENT`` then runs the service normally.

- ``txn-lock``: the board's transactional appends take turns (an asyncio lock around
  ``EventLog.append``) — the smallest fix for concurrent commands sharing one transactional
  producer (aiokafka allows one open transaction per producer).
- ``plain-projector``: the projector replaced by ``plain_projector`` (the same folding with
  a plain aiokafka consumer instead of Faust).
- ``txn-backoff``: aiokafka retries a transaction refused with CONCURRENT_TRANSACTIONS
  (the previous commit's markers not written yet) after 1 ms instead of 20 ms.
- ``switch-interval``: every service runs with a GIL switch interval of 0.5 ms instead of
  5 ms (each has a second Python thread: gRPC's poller, Faust's consumer thread).
- ``fetch-wait``: the projector's Faust consumer long-polls for at most 5 ms instead of the
  1,500 ms Faust hard-codes (aiokafka keeps one fetch in flight per broker, and a fetch for
  quiet partitions holds back the busy ones until it returns).
- ``send-soon``: the projector's agent does not wait for each view's send (Faust's
  ``Topic.send`` scheduled as a task), to see whether that await paces the folding.
- ``group-commit``: concurrent commands' events share one Kafka transaction: while one
  transaction commits, the next batch gathers; each command still commits atomically (a
  batch is all or nothing) and a match's commands stay ordered (the board's per-match lock).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from services.common import eventlog, serve

EXPERIMENTS = (
    "txn-lock",
    "group-commit",
    "switch-interval",
    "plain-projector",
    "txn-backoff",
    "fetch-wait",
    "send-soon",
)

#: the ``fetch-wait`` experiment's longest fetch wait (Faust's consumer: 1,500 ms)
FETCH_WAIT_MS = 5

#: the ``txn-backoff`` experiment's wait before retrying AddPartitionsToTxn (aiokafka: 20 ms)
TXN_BACKOFF_S = 0.001

#: the GIL switch interval of the ``switch-interval`` experiment (CPython's default: 5 ms)
SWITCH_INTERVAL_S = 0.0005

Append = Callable[[Any, Sequence[Any]], Awaitable[dict[int, int]]]


class GroupCommit:
    """One transaction at a time; appends arriving meanwhile ride in the next one."""

    def __init__(self, event_log: Any) -> None:
        self._event_log = event_log
        self._pending: list[tuple[Sequence[Any], asyncio.Future[None]]] = []
        self._flusher: asyncio.Task[None] | None = None

    async def append(self, envelopes: Sequence[Any]) -> dict[int, int]:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending.append((envelopes, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())
        await done
        return {}  # offsets unknown: the writer reads back a little more after a failure

    async def _flush(self) -> None:
        producer = self._event_log._producer
        for _ in range(1_000_000):
            if not self._pending:
                return
            batch, self._pending = self._pending, []
            try:
                async with producer.transaction():
                    for envelopes, _ in batch:
                        for envelope in envelopes:
                            await producer.send(
                                self._event_log.topic,
                                value=envelope.SerializeToString(),
                                key=envelope.match_id.encode(),
                            )
            except Exception as error:  # every command of the batch failed: none is folded
                for _, done in batch:
                    if not done.done():
                        done.set_exception(error)
                continue
            for _, done in batch:
                if not done.done():
                    done.set_result(None)


def patch(experiment: str) -> None:
    if experiment == "plain-projector":
        return  # the stack runs tests.bench.plain_projector instead of the projector
    if experiment == "txn-backoff":
        # A transaction started right after a commit is refused with CONCURRENT_TRANSACTIONS
        # until the broker has written the commit markers (KAFKA-5477); aiokafka then waits
        # a fixed 20 ms (BACKOFF_OVERRIDE) before retrying.
        from aiokafka.producer import sender

        vars(sender)["BACKOFF_OVERRIDE"] = TXN_BACKOFF_S
        return
    if experiment == "fetch-wait":
        from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread

        create = AIOKafkaConsumerThread._create_worker_consumer

        def shorter_wait(self: Any, transport: Any) -> Any:
            consumer = create(self, transport)
            consumer._fetch_max_wait_ms = FETCH_WAIT_MS  # read by AIOKafkaConsumer.start()
            return consumer

        AIOKafkaConsumerThread._create_worker_consumer = shorter_wait  # type: ignore[method-assign]
        return
    if experiment == "send-soon":
        from faust.topics import Topic

        send = Topic.send

        async def soon(self: Any, **kwargs: Any) -> Any:
            return asyncio.ensure_future(send(self, **kwargs))

        Topic.send = soon  # type: ignore[method-assign]
        return
    if experiment == "switch-interval":
        # Every service runs a second thread (gRPC's poller, Faust's consumer thread): a
        # thread waking up waits up to the switch interval for the GIL held by the other.
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        return
    original: Append = eventlog.EventLog.append

    async def locked(self: Any, envelopes: Sequence[Any]) -> dict[int, int]:
        if self._transactional_id is None:
            return await original(self, envelopes)
        lock = self.__dict__.setdefault("_bench_lock", asyncio.Lock())
        async with lock:
            return await original(self, envelopes)

    async def grouped(self: Any, envelopes: Sequence[Any]) -> dict[int, int]:
        if self._transactional_id is None or not envelopes:
            return await original(self, envelopes)
        group: GroupCommit = self.__dict__.setdefault("_bench_group", GroupCommit(self))
        return await group.append(envelopes)

    replacement = {"txn-lock": locked, "group-commit": grouped}[experiment]
    eventlog.EventLog.append = replacement  # type: ignore[method-assign]


def main() -> None:
    service, experiment = sys.argv[1], sys.argv[2]
    if experiment not in EXPERIMENTS:
        raise SystemExit(f"unknown experiment {experiment!r}; choose from {EXPERIMENTS}")
    patch(experiment)
    serve.main([service])


if __name__ == "__main__":
    main()
