"""The bots service's calls wait out what the gateway asks to wait out (RESOURCE_EXHAUSTED
with retry-after-ms) and a service behind it restarting (UNAVAILABLE), and pass every other
refusal on at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import grpc
import pytest

from services.bots.gateway_client import patiently


def _error(
    code: grpc.StatusCode, trailing: tuple[tuple[str, str], ...] = ()
) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), details="refused"
    )


@pytest.fixture
def pauses(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)  # what patiently awaits
    return slept


def _failing(*errors: grpc.aio.AioRpcError) -> tuple[list[int], Callable[[], Awaitable[str]]]:
    calls = [0]

    async def call() -> str:
        calls[0] += 1
        if calls[0] <= len(errors):
            raise errors[calls[0] - 1]
        return "ok"

    return calls, call


def test_a_restart_behind_the_gateway_is_waited_out_with_growing_pauses(
    pauses: list[float],
) -> None:
    down = _error(grpc.StatusCode.UNAVAILABLE)
    calls, call = _failing(*[down] * 6)
    assert asyncio.run(patiently(call)) == "ok"
    assert calls[0] == 7
    assert pauses == [0.25, 0.5, 1.0, 2.0, 2.0, 2.0]


def test_retry_after_is_waited_as_the_gateway_asks(pauses: list[float]) -> None:
    busy = _error(grpc.StatusCode.RESOURCE_EXHAUSTED, (("retry-after-ms", "1500"),))
    calls, call = _failing(busy)
    assert asyncio.run(patiently(call)) == "ok"
    assert calls[0] == 2 and pauses == [1.5]


def test_other_refusals_reach_the_caller_at_once(pauses: list[float]) -> None:
    calls, call = _failing(_error(grpc.StatusCode.PERMISSION_DENIED))
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        asyncio.run(patiently(call))
    assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert calls[0] == 1 and pauses == []


def test_patience_ends(pauses: list[float]) -> None:
    down = _error(grpc.StatusCode.UNAVAILABLE)
    calls, call = _failing(*[down] * 10)
    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(patiently(call, tries=4))
    assert calls[0] == 4
