"""The gateway's edge: every call of the public API passes here once, on the gRPC port and
on the web port's gRPC-Web alike (grpc.aio's server interceptors do not run for sonora's
calls, so the edge is the handlers themselves, registered on both).

For each call the edge parses the request itself (services/gateway/inputs.py: a message
that does not parse, or a string that is not printable text, is INVALID_ARGUMENT before
any RPC runs), finds who calls (the token is verified here and nowhere else: a bad one is
UNAUTHENTICATED), hands the RPC a ``Call``, and ends the call with the RPC's ``Refused``
(services/gateway/refusals.py). RPC bodies are plain async functions of
``(request, call)``: they know nothing of gRPC's server API, and who may do what is asked
of ``Access`` (services/gateway/access.py).

The handlers are made from the service's descriptor, as the generated
``add_GatewayServicer_to_server`` would make them, one per method of tabletop.v1.Gateway.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any, NoReturn, Protocol

import grpc
from google.protobuf import message_factory

from services.gateway.access import Caller
from services.gateway.auth import BadToken, Tokens, bearer
from services.gateway.inputs import BadInput, parse
from services.gateway.refusals import Refused
from tabletop.v1 import gateway_pb2

SERVICE = gateway_pb2.DESCRIPTOR.services_by_name["Gateway"]


class Call:
    """What an RPC body knows of its call: who calls, and how long the call may take."""

    __slots__ = ("_context", "caller")

    def __init__(self, caller: Caller, context: grpc.aio.ServicerContext) -> None:
        self.caller = caller
        self._context = context

    def header(self, key: str) -> str | None:
        """The value of the call's metadata ``key`` (None: not sent)."""
        for name, value in self._context.invocation_metadata() or ():
            if name == key and isinstance(value, str):
                return value
        return None

    def time_remaining(self) -> float | None:
        remaining: float | None = self._context.time_remaining()
        return remaining


class Registry(Protocol):
    """A server, as the gRPC port's and the web port's both are."""

    def add_generic_rpc_handlers(self, handlers: Any) -> None: ...

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None: ...


def peer_host(context: grpc.aio.ServicerContext) -> str:
    """The client's address without its port ("ipv4:10.0.0.7:5123" → "ipv4:10.0.0.7").

    gRPC-Web calls (services/gateway/web.py) give the same form from the HTTP connection.
    """
    peer = context.peer() or "unknown"
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


def identify(context: grpc.aio.ServicerContext, tokens: Tokens) -> Caller:
    """The caller of this call; a token that does not verify is refused."""
    try:
        token = bearer(context.invocation_metadata())
        claims = None if token is None else tokens.verify(token)
    except BadToken as bad:
        raise Refused(grpc.StatusCode.UNAUTHENTICATED, str(bad)) from bad
    return Caller(claims, peer_host(context), context.peer() or "unknown")


def _raw(data: bytes) -> bytes:
    """gRPC hands the request over as it came: the edge parses it (``inputs.parse``)."""
    return data


def decoded(decode: Callable[[bytes], Any], raw: bytes) -> Any:
    try:
        return parse(decode, raw)
    except BadInput as bad:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from bad


async def _each(
    decode: Callable[[bytes], Any], requests: AsyncIterator[bytes]
) -> AsyncIterator[Any]:
    async for raw in requests:
        yield decoded(decode, raw)


async def end(context: grpc.aio.ServicerContext, refused: Refused) -> NoReturn:
    """End the call with the refusal."""
    if refused.trailers:
        context.set_trailing_metadata(refused.trailers)
    await context.abort(refused.code, refused.message)
    raise AssertionError  # abort raises


class Edge:
    def __init__(self, service: object, tokens: Tokens) -> None:
        """``service`` has an RPC body named as each method of tabletop.v1.Gateway."""
        self._tokens = tokens
        handlers = {}
        for method in SERVICE.methods:
            body = getattr(service, method.name, None)
            if body is None:
                raise TypeError(f"the gateway service has no body for {method.name}")
            handlers[method.name] = self._handler(method, body)
        self._generic = grpc.method_handlers_generic_handler(SERVICE.full_name, handlers)
        self.handlers = handlers

    def register(self, server: Registry) -> list[str]:
        """Serve the API on ``server``; the names of the services added."""
        # as the generated add_…Servicer_to_server does: registered methods are found
        # without asking each generic handler
        server.add_generic_rpc_handlers((self._generic,))
        server.add_registered_method_handlers(SERVICE.full_name, self.handlers)
        return [SERVICE.full_name]

    def _call(self, context: grpc.aio.ServicerContext) -> Call:
        return Call(identify(context, self._tokens), context)

    def _handler(self, method: Any, body: Callable[..., Any]) -> grpc.RpcMethodHandler:
        decode = message_factory.GetMessageClass(method.input_type).FromString
        encode = message_factory.GetMessageClass(method.output_type).SerializeToString
        if method.client_streaming:

            async def bidi(requests: AsyncIterator[bytes], context: Any) -> AsyncIterator[Any]:
                try:
                    async for reply in body(_each(decode, requests), self._call(context)):
                        yield reply
                except Refused as refused:
                    await end(context, refused)

            return grpc.stream_stream_rpc_method_handler(bidi, _raw, encode)
        if method.server_streaming:

            async def stream(raw: bytes, context: Any) -> AsyncIterator[Any]:
                try:
                    request = decoded(decode, raw)
                    async for reply in body(request, self._call(context)):
                        yield reply
                except Refused as refused:
                    await end(context, refused)

            return grpc.unary_stream_rpc_method_handler(stream, _raw, encode)

        async def unary(raw: bytes, context: Any) -> Any:
            try:
                return await body(decoded(decode, raw), self._call(context))
            except Refused as refused:
                await end(context, refused)

        return grpc.unary_unary_rpc_method_handler(unary, _raw, encode)
