"""The event log against the real broker: atomic group commits and zombie fencing."""

from __future__ import annotations

import asyncio
import gc
import uuid
from collections import defaultdict

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from services.common.envelope import Cause, make_envelope
from services.common.eventlog import EventLog, LogUnavailable, create_topics, read_stream
from services.common.kafka_access import KafkaAccess
from services.common.metrics import TRANSACTION_BATCHES
from services.common.topics import TopicSpec
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.integration.helpers import scratch


def batch(match_id: str, first: int, size: int) -> list[envelope_pb2.EventEnvelope]:
    return [
        make_envelope(
            match_id=match_id,
            stream="board",
            sequence=first + i,
            payload=pe.MatchEnded(reason=f"{i}"),
            cause=Cause("t", "t", "t"),
        )
        for i in range(size)
    ]


async def fresh_topic(kafka: KafkaAccess) -> str:
    topic = scratch(kafka, f"test-log-{uuid.uuid4().hex[:8]}")
    await create_topics(kafka, [TopicSpec(topic, 3)])
    return topic


async def read_all(kafka: KafkaAccess, topic: str) -> dict[str, list[int]]:
    seen: dict[str, list[int]] = defaultdict(list)
    async for envelope in read_stream(kafka, [topic]):
        seen[envelope.match_id].append(envelope.sequence)
    return dict(seen)


def test_concurrent_transactional_appends_all_land_in_order(kafka: KafkaAccess) -> None:
    async def run() -> dict[str, list[int]]:
        topic = await fresh_topic(kafka)
        log = EventLog(kafka, topic, transactional_id=f"{topic}-writer")
        await log.start()
        try:
            for round_ in range(3):
                await asyncio.gather(
                    *(log.append(batch(f"m{i}", 1 + 2 * round_, 2)) for i in range(40))
                )
        finally:
            await log.stop()
        return await read_all(kafka, topic)

    seen = asyncio.run(run())
    assert seen == {f"m{i}": [1, 2, 3, 4, 5, 6] for i in range(40)}


def test_a_zombie_writer_is_fenced_and_its_append_is_not_seen(kafka: KafkaAccess) -> None:
    async def run() -> tuple[bool, dict[str, list[int]]]:
        topic = await fresh_topic(kafka)
        old = EventLog(kafka, topic, transactional_id=f"{topic}-shard-0")
        await old.start()
        await old.append(batch("m", 1, 1))
        new = EventLog(kafka, topic, transactional_id=f"{topic}-shard-0")
        await new.start()  # the replacement of the same shard fences the old one
        fenced = False
        try:
            await old.append(batch("zombie", 1, 1))
        except LogUnavailable:
            fenced = old.fenced
        await new.append(batch("m", 2, 1))
        await new.stop()
        await old.stop()
        return fenced, await read_all(kafka, topic)

    fenced, seen = asyncio.run(run())
    # The fenced producer drops futures that hold ProducerFenced; collect them now, not
    # in the middle of a later import (CPython 3.11 then fails compiling that module).
    gc.collect()
    assert fenced
    assert seen == {"m": [1, 2]}


def test_an_append_is_one_record_and_records_of_single_envelopes_still_read(
    kafka: KafkaAccess,
) -> None:
    async def run() -> tuple[list[int], dict[str, list[int]]]:
        topic = await fresh_topic(kafka)
        # a record as written before appends were batched: one envelope, no header
        legacy = AIOKafkaProducer(**kafka.client_options(), acks="all")
        await legacy.start()
        try:
            for envelope in batch("old", 1, 2):
                await legacy.send_and_wait(topic, envelope.SerializeToString(), key=b"old")
        finally:
            await legacy.stop()
        log = EventLog(kafka, topic, transactional_id=f"{topic}-writer")
        await log.start()
        try:
            ends = await log.append(batch("new", 1, 3))
        finally:
            await log.stop()
        partition = log.partition_of("new")
        consumer = AIOKafkaConsumer(
            **kafka.client_options(), isolation_level="read_committed", auto_offset_reset="earliest"
        )
        await consumer.start()
        try:
            tp = TopicPartition(topic, partition)
            consumer.assign([tp])
            fetched = await consumer.getmany(tp, timeout_ms=5000)
            offsets = [r.offset for r in fetched.get(tp, []) if r.key == b"new"]
        finally:
            await consumer.stop()
        assert ends == {partition: offsets[-1] + 1}
        return offsets, await read_all(kafka, topic)

    offsets, seen = asyncio.run(run())
    assert len(offsets) == 1  # three events, one record
    assert seen == {"old": [1, 2], "new": [1, 2, 3]}


