"""Dead-lettered matches: which are outstanding, and folding one again on request.

The dead-letter topic is the record of both sides: the projector writes one record per
event it could not fold or publish (``app.dead_letter``), and one ``resolved`` record
when a match it was asked to fold again (``tabletop admin deadletter retry``) folded
whole. A match is outstanding while its newest record there is a dead letter, so the
list survives every restart and every projector worker (and the CLI) reads the same one.

A retry is a record on the retry topic, keyed by match id and partitioned like the event
topics: the worker that owns the match reads it in order with the match's events, reads
the match's events of that partition from the beginning, and folds them from nothing
with the code it runs now (after the fix, a new image). A retry that fails again
dead-letters again; the stream goes on either way.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from services.common.eventlog import envelopes_of, partitions_of
from services.common.kafka_access import KafkaAccess
from services.common.logging import get_logger
from services.common.metrics import PROJECTOR_DEAD_LETTERED_MATCHES
from services.common.topics import STREAMS, dead_letter_topic, event_topic, retry_topic
from tabletop.v1 import envelope_pb2

log = get_logger(__name__)

#: how long the dead-letter watch waits before reading again after a failure
WATCH_RETRY_S = 5.0


@dataclass
class Outstanding:
    """A match whose views stopped: its first dead letter since it last folded whole."""

    match_id: str
    reason: str
    stream: str
    sequence: int
    event_type: str
    error: str
    #: offsets on the dead-letter topic of its first and newest dead letter
    offset: int
    last_offset: int
    events: int = 1


def resolved(match_id: str, events: int) -> bytes:
    """The record saying a match folded whole again (``events`` events from its start)."""
    return json.dumps({"match_id": match_id, "resolved": True, "events": events}).encode()


def note(out: dict[str, Outstanding], offset: int, record: dict[str, Any]) -> None:
    """Fold one record of the dead-letter topic into ``out``."""
    match_id = str(record.get("match_id", ""))
    if record.get("resolved"):
        out.pop(match_id, None)
        return
    known = out.get(match_id)
    if known is not None:
        known.events += 1
        known.last_offset = offset
        return
    out[match_id] = Outstanding(
        match_id=match_id,
        reason=str(record.get("reason", "")),
        stream=str(record.get("stream", "")),
        sequence=int(record.get("sequence", 0)),
        event_type=str(record.get("event_type", "")),
        error=str(record.get("error", "")),
        offset=offset,
        last_offset=offset,
    )


def outstanding(records: Iterable[tuple[int, dict[str, Any]]]) -> dict[str, Outstanding]:
    """Fold the dead-letter topic's (offset, record) pairs, in order."""
    out: dict[str, Outstanding] = {}
    for offset, record in records:
        note(out, offset, record)
    return out


def _consumer(kafka: KafkaAccess) -> AIOKafkaConsumer:
    return AIOKafkaConsumer(
        **kafka.client_options(),
        enable_auto_commit=False,
        isolation_level="read_committed",
        auto_offset_reset="earliest",
    )


async def _read_to_end(
    consumer: AIOKafkaConsumer, partitions: Sequence[TopicPartition]
) -> list[tuple[TopicPartition, Any]]:
    """Every record of ``partitions`` from the beginning to the end as of now."""
    for topic in {tp.topic for tp in partitions}:
        await partitions_of(consumer, topic)  # a clear error for a topic not created
    consumer.assign(list(partitions))
    await consumer.seek_to_beginning(*partitions)
    ends = await consumer.end_offsets(list(partitions))
    pending = {tp for tp in partitions if ends[tp] > 0}
    records: list[tuple[TopicPartition, Any]] = []
    while pending:
        batches = await consumer.getmany(*pending, timeout_ms=500)
        for tp, batch in batches.items():
            records.extend((tp, record) for record in batch)
        for tp in list(pending):
            if await consumer.position(tp) >= ends[tp]:
                pending.discard(tp)
    return records


async def read_outstanding(kafka: KafkaAccess, prefix: str) -> dict[str, Outstanding]:
    """The dead-lettered matches not folded whole since, from the dead-letter topic."""
    consumer = _consumer(kafka)
    await consumer.start()
    try:
        tp = TopicPartition(dead_letter_topic(prefix), 0)
        records = await _read_to_end(consumer, [tp])
        return outstanding((r.offset, json.loads(r.value)) for _, r in records)
    finally:
        await consumer.stop()


async def request_retry(kafka: KafkaAccess, prefix: str, match_ids: Sequence[str]) -> None:
    """Ask the projector to fold these matches again from their events."""
    producer = AIOKafkaProducer(**kafka.client_options(), acks="all")
    await producer.start()
    try:
        for match_id in match_ids:
            value = json.dumps({"match_id": match_id, "requested_at": time.time()}).encode()
            # the default partitioner over the match id, as the board's: the match's partition
            await producer.send_and_wait(retry_topic(prefix), value, key=match_id.encode())
    finally:
        await producer.stop()


async def match_events(
    kafka: KafkaAccess, prefix: str, match_id: str, partition: int
) -> list[envelope_pb2.EventEnvelope]:
    """The match's committed events in ``partition`` of every event topic: the board's in
    order first (a fold needs MatchCreated before anything else), then the others (seeds
    are revealed after the board's last event)."""
    key = match_id.encode()
    consumer = _consumer(kafka)
    await consumer.start()
    try:
        partitions = [TopicPartition(event_topic(s, prefix), partition) for s in STREAMS]
        records = await _read_to_end(consumer, partitions)
    finally:
        await consumer.stop()
    board = event_topic("board", prefix)
    mine = [(tp.topic != board, r) for tp, r in records if r.key == key]
    mine.sort(key=lambda pair: pair[0])  # stable: each topic keeps its order
    return [e for _, r in mine for e in envelopes_of(r.value, r.headers)]


async def watch(kafka: KafkaAccess, prefix: str) -> None:
    """Follow the dead-letter topic and keep the outstanding-matches gauge current. Every
    worker reads the whole topic, so every worker shows the same figure. Never raises (a
    failed task would stop the projector): a failure is logged and the reading starts over."""
    while True:
        try:
            await _follow(kafka, prefix)
        except Exception:
            log.exception("dead_letter_watch_failed")
            await asyncio.sleep(WATCH_RETRY_S)


async def _follow(kafka: KafkaAccess, prefix: str) -> None:
    consumer = AIOKafkaConsumer(
        dead_letter_topic(prefix),
        **kafka.client_options(),
        enable_auto_commit=False,
        auto_offset_reset="earliest",
    )
    await consumer.start()
    known: dict[str, Outstanding] = {}
    try:
        while True:
            batches = await consumer.getmany(timeout_ms=1000)
            for batch in batches.values():
                for record in batch:
                    note(known, record.offset, json.loads(record.value))
            PROJECTOR_DEAD_LETTERED_MATCHES.set(len(known))
    finally:
        await consumer.stop()
