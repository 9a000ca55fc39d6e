"""gRPC server bootstrap shared by every service: health, reflection, metrics, graceful stop."""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from services.common.calls.handler import CallsServicer, Registrar
from services.common.config import Config
from services.common.heap import collect_young_forever, settle_after_startup
from services.common.logging import get_logger
from services.common.metrics import (
    MetricsInterceptor,
    WrappingInterceptor,
    start_metrics_server,
)
from services.common.peer_auth import (
    PeerAuthInterceptor,
    PeerChannel,
    channel_credentials,
    server_credentials,
)
from services.common.roster import BY_NAME
from tabletop.v1 import calls_pb2, calls_pb2_grpc

log = get_logger(__name__)

#: the largest request any server accepts (bytes); the gateway's public API is smaller still
MAX_REQUEST_BYTES = 4 * 1024 * 1024

#: registers servicers on the server and returns the full names of the services added
Register = Callable[[grpc.aio.Server], Sequence[str]]

CALLS = calls_pb2.DESCRIPTOR.services_by_name["Calls"].full_name

#: what a call still under way when its server stops is answered (with UNAVAILABLE)
RESTARTING = "the service is restarting; retry with the same command id"
#: the calls still running this long before the stop's grace ends are answered RESTARTING
#: (at most a quarter of the grace), so their status is written before grpc.aio cuts them off
END_MARGIN_S = 1.0


class InFlight(WrappingInterceptor):
    """Every call under way, so that a graceful stop ends those its grace would cut off
    with UNAVAILABLE and ``RESTARTING``, which clients retry (with the same command id),
    not with grpc.aio's own ending of them (a client may see CANCELLED, which clients do
    not retry a command on). Calls that arrive once the stop began are refused alike. A Calls stream
    (services/common/calls/) is a call too: ended UNAVAILABLE, its caller fails the calls
    it carried as UNAVAILABLE (StreamBroken)."""

    def __init__(self) -> None:
        super().__init__()
        self.stopping = False
        self._running: set[asyncio.Task[Any]] = set()
        self._ended: set[asyncio.Task[Any]] = set()  # cancelled by ``end_all``

    def end_all(self) -> int:
        """Cancel every call under way; each answers UNAVAILABLE. How many there were."""
        running = self._running - self._ended
        for task in running:
            self._ended.add(task)
            task.cancel()
        return len(running)

    @contextlib.asynccontextmanager
    async def _tracked(self, context: grpc.aio.ServicerContext) -> AsyncIterator[None]:
        if self.stopping:
            await context.abort(grpc.StatusCode.UNAVAILABLE, RESTARTING)
        task = asyncio.current_task()
        assert task is not None
        self._running.add(task)
        try:
            yield
        except asyncio.CancelledError:
            if task not in self._ended:
                raise  # the client went away, or the server's own end: not ours to answer
            task.uncancel()
            await context.abort(grpc.StatusCode.UNAVAILABLE, RESTARTING)
        finally:
            self._running.discard(task)
            self._ended.discard(task)

    def wrap(self, handler: grpc.RpcMethodHandler, method: str) -> grpc.RpcMethodHandler:
        inner = (
            handler.unary_unary
            or handler.stream_unary
            or handler.unary_stream
            or handler.stream_stream
        )
        if inner is None:
            return handler
        make = {
            (False, False): grpc.unary_unary_rpc_method_handler,
            (True, False): grpc.stream_unary_rpc_method_handler,
            (False, True): grpc.unary_stream_rpc_method_handler,
            (True, True): grpc.stream_stream_rpc_method_handler,
        }[(bool(handler.request_streaming), bool(handler.response_streaming))]
        tracked = self._tracked

        async def answer(request: Any, context: grpc.aio.ServicerContext) -> Any:
            async with tracked(context):
                return await inner(request, context)

        async def replies(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            # A stream is cancelled where it waits: for its next reply (a live view), most
            # likely; if it was in grpc's write of one, grpc ends it as it would have.
            async with tracked(context):
                async for reply in inner(request, context):
                    yield reply

        return make(
            replies if handler.response_streaming else answer,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )


class GrpcService:
    """One process's gRPC server. ``start`` binds and marks SERVING; ``stop`` drains."""

    def __init__(
        self, config: Config, register: Register, max_request_bytes: int = MAX_REQUEST_BYTES
    ) -> None:
        self.config = config
        internal = BY_NAME[config.service].internal
        self.in_flight = InFlight()
        # inside the metrics' wrapper: a call ended for the stop is counted Unavailable
        interceptors: list[grpc.aio.ServerInterceptor] = [MetricsInterceptor(), self.in_flight]
        if internal:
            interceptors.append(PeerAuthInterceptor(config.peer_token))
        self.server = grpc.aio.server(
            interceptors=interceptors,
            options=[
                ("grpc.so_reuseport", 0),
                ("grpc.max_receive_message_length", max_request_bytes),
            ],
        )
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        if internal:
            # its peers call its methods on Calls streams too (services/common/calls/)
            calls = CallsServicer()
            self.service_names = [*register(Registrar(self.server, calls)), CALLS]
            calls_pb2_grpc.add_CallsServicer_to_server(calls, self.server)
        else:
            self.service_names = list(register(self.server))
        reflection.enable_server_reflection(
            [*self.service_names, health.SERVICE_NAME, reflection.SERVICE_NAME], self.server
        )
        self.port = 0

    async def start(self) -> int:
        address = f"{self.config.grpc_host}:{self.config.grpc_port}"
        credentials = server_credentials(self.config)
        if credentials is None:
            self.port = self.server.add_insecure_port(address)
        else:
            self.port = self.server.add_secure_port(address, credentials)
        await self.server.start()
        for name in ["", *self.service_names]:
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)
        log.info("grpc_serving", address=f"{self.config.grpc_host}:{self.port}")
        return self.port

    async def stop(self) -> None:
        # NOT_SERVING first, so load balancers and probes stop sending new work.
        await self.health.enter_graceful_shutdown()
        self.in_flight.stopping = True
        grace = self.config.shutdown_grace_seconds
        stopped = asyncio.ensure_future(self.server.stop(grace))
        # Calls still under way at the end of the grace would be cut off by grpc.aio (the
        # client may see CANCELLED, which it does not retry): shortly before, they are
        # answered UNAVAILABLE, which it retries.
        await asyncio.wait({stopped}, timeout=grace - min(END_MARGIN_S, grace / 4))
        if not stopped.done():
            ended = self.in_flight.end_all()
            log.info("calls_ended_for_stop", calls=ended)
        await stopped


