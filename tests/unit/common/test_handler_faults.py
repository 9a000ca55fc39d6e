"""A handler's own fault reaches the client as INTERNAL with a fixed sentence (grpc's
default names the Python exception) and is logged; a deliberate abort passes unchanged.
Real grpc.aio servers on the test's loop, every RPC shape. A call the client cancels is
counted Canceled, not as a fault."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.config import Config
from services.common.metrics import INTERNAL_DETAILS
from services.common.server import GrpcService


def _fault(kind: str) -> Any:
    decks: dict[str, int] = {}
    if kind == "bug":
        return decks["level_4"]
    raise AssertionError(kind)


async def _unary(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    if request == b"abort":
        await context.abort(grpc.StatusCode.FAILED_PRECONDITION, "not now")
    return bytes(_fault(request.decode()))


async def _replay(request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    yield b"first step"
    _fault(request.decode())


async def _chat(
    requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
) -> AsyncIterator[bytes]:
    async for request in requests:
        yield b"ack"
        _fault(request.decode())


@contextlib.asynccontextmanager
async def serving(
    monkeypatch: pytest.MonkeyPatch, more: dict[str, grpc.RpcMethodHandler] | None = None
) -> AsyncIterator[grpc.aio.Channel]:
    monkeypatch.setenv("TABLETOP_SECRET", "s" * 40)
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")

    def register(server: grpc.aio.Server) -> list[str]:
        handler = grpc.method_handlers_generic_handler(
            "test.Faulty",
            {
                "Unary": grpc.unary_unary_rpc_method_handler(_unary),
                "Replay": grpc.unary_stream_rpc_method_handler(_replay),
                "Chat": grpc.stream_stream_rpc_method_handler(_chat),
                **(more or {}),
            },
        )
        server.add_generic_rpc_handlers((handler,))
        return []

    service = GrpcService(Config.from_env("gateway"), register)
    port = await service.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield channel
    finally:
        await service.stop()


def _internal(caught: pytest.ExceptionInfo[grpc.aio.AioRpcError]) -> None:
    assert caught.value.code() == grpc.StatusCode.INTERNAL
    assert caught.value.details() == INTERNAL_DETAILS
    assert "class" not in caught.value.details() and "level_4" not in caught.value.details()


async def test_a_fault_in_a_unary_handler_is_internal_without_python_names(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(monkeypatch) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary("/test.Faulty/Unary")(b"bug", timeout=5)
        _internal(caught)
        with pytest.raises(grpc.aio.AioRpcError) as aborted:
            await channel.unary_unary("/test.Faulty/Unary")(b"abort", timeout=5)
        assert aborted.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert aborted.value.details() == "not now"


async def test_a_fault_mid_stream_ends_the_stream_internal_after_what_was_sent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(monkeypatch) as channel:
        received: list[bytes] = []
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for message in channel.unary_stream("/test.Faulty/Replay")(b"bug", timeout=5):
                received.append(message)
        assert received == [b"first step"]
        _internal(caught)

        chat = channel.stream_stream("/test.Faulty/Chat")(timeout=5)
        await chat.write(b"bug")
        assert await chat.read() == b"ack"
        with pytest.raises(grpc.aio.AioRpcError) as broken:
            await chat.read()
        _internal(broken)


async def _endless(
    requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext
) -> AsyncIterator[bytes]:
    async for _ in requests:
        yield b"ack"
        await asyncio.Event().wait()  # as PlayMatch waits for a match's next view


def _handled(method: str, code: str) -> float:
    labels = {"grpc_type": "bidi_stream", "grpc_service": "test.Faulty"}
    labels |= {"grpc_method": method, "grpc_code": code}
    return REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0


async def test_a_stream_the_client_cancels_is_counted_cancelled_not_unknown(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(
        monkeypatch, {"Endless": grpc.stream_stream_rpc_method_handler(_endless)}
    ) as channel:
        before = {code: _handled("Endless", code) for code in ("Canceled", "Unknown")}
        call = channel.stream_stream("/test.Faulty/Endless")(timeout=5)
        await call.write(b"hello")
        assert await call.read() == b"ack"
        call.cancel()
        for _ in range(200):  # the server learns of the cancellation a moment later
            if _handled("Endless", "Canceled") > before["Canceled"]:
                break
            await asyncio.sleep(0.01)
        assert _handled("Endless", "Canceled") == before["Canceled"] + 1
        assert _handled("Endless", "Unknown") == before["Unknown"]
