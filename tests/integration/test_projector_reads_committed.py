"""The projector folds only committed board transactions (read_committed without Faust's
exactly_once: services/projector/faust_internals.py, reach 1), against a real broker."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaProducer

from services.cli.stack import Stack
from services.common.envelope import Cause, make_envelope
from services.common.topics import event_topic, topic_specs
from tabletop.v1 import platform_events_pb2 as pe
from tests.integration.helpers import delete_topics, eventually, newest_published


@pytest.fixture
def projector_only(kafka: str, tmp_path: Path) -> Iterator[Stack]:
    prefix = f"rc{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka_bootstrap = kafka
    try:
        stack.up(("projector",))
        yield stack
    except BaseException:
        print((tmp_path / "run" / "projector.log").read_text()[-4000:])
        raise
    finally:
        stack.down()
        asyncio.run(delete_topics(kafka, [s.name for s in topic_specs(prefix, 1)]))


def created(match_id: str) -> bytes:
    envelope = make_envelope(
        match_id=match_id,
        stream="board",
        sequence=1,
        payload=pe.MatchCreated(game="crashland", players=["astronaut"]),
        cause=Cause("c", "c", "board"),
        game="crashland",
    )
    envelope.last_in_batch = True
    return envelope.SerializeToString()


async def append(stack: Stack, committed: str, aborted: str, then: str) -> None:
    """Three transactions on board.events: one committed, one aborted, one committed."""
    topic = event_topic("board", stack.topic_prefix)
    producer = AIOKafkaProducer(
        bootstrap_servers=stack.kafka_bootstrap, transactional_id=f"test-{uuid.uuid4()}"
    )
    await producer.start()
    try:
        for match_id, commit in ((committed, True), (aborted, False), (then, True)):
            await producer.begin_transaction()
            await producer.send_and_wait(topic, created(match_id), key=match_id.encode())
            if commit:
                await producer.commit_transaction()
            else:
                await producer.abort_transaction()
    finally:
        await producer.stop()


def test_an_aborted_board_transaction_is_never_projected(projector_only: Stack) -> None:
    committed, aborted, then = (f"{name}-{uuid.uuid4().hex[:6]}" for name in "abc")
    asyncio.run(append(projector_only, committed, aborted, then))
    # the committed matches are published, in the order they were appended …
    eventually(lambda: newest_published(projector_only, then), timeout=60)
    assert newest_published(projector_only, committed) is not None
    # … and the aborted one, appended between them on the same partition, never is
    assert newest_published(projector_only, aborted) is None