async def run_until_signalled(
    config: Config,
    register: Register,
    on_start: Callable[[], Awaitable[None]] | None = None,
    on_stop: Callable[[], Awaitable[None]] | None = None,
    max_request_bytes: int = MAX_REQUEST_BYTES,
) -> None:
    """Start the metrics endpoint, ``on_start``, the gRPC server; stop cleanly on SIGTERM/SIGINT."""
    start_metrics_server(config.metrics_port, config.grpc_host)
    if on_start is not None:
        await on_start()
    settle_after_startup()
    young = asyncio.create_task(collect_young_forever())
    service = GrpcService(config, register, max_request_bytes)
    await service.start()
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("shutting_down", grace_seconds=config.shutdown_grace_seconds)
    await service.stop()
    young.cancel()
    if on_stop is not None:
        await on_stop()
    log.info("stopped")


#: Service-to-service channels reconnect quickly after a peer restarts (a pod replaced,
#: a process restarted), instead of backing off for up to two minutes. A replaced pod comes
#: back at a new address under the same name: the name is resolved again within a second,
#: not after gRPC's default 30 s (in a cluster, calls to a deleted board, dice or decks pod
#: failed for ~20 s after its replacement was ready).
CHANNEL_OPTIONS = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
    ("grpc.dns_min_time_between_resolutions_ms", 1000),
)


def peer_channel(address: str, config: Config) -> PeerChannel:
    """A channel to another Tabletop service: every call carries the peer token, over mTLS
    when certificates are configured."""
    credentials = channel_credentials(config)
    if credentials is None:
        channel = grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)
    else:
        channel = grpc.aio.secure_channel(address, credentials, options=CHANNEL_OPTIONS)
    return PeerChannel(channel, config.peer_token)
