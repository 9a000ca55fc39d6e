"""The gateway's web port: the browser client's files and gRPC-Web for the same handlers.

One API: the page speaks gRPC-Web (sonora's ASGI app) to the very handlers the gRPC port
serves (services/gateway/edge.py), so every authorisation, quota and bound applies alike.
Around it: Starlette's CORS middleware (only the configured origins; the page the gateway
serves itself is same-origin), a request size limit like the gRPC port's, security headers
for the page, and uvicorn running inside the gateway's event loop, with the gRPC port's
certificate when one is configured.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Generator, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import quote

import grpc
import uvicorn
from sonora import protocol
from sonora.asgi import ServicerContext, grpcASGI
from starlette.applications import Starlette
from starlette.middleware.cors import CORSMiddleware
from starlette.routing import Mount
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from services.common.config import Config
from services.common.logging import get_logger
from services.common.metrics import instrument

log = get_logger(__name__)

#: what a page may read of a gRPC-Web reply across origins
EXPOSED_HEADERS = ("grpc-status", "grpc-message", "tabletop-reason", "retry-after-ms")
#: what the page may send
ALLOWED_HEADERS = ("authorization", "content-type", "x-grpc-web", "x-user-agent", "grpc-timeout")
#: the page runs no script and no style but its own (boards are sanitised inline SVG;
#: data: images only as their fallback)
PAGE_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self'; object-src 'none'; "
        b"base-uri 'none'; frame-ancestors 'none'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class WebContext(ServicerContext):  # type: ignore[misc]
    """sonora's context, with the caller's address in grpc.aio's form (quotas use it)."""

    def __init__(self, timeout: float | None, metadata: list[Any], scope: Scope) -> None:
        super().__init__(timeout, metadata, enable_cors=False)
        host, port = scope.get("client") or ("unknown", 0)
        self._peer = f"ipv6:[{host}]:{port}" if ":" in host else f"ipv4:{host}:{port}"

    def peer(self) -> str:
        return self._peer


class _Metered(grpc.GenericRpcHandler):  # type: ignore[misc]
    """Counts gRPC-Web calls under the gRPC metric names (grpc_type ``grpc_web_…``)."""

    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        handler = self._inner.service(details)
        return None if handler is None else instrument(handler, details.method, "grpc_web_")


class GrpcWeb(grpcASGI):  # type: ignore[misc]
    """sonora's gRPC-Web app, completed and corrected (docs/DESIGN-NOTES.md 21): the
    generated ``add_…Servicer_to_server`` works, contexts have ``peer()``, replies carry text
    trailers, errors keep their trailing metadata, streams end when the client leaves."""

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        super().add_generic_rpc_handlers([_Metered(h) for h in handlers])

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        """The generic handler added with them already routes every method."""

    def _create_context(self, scope: Scope) -> WebContext:
        base = super()._create_context(scope)
        return WebContext(base.time_remaining(), base.invocation_metadata(), scope)

    async def _do_unary_response(
        self,
        rpc_method: grpc.RpcMethodHandler,
        receive: Receive,
        send: Send,
        wrap_message: Any,
        context: WebContext,
        coroutine: Any,
    ) -> None:
        # sonora 0.2.3 writes a unary reply's trailers as "b'grpc-status': b'0'"; browsers'
        # gRPC-Web clients then see no status. The same reply, with text trailers.
        message = None if coroutine is None else await coroutine
        body = (
            b""
            if message is None
            else wrap_message(False, False, rpc_method.response_serializer(message))
        )
        body += _trailers(context, wrap_message)
        headers = [*context._response_headers, *(context._initial_metadata or ())]
        headers.append((b"content-length", str(len(body)).encode()))
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _do_streaming_response(
        self,
        rpc_method: grpc.RpcMethodHandler,
        receive: Receive,
        send: Send,
        wrap_message: Any,
        context: WebContext,
        coroutine: Any,
    ) -> None:
        # sonora notices a client that left only when it sends the next message: a watcher
        # of a quiet match would stay forever. Here the servicer's stream is cancelled as
        # soon as the client disconnects (its finally blocks run).
        if coroutine is None:  # not implemented: sonora set the status already
            raise grpc.RpcError()
        gone = asyncio.ensure_future(_disconnect(receive))
        started = False

        async def start() -> None:
            nonlocal started
            if not started:
                started = True
                headers = [*context._response_headers, *(context._initial_metadata or ())]
                await send({"type": "http.response.start", "status": 200, "headers": headers})

        try:
            while True:
                step = asyncio.ensure_future(anext(coroutine))
                await asyncio.wait({step, gone}, return_when=asyncio.FIRST_COMPLETED)
                if not step.done():
                    step.cancel()
                    with contextlib.suppress(asyncio.CancelledError, StopAsyncIteration):
                        await step
                    return
                try:
                    message = step.result()
                except StopAsyncIteration:
                    break
                except grpc.RpcError:
                    if not started:
                        raise  # sonora answers with the status in the headers
                    break  # aborted mid-stream: the status goes in the trailers
                await start()
                body = wrap_message(False, False, rpc_method.response_serializer(message))
                await send({"type": "http.response.body", "body": body, "more_body": True})
        finally:
            gone.cancel()
        await start()
        body = _trailers(context, wrap_message)
        await send({"type": "http.response.body", "body": body, "more_body": False})

    async def _do_grpc_error(self, send: Send, context: WebContext) -> None:
        # sonora drops trailing metadata on errors; a refusal's reason code travels there.
        for key, value in context._trailing_metadata or ():
            context._response_headers.append((str(key).encode(), str(value).encode()))
        await super()._do_grpc_error(send, context)


