"""Exactly once under broker faults, at the event-log level (real Kafka).

An append whose answer is lost (the broker died after the commit, the deadline passed)
must never be appended a second time when the command is retried: the writer settles
the outcome from the log itself. Readers count a duplicate sequence instead of hiding it.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import defaultdict
from collections.abc import Sequence

import pytest

from services.common.envelope import Cause, make_envelope
from services.common.eventlog import EventLog, LogUnavailable, create_topics, read_stream
from services.common.kafka_access import KafkaAccess
from services.common.ledger import StreamWriter
from services.common.metrics import LOG_DUPLICATES
from services.common.topics import TopicSpec
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.integration.helpers import scratch


class FlakyLog(EventLog):
    """Loses the answer of the next ``lose`` appends after they committed, or fails the
    next ``refuse`` appends before sending; ``unreadable`` read-backs fail."""

    lose = 0
    refuse = 0
    unreadable = 0
    stall = 0.0

    async def append(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> dict[int, int]:
        if self.refuse:
            self.refuse -= 1
            self._suspect = True
            raise LogUnavailable("refused before sending", outcome_unknown=True)
        written = await super().append(envelopes)
        if self.stall:
            stall, self.stall = self.stall, 0.0
            await asyncio.sleep(stall)  # committed, but the answer comes too late
        if self.lose:
            self.lose -= 1
            self._suspect = True
            raise LogUnavailable("the answer was lost", outcome_unknown=True)
        return written

    async def read_tail(self, partition: int, start: int) -> list:  # type: ignore[type-arg]
        if self.unreadable:
            self.unreadable -= 1
            raise LogUnavailable("the broker is away", outcome_unknown=True)
        return await super().read_tail(partition, start)


async def _writer(
    kafka: KafkaAccess, transactional: bool = True
) -> tuple[StreamWriter, FlakyLog, list[int]]:
    topic = scratch(kafka, f"test-once-{uuid.uuid4().hex[:8]}")
    await create_topics(kafka, [TopicSpec(topic, 3)])
    log = FlakyLog(kafka, topic, transactional_id=f"{topic}-w" if transactional else None)
    await log.start()
    writer = StreamWriter("board", log, kafka)
    applied: list[int] = []
    await writer.recover(lambda e: applied.append(e.sequence))
    return writer, log, applied


async def _sequences(kafka: KafkaAccess, topic: str) -> dict[str, list[tuple[int, str]]]:
    seen: dict[str, list[tuple[int, str]]] = defaultdict(list)
    async for envelope in read_stream(kafka, [topic]):
        seen[envelope.match_id].append((envelope.sequence, envelope.event_id))
    return dict(seen)


def ended(reason: str) -> pe.MatchEnded:
    return pe.MatchEnded(reason=reason)


CMD = Cause("cmd-1", "cmd-1", "ana")


@pytest.mark.parametrize("transactional", [True, False])
def test_an_append_whose_answer_is_lost_is_settled_as_committed(
    kafka: KafkaAccess, transactional: bool
) -> None:
    async def run() -> tuple[list[int], dict[str, list[tuple[int, str]]]]:
        writer, log, _ = await _writer(kafka, transactional)
        log.lose = 1
        first = await writer.append("m", [ended("a"), ended("b")], CMD)
        await writer.append("m", [ended("c")], Cause("cmd-2", "cmd-2", "ana"))
        await log.stop()
        return [e.sequence for e in first], await _sequences(kafka, log.topic)

    first, seen = asyncio.run(run())
    assert first == [1, 2]
    assert [s for s, _ in seen["m"]] == [1, 2, 3]


def test_a_retry_after_an_unknown_outcome_returns_the_first_events(kafka: KafkaAccess) -> None:
    async def run() -> tuple[list[str], list[str], dict[str, list[tuple[int, str]]]]:
        writer, log, _ = await _writer(kafka)
        log.lose, log.unreadable = 1, 1  # committed, and the read-back fails too
        with pytest.raises(LogUnavailable) as unknown:
            await writer.append("m", [ended("a"), ended("b")], CMD)
        assert unknown.value.outcome_unknown
        assert writer.version("m") == 0
        retried = await writer.append("m", [ended("a"), ended("b")], CMD)  # same command
        await log.stop()
        seen = await _sequences(kafka, log.topic)
        return [e.event_id for e in retried], [i for _, i in seen["m"]], seen

    retried, logged, seen = asyncio.run(run())
    assert [s for s, _ in seen["m"]] == [1, 2]  # once, not twice
    assert retried == logged


def test_another_command_after_an_unknown_outcome_folds_the_committed_one_first(
    kafka: KafkaAccess,
) -> None:
    async def run() -> tuple[list[int], list[int], dict[str, list[tuple[int, str]]]]:
        writer, log, applied = await _writer(kafka)
        log.lose, log.unreadable = 1, 1
        with pytest.raises(LogUnavailable):
            await writer.append("m", [ended("a")], CMD)
        with pytest.raises(LogUnavailable) as moved:  # decided on a stale state
            await writer.append("m", [ended("x")], Cause("cmd-2", "cmd-2", "bo"))
        assert not moved.value.outcome_unknown
        again = await writer.append("m", [ended("x")], Cause("cmd-2", "cmd-2", "bo"))
        await log.stop()
        return applied, [e.sequence for e in again], await _sequences(kafka, log.topic)

    applied, again, seen = asyncio.run(run())
    assert applied == [1]  # the committed event reached the owner's state
    assert again == [2]
    assert [s for s, _ in seen["m"]] == [1, 2]


def test_an_append_that_never_reached_the_log_is_appended_once_on_retry(kafka: KafkaAccess) -> None:
    async def run() -> dict[str, list[tuple[int, str]]]:
        writer, log, _ = await _writer(kafka)
        log.refuse = 1
        with pytest.raises(LogUnavailable) as absent:
            await writer.append("m", [ended("a")], CMD)
        assert not absent.value.outcome_unknown  # settled: nothing committed
        await writer.append("m", [ended("a")], CMD)
        await log.stop()
        return await _sequences(kafka, log.topic)

    assert [s for s, _ in asyncio.run(run())["m"]] == [1]


def test_recovery_counts_a_duplicate_sequence_and_keeps_the_first(kafka: KafkaAccess) -> None:
    async def run() -> tuple[list[str], str, float]:
        topic = scratch(kafka, f"test-dup-{uuid.uuid4().hex[:8]}")
        await create_topics(kafka, [TopicSpec(topic, 1)])
        raw = EventLog(kafka, topic)
        await raw.start()
        twins = [
            make_envelope(match_id="m", stream="board", sequence=1, payload=ended(r), cause=CMD)
            for r in ("first", "second")
        ]
        for envelope in twins:
            await raw.append([envelope])
        await raw.stop()
        before = LOG_DUPLICATES.labels("board")._value.get()
        writer = StreamWriter("board", EventLog(kafka, topic), kafka)
        await writer.recover(lambda e: None)
        after = LOG_DUPLICATES.labels("board")._value.get()
        return [e.event_id for e in writer.events("m")], twins[0].event_id, after - before

    held, first, counted = asyncio.run(run())
    assert held == [first]
    assert counted == 1


def test_a_caller_cancelled_during_its_append_gets_the_first_events_on_retry(
    kafka: KafkaAccess,
) -> None:
    async def run() -> tuple[list[str], dict[str, list[tuple[int, str]]]]:
        writer, log, _ = await _writer(kafka)
        log.stall = 30.0
        with pytest.raises(TimeoutError):  # e.g. the gRPC deadline of the call passed
            await asyncio.wait_for(writer.append("m", [ended("a")], CMD), 2.0)
        retried = await writer.append("m", [ended("a")], CMD)
        await log.stop()
        return [e.event_id for e in retried], await _sequences(kafka, log.topic)

    retried, seen = asyncio.run(run())
    assert [s for s, _ in seen["m"]] == [1]
    assert retried == [i for _, i in seen["m"]]
