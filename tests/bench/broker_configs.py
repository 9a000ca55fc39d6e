"""Dynamic Kafka broker settings for the length of a measurement, then restored
(``tests.bench.ab``'s ``broker.NAME=VALUE``).

Many broker settings change without a restart (``AlterConfigs``), so variants that differ
in one can alternate round by round on the one broker, as other variants do. aiokafka
speaks only the non-incremental ``AlterConfigs``, which replaces a broker's whole set of
dynamic settings: the set found before is written back after.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator, Mapping
from contextlib import asynccontextmanager, contextmanager

from aiokafka.admin import AIOKafkaAdminClient
from aiokafka.admin.config_resource import ConfigResource, ConfigResourceType

from services.common.kafka_access import KafkaAccess

#: DescribeConfigs' config_source of a setting made for one broker with AlterConfigs
DYNAMIC_BROKER_CONFIG = 2
#: how long a broker may take to apply an altered setting (it applies them asynchronously)
APPLY_TIMEOUT_S = 10.0

Settings = dict[str, str]


@contextmanager
def broker_configs(kafka: KafkaAccess, settings: Mapping[str, str]) -> Iterator[None]:
    """Every broker of the cluster runs with ``settings`` inside the block."""
    if not settings:
        yield
        return
    before = asyncio.run(_apply(kafka, dict(settings)))
    try:
        yield
    finally:
        asyncio.run(_restore(kafka, before))


async def dynamic_settings(kafka: KafkaAccess) -> dict[int, Settings]:
    """Each broker's settings made with AlterConfigs (node id → name → value)."""
    async with _admin(kafka) as admin:
        return {node: await _dynamic(admin, node) for node in await _nodes(admin)}


async def _apply(kafka: KafkaAccess, settings: Settings) -> dict[int, Settings]:
    async with _admin(kafka) as admin:
        before = {node: await _dynamic(admin, node) for node in await _nodes(admin)}
        for node, dynamic in before.items():
            await _alter(admin, node, {**dynamic, **settings})
        return before


async def _restore(kafka: KafkaAccess, before: Mapping[int, Settings]) -> None:
    async with _admin(kafka) as admin:
        for node, dynamic in before.items():
            await _alter(admin, node, dict(dynamic))


@asynccontextmanager
async def _admin(kafka: KafkaAccess) -> AsyncIterator[AIOKafkaAdminClient]:
    client = AIOKafkaAdminClient(**kafka.client_options())
    await client.start()
    try:
        yield client
    finally:
        await client.close()


async def _nodes(admin: AIOKafkaAdminClient) -> list[int]:
    cluster = await admin.describe_cluster()
    return sorted(int(broker["node_id"]) for broker in cluster["brokers"])


async def _dynamic(admin: AIOKafkaAdminClient, node: int) -> Settings:
    responses = await admin.describe_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(node), None)]
    )
    settings: Settings = {}
    for response in responses:
        for error_code, error_message, *_, entries in response.resources:
            if error_code:
                raise RuntimeError(f"broker {node}: DescribeConfigs failed: {error_message}")
            for name, value, _read_only, source, *_rest in entries:
                if source == DYNAMIC_BROKER_CONFIG and value is not None:
                    settings[name] = value
    return settings


async def _alter(admin: AIOKafkaAdminClient, node: int, settings: Settings) -> None:
    responses = await admin.alter_configs(
        [ConfigResource(ConfigResourceType.BROKER, str(node), settings)]
    )
    for response in responses:
        for error_code, error_message, *_ in response.resources:
            if error_code:
                raise RuntimeError(f"broker {node}: AlterConfigs failed: {error_message}")
    # Applied asynchronously: measuring before the broker runs with them would mix variants.
    loop = asyncio.get_running_loop()
    deadline = loop.time() + APPLY_TIMEOUT_S
    while await _dynamic(admin, node) != settings:
        if loop.time() > deadline:
            raise RuntimeError(f"broker {node} did not apply {sorted(settings)} in time")
        await asyncio.sleep(0.2)
