"""A graceful stop (GrpcService.stop) answers the calls its grace would cut off with
UNAVAILABLE and a sentence saying to retry (clients retry UNAVAILABLE with the same command
id, never CANCELLED); a call that finishes within the grace has its answer; a call made once
the stop began is refused UNAVAILABLE. A gateway-like handler waiting on a board when its
own server stops answers UNAVAILABLE too. Real grpc.aio servers and clients on the test's
loop; the handlers wait on events, never on the clock."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.config import Config
from services.common.server import RESTARTING, GrpcService
from services.gateway.refusals import Refused, relay
from services.gateway.shards import Shard
from tabletop.v1 import board_pb2

#: the stop's grace in these tests: calls still running after 0.75 s are answered
GRACE_S = "1.0"
#: a client's deadline, far beyond the grace (a call that hangs fails the test, not CI)
T = 20.0
BOARD = board_pb2.DESCRIPTOR.services_by_name["Board"].full_name


class Waits:
    """Handlers that signal when they run and answer once released (or never)."""

    def __init__(self) -> None:
        self.started: asyncio.Queue[str] = asyncio.Queue()
        self.release = asyncio.Event()
        self.cleaned_up: list[str] = []

    async def forever(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.started.put_nowait("forever")
        try:
            await asyncio.Event().wait()  # as a handler waits on a peer that does not answer
        finally:
            self.cleaned_up.append("forever")
        raise AssertionError("never released")

    async def released(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        self.started.put_nowait("released")
        await self.release.wait()
        return b"the real answer"

    async def live(self, request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        yield b"view 1"
        self.started.put_nowait("live")
        await asyncio.Event().wait()  # as WatchMatch waits for a match's next view
        yield b"never"


@contextlib.asynccontextmanager
async def serving(
    monkeypatch: pytest.MonkeyPatch, waits: Waits
) -> AsyncIterator[tuple[GrpcService, grpc.aio.Channel]]:
    monkeypatch.setenv("TABLETOP_SECRET", "s" * 40)
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", GRACE_S)

    def register(server: grpc.aio.Server) -> list[str]:
        handler = grpc.method_handlers_generic_handler(
            "test.Slow",
            {
                "Forever": grpc.unary_unary_rpc_method_handler(waits.forever),
                "Released": grpc.unary_unary_rpc_method_handler(waits.released),
                "Live": grpc.unary_stream_rpc_method_handler(waits.live),
            },
        )
        server.add_generic_rpc_handlers((handler,))
        return []

    service = GrpcService(Config.from_env("gateway"), register)
    port = await service.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield service, channel
    finally:
        await service.stop()


def _restarting(error: BaseException) -> None:
    assert isinstance(error, grpc.aio.AioRpcError), error
    assert (error.code(), error.details()) == (grpc.StatusCode.UNAVAILABLE, RESTARTING)


def _handled(method: str, code: str) -> float:
    labels = {"grpc_type": "unary", "grpc_service": "test.Slow", "grpc_method": method}
    return (
        REGISTRY.get_sample_value("grpc_server_handled_total", {**labels, "grpc_code": code}) or 0
    )


async def test_calls_the_grace_would_cut_off_end_unavailable_and_the_rest_are_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    waits = Waits()
    async with serving(monkeypatch, waits) as (service, channel):
        before = _handled("Forever", "Unavailable")
        stuck = asyncio.ensure_future(channel.unary_unary("/test.Slow/Forever")(b"", timeout=T))
        finishing = asyncio.ensure_future(
            channel.unary_unary("/test.Slow/Released")(b"", timeout=T)
        )
        live = channel.unary_stream("/test.Slow/Live")(b"", timeout=T)
        assert await live.read() == b"view 1"
        assert {await waits.started.get() for _ in range(3)} == {"forever", "released", "live"}

        began = asyncio.Event()
        server_stop = service.server.stop

        async def stop(grace: float | None) -> None:
            began.set()
            await server_stop(grace)  # the server refuses new calls from its first step

        monkeypatch.setattr(service.server, "stop", stop)
        stopping = asyncio.ensure_future(service.stop())
        await began.wait()
        waits.release.set()  # it finishes within the grace
        assert await finishing == b"the real answer"

        # made once the stop began: refused (the server no longer takes calls)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await channel.unary_unary("/test.Slow/Released")(b"", timeout=T)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE

        # still running near the grace's end: UNAVAILABLE, saying to retry, not CANCELLED
        with pytest.raises(grpc.aio.AioRpcError) as cut_off:
            await stuck
        _restarting(cut_off.value)
        with pytest.raises(grpc.aio.AioRpcError) as ended:
            await live.read()
        _restarting(ended.value)
        await stopping
    assert waits.cleaned_up == ["forever"]  # the handler was cancelled: its cleanup ran
    assert _handled("Forever", "Unavailable") == before + 1


async def test_a_call_arriving_once_the_stop_began_is_refused_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # grpc refuses it first at the socket; the interceptor's own refusal is this one's
    waits = Waits()
    async with serving(monkeypatch, waits) as (service, channel):
        service.in_flight.stopping = True
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await channel.unary_unary("/test.Slow/Released")(b"", timeout=T)
        _restarting(refused.value)
        assert waits.started.empty()


class SilentBoard:
    """A board rolling at the same moment: it takes commands and never answers."""

    def __init__(self) -> None:
        self.received = asyncio.Event()

    async def SubmitCommand(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.AcknowledgedAction:
        self.received.set()
        await asyncio.Event().wait()
        raise AssertionError("never answers")

    def register(self, server: grpc.aio.Server) -> list[str]:
        handler = grpc.unary_unary_rpc_method_handler(
            self.SubmitCommand,
            request_deserializer=board_pb2.SubmitActionRequest.FromString,
            response_serializer=board_pb2.AcknowledgedAction.SerializeToString,
        )
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(BOARD, {"SubmitCommand": handler}),)
        )
        return []


async def test_a_gateway_waiting_on_the_board_when_it_stops_answers_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The gateway's path: its handler relays the command to the board on the shard's Calls
    stream; the gateway's own stop cancels that wait, and its client hears UNAVAILABLE."""
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", GRACE_S)
    board = SilentBoard()

    board_server = GrpcService(Config.from_env("board"), board.register)
    board_address = f"127.0.0.1:{await board_server.start()}"
    shard = Shard(board_address, board_address, board_address, Config.from_env("gateway"))

    async def submit(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        command = board_pb2.SubmitActionRequest.FromString(request)
        try:  # as services/gateway/commands.py and edge.py relay a command
            reply = await relay(shard.commands.SubmitCommand(command))
        except Refused as refused:
            await context.abort(refused.code, refused.message)
        return bytes(reply.SerializeToString())

    def register_gateway(server: grpc.aio.Server) -> list[str]:
        handlers = {"Submit": grpc.unary_unary_rpc_method_handler(submit)}
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("test.Gateway", handlers),)
        )
        return []

    gateway = GrpcService(Config.from_env("gateway"), register_gateway)
    port = await gateway.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            request = board_pb2.SubmitActionRequest(match_id="m-1", command_id="c-1")
            call = asyncio.ensure_future(
                channel.unary_unary("/test.Gateway/Submit")(request.SerializeToString(), timeout=T)
            )
            await board.received.wait()
            await gateway.stop()
            with pytest.raises(grpc.aio.AioRpcError) as cut_off:
                await call
            _restarting(cut_off.value)
    finally:
        await gateway.stop()
        await shard.close()
        await board_server.stop()


async def test_a_board_stopping_with_a_command_in_flight_is_unavailable_to_the_gateway(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The board's side: its Calls stream, still carrying the command near the end of its
    grace, ends UNAVAILABLE; the gateway passes on UNAVAILABLE (the outcome is unknown: a
    retry with the command id has the first one)."""
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", GRACE_S)
    board = SilentBoard()

    board_server = GrpcService(Config.from_env("board"), board.register)
    board_address = f"127.0.0.1:{await board_server.start()}"
    shard = Shard(board_address, board_address, board_address, Config.from_env("gateway"))
    try:
        request = board_pb2.SubmitActionRequest(match_id="m-1", command_id="c-1")
        submitted = asyncio.ensure_future(relay(shard.commands.SubmitCommand(request)))
        await board.received.wait()
        await board_server.stop()
        with pytest.raises(Refused) as refused:
            await submitted
        assert refused.value.code == grpc.StatusCode.UNAVAILABLE
        assert "retry with the same command id" in refused.value.message
    finally:
        await shard.close()
        await board_server.stop()