def test_an_append_of_two_matches_is_refused(kafka: KafkaAccess) -> None:
    async def run() -> None:
        log = EventLog(kafka, await fresh_topic(kafka), transactional_id=None)
        await log.start()
        try:
            await log.append([*batch("a", 1, 1), *batch("b", 1, 1)])
        finally:
            await log.stop()

    with pytest.raises(ValueError, match="one match"):
        asyncio.run(run())


def _transactions(topic: str) -> tuple[float, float]:
    """(transactions committed, appends they carried) for ``topic`` so far."""
    samples = {
        s.name: s.value
        for metric in TRANSACTION_BATCHES.collect()
        for s in metric.samples
        if s.labels.get("topic") == topic
    }
    return (
        samples.get("tabletop_log_transaction_batches_count", 0.0),
        samples.get("tabletop_log_transaction_batches_sum", 0.0),
    )


def test_paced_commits_gather_the_appends_that_arrive_within_the_interval(
    kafka: KafkaAccess,
) -> None:
    async def run() -> tuple[float, float]:
        topic = await fresh_topic(kafka)
        log = EventLog(kafka, topic, transactional_id=f"{topic}-writer", commit_interval_ms=400)
        await log.start()
        try:
            await log.append(batch("a", 1, 1))  # a transaction begins: the next waits
            before = _transactions(topic)

            async def later(match_id: str, delay: float) -> None:
                await asyncio.sleep(delay)
                await log.append(batch(match_id, 1, 2))

            # 50 ms apart: without pacing each would have a transaction of its own
            await asyncio.gather(later("b", 0.0), later("c", 0.05), later("d", 0.1))
            after = _transactions(topic)
        finally:
            await log.stop()
        return after[0] - before[0], after[1] - before[1]

    transactions, appends = asyncio.run(run())
    assert (transactions, appends) == (1, 3)


async def _paced_for_an_hour(kafka: KafkaAccess) -> tuple[EventLog, str]:
    """A log whose next transaction waits out an hour unless every recent match is in;
    match "a" has appended (so it is one of them) and that first transaction is done."""
    topic = await fresh_topic(kafka)
    log = EventLog(kafka, topic, transactional_id=f"{topic}-writer", commit_interval_ms=3_600_000)
    await log.start()
    await log.append(batch("a", 1, 1))
    return log, topic


def test_a_paced_commit_waits_no_longer_once_every_recent_match_is_in(kafka: KafkaAccess) -> None:
    """A match appends one command at a time: once every match that appended of late has
    an append waiting, nothing more is on its way, and the transaction begins without
    waiting out the interval (an hour here: the test ends only if it does not)."""

    async def run() -> tuple[bool, float, float]:
        log, topic = await _paced_for_an_hour(kafka)
        try:
            before = _transactions(topic)
            b_and_c = [asyncio.create_task(log.append(batch(m, 1, 2))) for m in ("b", "c")]
            await asyncio.sleep(0.3)
            waited = not any(t.done() for t in b_and_c)  # a's next append may come
            await asyncio.wait_for(log.append(batch("a", 2, 1)), 10)
            await asyncio.wait_for(asyncio.gather(*b_and_c), 10)
            after = _transactions(topic)
        finally:
            await log.stop()
        return waited, after[0] - before[0], after[1] - before[1]

    waited, transactions, appends = asyncio.run(run())
    assert waited
    assert (transactions, appends) == (1, 3)


