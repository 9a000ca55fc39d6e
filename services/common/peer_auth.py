"""Service-to-service credentials: internal servers accept calls only from their peers.

Every internal call carries the shared peer token (``TABLETOP_PEER_TOKEN``) in the
``x-tabletop-peer`` metadata; the internal servers (board, dice, decks, scoring) compare it
in constant time and refuse anything else with UNAUTHENTICATED. Health checks and
reflection stay open (probes and ``grpcurl list`` carry no credential; they reveal nothing).
Where certificates are configured (``TABLETOP_TLS_CERT/KEY/CA``), peers also speak mTLS.
"""

from __future__ import annotations

import hmac
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import grpc

from services.common.config import Config

PEER_HEADER = "x-tabletop-peer"
#: what any client may call on any server: probes and discovery
OPEN_SERVICES = ("/grpc.health.v1.Health/", "/grpc.reflection.")


def _refusals(message: str) -> tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]:
    """Handlers (unary, server-streaming) that refuse with UNAUTHENTICATED."""

    async def abort(request: Any, context: grpc.aio.ServicerContext) -> None:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)

    async def abort_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
        await context.abort(grpc.StatusCode.UNAUTHENTICATED, message)
        yield  # unreachable: abort raises; the yield makes this a streaming handler

    return (
        grpc.unary_unary_rpc_method_handler(abort),
        grpc.unary_stream_rpc_method_handler(abort_stream),
    )


class PeerAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuse every call that does not carry the peer token (except health/reflection)."""

    def __init__(self, token: bytes) -> None:
        self._token = token
        self._unary, self._stream = _refusals("internal service: peers only")

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        method = details.method or ""
        if method.startswith(OPEN_SERVICES):
            return await continuation(details)
        presented = dict(details.invocation_metadata or ()).get(PEER_HEADER, "")
        if isinstance(presented, str) and hmac.compare_digest(presented.encode(), self._token):
            return await continuation(details)
        handler = await continuation(details)
        if handler is not None and handler.response_streaming:
            return self._stream
        return self._unary


def _with_token(details: grpc.aio.ClientCallDetails, token: str) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*(details.metadata or ()))
    metadata.add(PEER_HEADER, token)
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


# grpc.aio files an interceptor under its first matching kind only, so one class per kind.
class _UnaryPeerToken(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, token: bytes) -> None:
        self._token = token.decode()

    async def intercept_unary_unary(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_with_token(client_call_details, self._token), request)


class _StreamPeerToken(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    def __init__(self, token: bytes) -> None:
        self._token = token.decode()

    async def intercept_unary_stream(
        self, continuation: Any, client_call_details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        return await continuation(_with_token(client_call_details, self._token), request)


def server_credentials(config: Config) -> grpc.ServerCredentials | None:
    """TLS for this server when a certificate is configured; client certs required when a
    CA is given too (mTLS between services). None: plaintext (dev stack on loopback)."""
    if not (config.tls_cert and config.tls_key):
        return None
    pair = (Path(config.tls_key).read_bytes(), Path(config.tls_cert).read_bytes())
    ca = Path(config.tls_ca).read_bytes() if config.tls_ca and config.service != "gateway" else None
    return grpc.ssl_server_credentials([pair], root_certificates=ca, require_client_auth=bool(ca))


def channel_credentials(config: Config) -> grpc.ChannelCredentials | None:
    """mTLS to peers when a CA is configured (our certificate is the client certificate)."""
    if not config.tls_ca:
        return None
    key = Path(config.tls_key).read_bytes() if config.tls_key else None
    cert = Path(config.tls_cert).read_bytes() if config.tls_cert else None
    return grpc.ssl_channel_credentials(Path(config.tls_ca).read_bytes(), key, cert)


def peer_interceptors(config: Config) -> list[grpc.aio.ClientInterceptor]:
    return [_UnaryPeerToken(config.peer_token), _StreamPeerToken(config.peer_token)]
