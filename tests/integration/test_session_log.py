"""Refresh trades decided by the log (services/gateway/sessionlog.py), against the real
broker: gateway replicas, each a ``SessionLog`` on one topic, catch a refresh token traded
twice whichever replicas the two trades reach, and a replica started later knows the
families closed before it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import pytest

from services.common.eventlog import create_topics
from services.common.kafka_access import KafkaAccess
from services.common.topics import sessions_topic, topic_specs
from services.gateway.sessionlog import SessionLog
from tests.integration.helpers import delete_topics

Replica = Callable[[], AbstractAsyncContextManager[SessionLog]]


@pytest.fixture
async def replica(kafka_admin: KafkaAccess) -> AsyncIterator[Replica]:
    prefix = f"ses{uuid.uuid4().hex[:8]}."
    specs = [s for s in topic_specs(prefix, partitions=2) if s.name == sessions_topic(prefix)]
    await create_topics(kafka_admin, specs)

    @asynccontextmanager
    async def started() -> AsyncIterator[SessionLog]:
        log = SessionLog(kafka_admin, prefix)
        await log.start()
        try:
            yield log
        finally:
            await log.stop()

    try:
        yield started
    finally:
        await delete_topics(kafka_admin, [sessions_topic(prefix)])


async def test_a_token_traded_at_one_replica_then_again_at_another_closes_its_family(
    replica: Replica,
) -> None:
    async with replica() as a, replica() as b:
        assert await a.trade("fam", 0)  # the owner refreshes at a
        assert await b.trade("fam", 1)  # and with the new token at b
        assert not await a.trade("fam", 1)  # a copy of generation 1 comes back at a
        assert not await b.trade("fam", 2)  # the owner's newest is closed, at b too
        assert await b.trade("other", 0)  # other families go on
    # a replica started afterwards reads the closing (and the claims) from the topic
    async with replica() as c:
        assert not await c.trade("fam", 2)
        assert not await c.trade("other", 0)  # traded before: a reuse here too


async def test_one_token_traded_at_two_replicas_at_once_is_traded_once(
    replica: Replica,
) -> None:
    async with replica() as a, replica() as b:
        for family in ("f1", "f2", "f3"):
            outcomes = await asyncio.gather(a.trade(family, 0), b.trade(family, 0))
            assert sorted(outcomes) == [False, True], family