async def _matches_in(kafka: KafkaAccess, topic: str, isolation: str) -> set[str]:
    """The match ids (record keys) a consumer with ``isolation`` reads in ``topic`` now."""
    consumer = AIOKafkaConsumer(
        **kafka.client_options(), isolation_level=isolation, enable_auto_commit=False
    )
    await consumer.start()
    try:
        partitions = [TopicPartition(topic, p) for p in range(3)]
        consumer.assign(partitions)
        await consumer.seek_to_beginning(*partitions)
        ends = await consumer.end_offsets(partitions)
        seen: set[str] = set()
        while [tp for tp, end in ends.items() if await consumer.position(tp) < end]:
            for records in (await consumer.getmany(timeout_ms=500)).values():
                seen.update(record.key.decode() for record in records if record.key)
        return seen
    finally:
        await consumer.stop()


def test_a_paced_transaction_sends_what_it_gathers_before_it_commits(kafka: KafkaAccess) -> None:
    """While a paced transaction waits out its interval it is open already: its partitions
    are added and each append's records go to the broker as they arrive (a read_uncommitted
    consumer sees them), so its end leaves only the commit; nothing is committed before
    (a read_committed consumer sees none of them until then)."""

    async def run() -> tuple[set[str], set[str], set[str]]:
        log, topic = await _paced_for_an_hour(kafka)
        try:
            b_and_c = [asyncio.create_task(log.append(batch(m, 1, 1))) for m in ("b", "c")]
            sent: set[str] = set()
            for _ in range(50):  # they go out after the producer's linger (20 ms)
                await asyncio.sleep(0.1)
                sent = await _matches_in(kafka, topic, "read_uncommitted")
                if {"b", "c"} <= sent:
                    break
            committed_while_open = await _matches_in(kafka, topic, "read_committed")
            assert not any(t.done() for t in b_and_c)  # still waiting for a's next append
            await asyncio.wait_for(log.append(batch("a", 2, 1)), 10)
            await asyncio.wait_for(asyncio.gather(*b_and_c), 10)
            committed = await _matches_in(kafka, topic, "read_committed")
        finally:
            await log.stop()
        return sent, committed_while_open, committed

    sent, committed_while_open, committed = asyncio.run(run())
    assert {"b", "c"} <= sent
    assert committed_while_open == {"a"}
    assert committed == {"a", "b", "c"}


def test_range_reads_on_kept_consumers_return_exactly_their_range(kafka: KafkaAccess) -> None:
    """Finished matches are read back by consumers kept between reads: every read, on any
    partition, in any order, concurrent or not, returns its range's records and no other
    (nothing left buffered from the read before), only its key's when one is given, and
    reads after a failure still work."""

    async def run() -> None:
        topic = await fresh_topic(kafka)
        log = EventLog(kafka, topic, transactional_id=f"{topic}-writer")
        await log.start()
        try:
            placed: dict[str, list[tuple[int, int]]] = defaultdict(list)
            for round_ in range(4):
                results = await asyncio.gather(
                    *(log.append(batch(f"m{i}", 1 + 3 * round_, 3)) for i in range(12))
                )
                for i, written in enumerate(results):
                    ((partition, after),) = written.items()  # one record an append
                    placed[f"m{i}"].append((partition, after - 1))

            async def check(match_id: str, rounds: slice) -> None:
                spans = placed[match_id][rounds]
                partition = spans[0][0]
                start, end = spans[0][1], spans[-1][1] + 1
                got = await log.read_range(partition, start, end)
                assert {(r.partition, r.offset) for r in got} >= set(spans)
                assert all(start <= r.offset < end and r.partition == partition for r in got)
                mine = [r.envelope.sequence for r in got if r.envelope.match_id == match_id]
                first = 1 + 3 * (rounds.start or 0)
                assert mine == list(range(first, first + 3 * len(spans)))
                keyed = await log.read_range(partition, start, end, match_id.encode())
                assert [r.envelope.sequence for r in keyed] == mine  # the others skipped
                assert {r.envelope.match_id for r in keyed} == {match_id}

            for match_id in ("m3", "m0", "m3", "m7", "m11", "m0"):  # partitions change
                await check(match_id, slice(0, 4))
                await check(match_id, slice(1, 3))
            await asyncio.gather(*(check(f"m{i}", slice(i % 3, 4)) for i in range(12)))
            log.timeout = 1.0
            with pytest.raises(LogUnavailable):  # no such partition: that reader is dropped
                await log.read_range(99, 0, 1)
            log.timeout = 10.0
            await check("m5", slice(0, 4))
        finally:
            await log.stop()

    asyncio.run(run())
