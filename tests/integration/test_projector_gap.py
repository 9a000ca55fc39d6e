"""A projector whose table is behind its committed offsets folds the match again from the
log instead of freezing it (a cluster CI run: a table write still in Faust's producer
buffer when the projector was stopped after committing past it; the next event came
after a missing one and the match was dead-lettered, its view stuck at v93 of 141).

Here the lost write is made by hand: with the projector stopped, the match's changelog
record is put back to an older one, as if the newer writes had never reached the broker.
The next event then comes after events the table has not folded."""

from __future__ import annotations

import asyncio
import json
import random
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer

from services.cli.client import GatewayClient, play_on
from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess
from services.common.topics import PROJECTOR_TABLES, changelog_topic
from services.projector.deadletters import match_events
from services.projector.folder import ProjectionFolder, decode_record
from tabletop.v1 import match_pb2
from tests.integration.helpers import newest_published, remove


@pytest.fixture
def own_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    prefix = f"gap{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka = kafka_admin
    try:
        stack.up()
        yield stack
    except BaseException:
        print((tmp_path / "run" / "projector.log").read_text()[-4000:])
        raise
    finally:
        stack.down()
        remove(stack)


async def _records(kafka: KafkaAccess, topic: str, key: bytes) -> list[bytes]:
    """Every changelog record of ``key``, oldest first."""
    consumer = AIOKafkaConsumer(
        topic, **kafka.client_options(), auto_offset_reset="earliest", enable_auto_commit=False
    )
    await consumer.start()
    try:
        found: list[bytes] = []
        while batches := await consumer.getmany(timeout_ms=3000):
            found += [r.value for rs in batches.values() for r in rs if r.key == key and r.value]
        return found
    finally:
        await consumer.stop()


async def _put(kafka: KafkaAccess, topic: str, key: bytes, value: bytes) -> None:
    producer = AIOKafkaProducer(**kafka.client_options())
    await producer.start()
    try:
        await producer.send_and_wait(topic, value, key=key)
    finally:
        await producer.stop()


def _metric(stack: Stack, name: str) -> float:
    with urllib.request.urlopen(f"http://{stack.metrics_addr('projector')}/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    return 0.0


def _published_version(stack: Stack, match_id: str) -> int:
    update = newest_published(stack, match_id)
    return 0 if update is None else update.summary.version


def _until(stack: Stack, match_id: str, version: int, limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while _published_version(stack, match_id) < version:
        assert time.monotonic() < deadline, f"the view did not reach v{version}"
        time.sleep(0.5)


def test_a_table_behind_its_committed_offsets_is_folded_again_from_the_log(
    own_stack: Stack,
) -> None:
    stack = own_stack
    client = GatewayClient(stack.addr("gateway"))
    rng = random.Random(5)

    def choose(_: str, legal: object) -> object:
        return rng.choice(list(legal.actions))  # type: ignore[attr-defined]

    match_id = client.create("crashland", ["solo"], {}, bots=["solo"])
    client.join_all(match_id, ["solo"])
    _, legal = play_on(client, match_id, "solo", choose, max_actions=3)
    _until(stack, match_id, legal.version)
    early = legal.version
    _, legal = play_on(client, match_id, "solo", choose, max_actions=6)
    assert not legal.next.finished, "the match ended too soon for this test"
    _until(stack, match_id, legal.version)
    behind_by = legal.version - early
    assert behind_by > 1

    # the projector stops (committing what it folded); the table's newest writes are lost
    topic = changelog_topic(PROJECTOR_TABLES[0], stack.topic_prefix)
    key = json.dumps(match_id).encode()  # the table's keys are JSON strings
    stack.stop("projector")
    records = asyncio.run(_records(stack.kafka, topic, key))
    older = [r for r in records if (m := decode_record(r)[0]) and m.version == early]
    assert older, "no changelog record of the match at the earlier version"
    asyncio.run(_put(stack.kafka, topic, key, older[-1]))
    stack.start("projector")
    stack.wait_healthy("projector")

    # the next event comes after ones the table has not folded: folded again, not frozen
    _, legal = play_on(client, match_id, "solo", choose, max_actions=1)
    _until(stack, match_id, legal.version)
    published = newest_published(stack, match_id)
    assert published is not None and published.summary.version == legal.version
    # what it published is what folding the match's events from nothing gives
    events = asyncio.run(match_events(stack.kafka, stack.topic_prefix, match_id, 0))
    _, update = ProjectionFolder().fold_batch(match_id, None, [events])
    assert update is not None
    assert match_pb2.ViewUpdate.FromString(update).state == published.state
    assert _metric(stack, "tabletop_projector_gaps_total") == 1
    assert _metric(stack, 'tabletop_projector_dead_letters_total{reason="fold_error"}') == 0
