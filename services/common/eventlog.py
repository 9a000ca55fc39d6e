"""The event log over Kafka (aiokafka): append atomically, read a stream back, tail streams.

Producers use acks=all and idempotence; a writer given a transactional id appends each
command's events in one Kafka transaction, and a newer instance with the same id fences a
zombie. Readers use read_committed so an aborted append is never seen.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Sequence

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError
from aiokafka.producer import sender as _aiokafka_sender

from services.common.logging import get_logger
from services.common.topics import TopicSpec
from tabletop.v1 import envelope_pb2

log = get_logger(__name__)

# A transaction begun right after a commit is refused with CONCURRENT_TRANSACTIONS until
# the broker has written the previous commit's markers (a millisecond or two); aiokafka
# then sleeps a fixed 20 ms before retrying, which capped a board shard at ~45 commands/s
# for one match (measured: tests/bench, experiment txn-backoff). Retry after 2 ms instead.
TXN_RETRY_BACKOFF_S = 0.002
vars(_aiokafka_sender)["BACKOFF_OVERRIDE"] = TXN_RETRY_BACKOFF_S


class EventLog:
    """Appends envelopes to one stream's topic, keyed by match id.

    Transactional appends are group-committed: a Kafka producer runs one transaction at a
    time, so the batches of concurrent commands that arrive while a transaction is in
    flight share the next one. Each batch stays atomic (all of it is in one committed
    transaction or none of it is), and concurrency costs one commit instead of many.
    """

    def __init__(self, bootstrap: str, topic: str, transactional_id: str | None = None) -> None:
        self.topic = topic
        self._transactional = transactional_id is not None
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap,
            acks="all",
            enable_idempotence=True,
            transactional_id=transactional_id,
            # Transactional: records wait in the batch until the commit flushes them (the
            # commit never waits for the linger), so one command is one produce request.
            linger_ms=20 if transactional_id is not None else 0,
        )
        self._pending: list[tuple[Sequence[envelope_pb2.EventEnvelope], asyncio.Future[None]]] = []
        self._wake = asyncio.Event()
        self._committer: asyncio.Task[None] | None = None

    async def start(self) -> None:
        await self._producer.start()
        if self._transactional:
            self._committer = asyncio.create_task(self._commit_forever())

    async def stop(self) -> None:
        if self._committer is not None:
            self._committer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._committer
        for _, done in self._pending:
            if not done.done():
                done.set_exception(RuntimeError("the event log stopped before this append"))
        self._pending = []
        await self._producer.stop()

    async def append(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> None:
        """Durably append ``envelopes`` (all or none, when transactional)."""
        if not envelopes:
            return
        if self._transactional:
            done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._pending.append((envelopes, done))
            self._wake.set()
            await done
            return
        futures = [await self._send(envelope) for envelope in envelopes]
        await asyncio.gather(*futures)

    async def _send(self, envelope: envelope_pb2.EventEnvelope) -> asyncio.Future[object]:
        future: asyncio.Future[object] = await self._producer.send(
            self.topic, value=envelope.SerializeToString(), key=envelope.match_id.encode()
        )
        return future

    async def _commit_forever(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            batches, self._pending = self._pending, []
            if not batches:
                continue
            try:
                async with self._producer.transaction():
                    for envelopes, _ in batches:
                        for envelope in envelopes:
                            await self._send(envelope)
            except Exception as error:  # every batch of the failed transaction fails
                for _, done in batches:
                    if not done.done():
                        done.set_exception(error)
                continue
            for _, done in batches:
                if not done.done():
                    done.set_result(None)


async def read_stream(
    bootstrap: str, topics: Sequence[str]
) -> AsyncIterator[envelope_pb2.EventEnvelope]:
    """Every committed envelope in ``topics`` from the beginning to the end as of now."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap,
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )
    await consumer.start()
    try:
        partitions = [
            TopicPartition(topic, p)
            for topic in topics
            for p in sorted(await _partitions_of(consumer, topic))
        ]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        pending = {tp for tp in partitions if ends[tp] > 0}
        while pending:
            batches = await consumer.getmany(*pending, timeout_ms=500)
            for records in batches.values():
                for record in records:
                    yield envelope_pb2.EventEnvelope.FromString(record.value)
            for tp in list(pending):
                if await consumer.position(tp) >= ends[tp]:
                    pending.discard(tp)
    finally:
        await consumer.stop()


async def _partitions_of(consumer: AIOKafkaConsumer, topic: str) -> set[int]:
    for _ in range(50):
        partitions = consumer.partitions_for_topic(topic)
        if partitions:
            return set(partitions)
        await consumer._client.force_metadata_update()
        await asyncio.sleep(0.1)
    raise RuntimeError(f"topic {topic!r} does not exist; create the topics first")


class Tail:
    """Follows topics in a consumer group from the committed offsets (or the beginning)."""

    def __init__(
        self,
        bootstrap: str,
        topics: Sequence[str],
        group_id: str | None,
        isolation_level: str = "read_committed",
    ) -> None:
        self._consumer = AIOKafkaConsumer(
            *topics,
            bootstrap_servers=bootstrap,
            group_id=group_id,
            enable_auto_commit=group_id is not None,
            auto_offset_reset="earliest",
            isolation_level=isolation_level,
        )

    async def start(self) -> None:
        await self._consumer.start()

    async def stop(self) -> None:
        await self._consumer.stop()

    async def __aiter__(self) -> AsyncIterator[envelope_pb2.EventEnvelope]:
        async for record in self._consumer:
            yield envelope_pb2.EventEnvelope.FromString(record.value)

    async def records(self) -> AsyncIterator[tuple[str, bytes]]:
        async for record in self._consumer:
            yield record.topic, record.value


async def create_topics(
    bootstrap: str, specs: Sequence[TopicSpec], replication_factor: int = 1
) -> list[str]:
    """Create the topics that don't exist yet; returns the names created."""
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap)
    await admin.start()
    try:
        existing = set(await admin.list_topics())
        missing = [s for s in specs if s.name not in existing]
        if missing:
            with contextlib.suppress(TopicAlreadyExistsError):
                await admin.create_topics(
                    [
                        NewTopic(
                            name=s.name,
                            num_partitions=s.partitions,
                            replication_factor=replication_factor,
                            topic_configs=s.config,
                        )
                        for s in missing
                    ]
                )
        return [s.name for s in missing]
    finally:
        await admin.close()
