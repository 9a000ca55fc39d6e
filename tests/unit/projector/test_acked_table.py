"""Why the projector's table is an ``AckedTable`` (services/projector/acked_table.py), and
what it gives: Faust's flush before a commit leaves table writes behind when the broker is
slow; ``acked()`` returns only once every write is through.

The app is built, never connected: the changelog topic's publish is replaced by one that
takes 0.3 s per record (a slow broker), since the flush gives up after 0.1 s without one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any, cast

import pytest

from services.common.config import Config
from services.projector.acked_table import AckedTable
from services.projector.app import create_app

SLOW_SEND_S = 0.3


@pytest.fixture(autouse=True)
def kafka_password(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLETOP_KAFKA_PASSWORD", "no-broker-here")


@pytest.fixture
async def slow_table(
    monkeypatch: pytest.MonkeyPatch,
) -> AsyncIterator[tuple[AckedTable, Any, list[str]]]:
    app = create_app(Config.from_env("projector"))
    table = cast(AckedTable, app.tables["match_states"])
    published: list[str] = []

    async def publish(fut: Any, wait: bool = False) -> None:
        await asyncio.sleep(SLOW_SEND_S)
        published.append(fut.message.key)
        fut.set_result(None)

    monkeypatch.setattr(table.changelog_topic, "publish_message", publish)
    buffer = app.producer.buffer
    await buffer.start()
    try:
        yield table, buffer, published
    finally:
        await table.acked()  # (a buffer stopped with writes in it refuses to flush)
        await buffer.stop()


def test_the_projectors_table_is_an_acked_table() -> None:
    app = create_app(Config.from_env("projector"))
    assert isinstance(app.tables["match_states"], AckedTable)


async def test_fausts_flush_leaves_table_writes_buffered_when_the_broker_is_slow(
    slow_table: tuple[AckedTable, Any, list[str]],
) -> None:
    """The library's behaviour AckedTable exists for: when this fails, Faust's flush
    waits for the buffer, and the table could be a plain one again."""
    table, buffer, published = slow_table
    for i in range(3):
        table.send_changelog(0, f"m{i}", b"record")
    await buffer.flush()  # what Faust awaits before it commits offsets
    assert buffer.size > 0 and len(published) < 3


async def test_acked_returns_once_every_changelog_write_is_through(
    slow_table: tuple[AckedTable, Any, list[str]],
) -> None:
    table, buffer, published = slow_table
    for i in range(3):
        table.send_changelog(0, f"m{i}", b"record")
    await table.acked()
    assert buffer.size == 0 and len(published) == 3
    await table.acked()  # nothing written since: returns at once
    table.send_changelog(0, "m3", b"record")
    await table.acked()
    assert len(published) == 4


async def test_acked_raises_what_the_producer_raised(
    slow_table: tuple[AckedTable, Any, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    table, _, _ = slow_table

    async def refuse(fut: Any, wait: bool = False) -> None:
        fut.set_exception(RuntimeError("the broker refused the write"))

    monkeypatch.setattr(table.changelog_topic, "publish_message", refuse)
    table.send_changelog(0, "m0", b"record")
    with pytest.raises(RuntimeError, match="refused"):
        await table.acked()
