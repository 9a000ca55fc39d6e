"""The A/B tool's dynamic broker settings against the real broker: applied inside the
block, and the broker's own dynamic settings as they were after it (nested blocks show
both: the outer one's setting survives the inner one's and is gone after its own)."""

from __future__ import annotations

import asyncio

from services.common.kafka_access import KafkaAccess
from tests.bench.broker_configs import broker_configs, dynamic_settings

# Log-cleaner settings: dynamic, and nothing the other tests on this broker depend on.
BACKOFF = "log.cleaner.backoff.ms"
RETENTION = "log.cleaner.delete.retention.ms"


def settings_of(kafka: KafkaAccess) -> list[dict[str, str]]:
    return list(asyncio.run(dynamic_settings(kafka)).values())


def test_settings_hold_inside_the_block_and_are_restored_after(kafka_admin: KafkaAccess) -> None:
    kafka = kafka_admin  # broker settings are admin's
    before = settings_of(kafka)
    assert before and all(BACKOFF not in s and RETENTION not in s for s in before)
    with broker_configs(kafka, {BACKOFF: "15001"}):
        assert all(s.get(BACKOFF) == "15001" for s in settings_of(kafka))
        with broker_configs(kafka, {RETENTION: "86400001"}):
            inner = settings_of(kafka)
            assert all(s.get(RETENTION) == "86400001" for s in inner)
            assert all(s.get(BACKOFF) == "15001" for s in inner)
        assert all(s.get(BACKOFF) == "15001" and RETENTION not in s for s in settings_of(kafka))
    assert settings_of(kafka) == before


def test_no_settings_leave_the_brokers_own_in_place(kafka_admin: KafkaAccess) -> None:
    kafka = kafka_admin
    with broker_configs(kafka, {BACKOFF: "15002"}):
        with broker_configs(kafka, {}):
            assert all(s.get(BACKOFF) == "15002" for s in settings_of(kafka))
        assert all(s.get(BACKOFF) == "15002" for s in settings_of(kafka))