def _trailers(context: WebContext, wrap_message: Any) -> bytes:
    """The trailer frame: status, message and trailing metadata, as text."""
    trailers = [("grpc-status", str(context.code.value[0]))]
    if context.details:
        trailers.append(("grpc-message", quote(context.details)))
    trailers.extend(context._trailing_metadata or ())
    frame: bytes = wrap_message(True, False, protocol.pack_trailers(trailers))
    return frame


async def _disconnect(receive: Receive) -> None:
    """Returns when the client has gone."""
    while (await receive())["type"] != "http.disconnect":
        pass


class _Limits:
    """Refuses request bodies over ``max_bytes`` and adds the page's security headers."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self._app = app
        self._max = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        length = dict(scope["headers"]).get(b"content-length", b"0")
        if not length.isdigit() or int(length) > self._max:
            await _status(send, 413)
            return
        seen = 0

        async def bounded() -> Message:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self._max:
                raise ValueError("request body over the limit")
            return message

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start" and scope["method"] == "GET":
                message = {**message, "headers": [*message.get("headers", ()), *PAGE_HEADERS]}
            await send(message)

        await self._app(scope, bounded, with_headers)


async def _status(send: Send, status: int) -> None:
    await send({"type": "http.response.start", "status": status, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def web_app(
    register: Callable[[grpc.Server], object],
    origins: Sequence[str],
    static_dir: str,
    max_request_bytes: int,
) -> ASGIApp:
    """The ASGI app: gRPC-Web for what ``register`` adds, else the static files."""
    if not Path(static_dir, "index.html").is_file():
        log.warning("web_client_not_built", dir=static_dir, hint="make web")
    # Starlette turns the static files' "not found" into a 404 reply.
    files = Starlette(
        routes=[Mount("/", StaticFiles(directory=static_dir, html=True, check_dir=False))]
    )
    grpc_web = GrpcWeb(files, False)
    register(grpc_web)
    cors = CORSMiddleware(
        grpc_web,
        allow_origins=list(origins),
        allow_methods=["POST"],
        allow_headers=list(ALLOWED_HEADERS),
        expose_headers=list(EXPOSED_HEADERS),
        max_age=600,
    )
    return _Limits(cors, max_request_bytes)


class _Server(uvicorn.Server):
    """uvicorn inside our event loop: the gateway, not uvicorn, owns SIGTERM and SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        yield


class WebServer:
    """The web port (uvicorn) as a task of the gateway's event loop."""

    def __init__(self, config: Config, app: ASGIApp) -> None:
        tls = bool(config.tls_cert and config.tls_key)
        self._server = _Server(
            uvicorn.Config(
                app,
                host=config.grpc_host,
                port=config.web_port,
                ssl_certfile=config.tls_cert if tls else None,
                ssl_keyfile=config.tls_key if tls else None,
                log_config=None,
                access_log=False,
                lifespan="off",
                timeout_graceful_shutdown=int(config.shutdown_grace_seconds) or 1,
            )
        )
        self._task: asyncio.Task[None] | None = None
        self.url = f"{'https' if tls else 'http'}://{config.grpc_host}:{config.web_port}/"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve())
        while not self._server.started:
            if self._task.done():
                self._task.result()  # bind failed: raise its error
                raise RuntimeError("the web server stopped before it started")
            await asyncio.sleep(0.02)
        log.info("web_serving", url=self.url)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        await self._task
