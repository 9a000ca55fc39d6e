"""Experiment ``plain-projector``: the projector's folding without Faust, to measure what
Faust's per-event pipeline costs. Not for production (no consumer group, no changelog,
no offsets: it folds every partition from offset 0 into memory on each start).

A plain aiokafka consumer (read_committed, like the projector) takes whatever has arrived
(``getmany``), folds it with the projector's own ``ProjectionFolder`` per match per batch
(keeping each match's record in memory, as the projector's table does) and publishes each
changed match's ``ViewUpdate`` once per batch, without waiting for each send.

``python -m tests.bench.plain_projector`` with the projector's TABLETOP_* environment.
"""

from __future__ import annotations

import asyncio
import signal
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from services.common.config import Config
from services.common.logging import configure_logging
from services.common.metrics import PROJECTOR_ASSIGNED, PROJECTOR_FOLDED, start_metrics_server
from services.common.topics import STREAMS, event_topic, views_topic
from services.projector.app import ProjectionFolder
from services.projector.folder import appended

#: a bound on one process's life (the benchmark stops it long before)
LIFETIME_S = 3600.0


async def _partitions(consumer: AIOKafkaConsumer, topic: str) -> list[TopicPartition]:
    for _ in range(100):
        found = consumer.partitions_for_topic(topic)
        if found:
            return [TopicPartition(topic, p) for p in sorted(found)]
        await consumer._client.force_metadata_update()
        await asyncio.sleep(0.1)
    raise RuntimeError(f"topic {topic!r} does not exist")


async def run(config: Config) -> None:
    consumer = AIOKafkaConsumer(
        **config.kafka.client_options(),
        isolation_level="read_committed",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=100,
    )
    producer = AIOKafkaProducer(
        **config.kafka.client_options(), acks="all", enable_idempotence=True
    )
    await consumer.start()
    await producer.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        assigned = [
            tp
            for stream in STREAMS
            for tp in await _partitions(consumer, event_topic(stream, config.topic_prefix))
        ]
        consumer.assign(assigned)
        await consumer.seek_to_beginning(*assigned)
        PROJECTOR_ASSIGNED.set(len(assigned))
        views = views_topic(config.topic_prefix)
        folder = ProjectionFolder()
        records: dict[str, bytes] = {}
        deadline = loop.time() + LIFETIME_S
        while not stop.is_set() and loop.time() < deadline:
            batches = await consumer.getmany(timeout_ms=100, max_records=2000)
            by_match: dict[str, list[Any]] = {}
            for messages in batches.values():
                for message in messages:
                    envelopes = appended(message.value, message.headers)
                    by_match.setdefault(envelopes[-1].match_id, []).append(envelopes)
                    PROJECTOR_FOLDED.labels(envelopes[-1].stream).inc(len(envelopes))
            for match_id, envelopes in by_match.items():
                record, update = folder.fold_batch(match_id, records.get(match_id), envelopes)
                if record is not None:
                    records[match_id] = record
                if update is not None:
                    await producer.send(views, key=match_id.encode(), value=update)
    finally:
        PROJECTOR_ASSIGNED.set(0)
        await producer.stop()
        await consumer.stop()


def main() -> None:
    config = Config.from_env("projector")
    configure_logging("projector", config.log_level)
    start_metrics_server(config.metrics_port, config.grpc_host)
    asyncio.run(run(config))


if __name__ == "__main__":
    main()
