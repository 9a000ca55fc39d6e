"""Kafka knows who is writing: against the real broker, each of the stack's users may do
what services/common/kafka_acls.py allows and nothing else, and a client without a user
(or with a wrong password) cannot connect at all. Every refusal here is the broker's."""

from __future__ import annotations

import asyncio
import functools
import os
import stat
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import (
    GroupAuthorizationFailedError,
    KafkaConnectionError,
    NoError,
    TopicAuthorizationFailedError,
    TransactionalIdAuthorizationFailed,
    for_code,
)
from aiokafka.protocol.metadata import MetadataRequest

from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess, log_in
from services.common.kafka_acls import BENCH, users
from services.common.kafka_admin import acls_of
from services.common.topics import event_topic, projector_group, transactional_id, views_topic

ROOT = Path(__file__).resolve().parents[2]
#: long enough for a client to be refused, short enough that a hang fails the test
REFUSAL_S = 20.0


def refused(work: Callable[[], Awaitable[object]]) -> BaseException:
    """The error ``work`` ends with (it must end with one, within ``REFUSAL_S``)."""

    async def attempt() -> BaseException:
        try:
            await asyncio.wait_for(work(), REFUSAL_S)
        except TimeoutError as error:
            raise AssertionError(f"not refused within {REFUSAL_S:.0f} s") from error
        except Exception as error:
            return error
        raise AssertionError("allowed")

    return asyncio.run(attempt())


def board_end_offsets(stack: Stack) -> dict[TopicPartition, int]:
    async def read() -> dict[TopicPartition, int]:
        consumer = AIOKafkaConsumer(**stack.kafka_as(BENCH).client_options())
        await consumer.start()
        try:
            topic = event_topic("board", stack.topic_prefix)
            partitions = [TopicPartition(topic, p) for p in range(stack.partitions)]
            ends: dict[TopicPartition, int] = await consumer.end_offsets(partitions)
            return ends
        finally:
            await consumer.stop()

    return asyncio.run(read())


def test_the_projectors_user_cannot_append_to_board_events(stack: Stack) -> None:
    before = board_end_offsets(stack)

    async def append() -> None:
        producer = AIOKafkaProducer(
            **stack.kafka_as("projector").client_options(), request_timeout_ms=5000
        )
        await producer.start()
        try:
            topic = event_topic("board", stack.topic_prefix)
            await producer.send_and_wait(topic, b"forged", key=b"m", partition=0)
        finally:
            await producer.stop()

    assert isinstance(refused(append), TopicAuthorizationFailedError)
    assert board_end_offsets(stack) == before


def test_a_client_without_a_user_or_with_a_wrong_password_cannot_connect(stack: Stack) -> None:
    async def anonymous() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=stack.kafka.bootstrap)
        try:
            await admin.start()
            await admin.list_topics()
        finally:
            await admin.close()

    assert isinstance(refused(anonymous), KafkaConnectionError)

    board = stack.kafka_as("board")
    wrong = board.as_user(board.username, "not-" + board.password)

    async def guessing() -> None:
        admin = AIOKafkaAdminClient(**wrong.client_options())
        try:
            await admin.start()
            await admin.list_topics()
        finally:
            await admin.close()

    assert isinstance(refused(guessing), KafkaConnectionError)


def test_a_service_cannot_take_another_services_transactional_id(stack: Stack) -> None:
    """Taking the board's id would fence the board's producer (and settle its open
    transaction): the broker refuses it to every user but the board's."""

    async def fence_the_board() -> None:
        producer = AIOKafkaProducer(
            **stack.kafka_as("projector").client_options(),
            transactional_id=transactional_id("board", stack.topic_prefix, 0),
        )
        try:
            await producer.start()
        finally:
            await producer.stop()

    assert isinstance(refused(fence_the_board), TransactionalIdAuthorizationFailed)


def topic_errors(kafka: KafkaAccess, topics: list[str]) -> dict[str, type[Exception]]:
    """What the broker answers ``kafka``'s user about each topic (aiokafka's consumer only
    logs a refusal and asks again, forever)."""

    async def ask() -> dict[str, type[Exception]]:
        client = AIOKafkaClient(**kafka.client_options())
        await client.bootstrap()
        try:
            response = await client.send(client.get_random_node(), MetadataRequest(topics))
        finally:
            await client.close()
        return {topic: for_code(code) for code, topic, *_ in response.topics}

    return asyncio.run(ask())


def test_the_gateway_reads_the_views_and_not_the_events(stack: Stack) -> None:
    views, board = views_topic(stack.topic_prefix), event_topic("board", stack.topic_prefix)
    assert topic_errors(stack.kafka_as("gateway"), [views, board]) == {
        views: NoError,
        board: TopicAuthorizationFailedError,
    }
    assert topic_errors(stack.kafka_as("projector"), [board]) == {board: NoError}


def test_no_one_but_the_projector_reads_the_projectors_group(stack: Stack) -> None:
    """Its committed offsets are how far the views are folded: another user could read them
    (or, joining, take its partitions)."""

    async def read_offsets(kafka: KafkaAccess) -> None:
        consumer = AIOKafkaConsumer(
            **kafka.client_options(),
            group_id=projector_group(stack.topic_prefix),
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            await consumer.committed(TopicPartition(event_topic("board", stack.topic_prefix), 0))
        finally:
            await consumer.stop()

    for role in ("gateway", "board", BENCH):
        error = refused(functools.partial(read_offsets, stack.kafka_as(role)))
        assert isinstance(error, GroupAuthorizationFailedError), role


def test_a_removed_installations_users_log_in_no_more_and_hold_no_acl(
    kafka_admin: KafkaAccess, tmp_path: Path
) -> None:
    gone = Stack.ephemeral(tmp_path, f"gone{uuid.uuid4().hex[:6]}.")
    gone.kafka = kafka_admin
    gone.grant()
    board = gone.kafka_as("board")
    asyncio.run(log_in(board))
    gone.revoke()
    assert isinstance(refused(functools.partial(log_in, board)), KafkaConnectionError)
    assert asyncio.run(acls_of(kafka_admin, users(gone.topic_prefix))) == set()


@pytest.mark.skipif(
    bool(os.environ.get("TABLETOP_KAFKA_BOOTSTRAP")), reason="the local broker's files only"
)
def test_the_local_brokers_files_are_its_users_alone() -> None:
    home = Path(os.environ.get("KAFKA_HOME", ROOT / ".cache/kafka")).resolve()
    for path, mode in ((home, 0o700), (home / "data", 0o700), (home / "credentials.env", 0o600)):
        assert stat.S_IMODE(path.stat().st_mode) == mode, path
        assert path.stat().st_uid == os.getuid()
    assert stat.S_IMODE((home / "server.properties").stat().st_mode) & 0o077 == 0
