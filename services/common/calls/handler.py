"""The server's side of tabletop.v1.Calls: each call on a stream is carried out by the
handler its method is served by, as a call of its own would be.

The handlers are the ones the server registered (through the generated
``add_…Servicer_to_server``, which ``Registrar`` sees), counted and timed as the metrics
interceptor counts any call (``instrument``: grpc_server_handled_total by its own method and
status code) and shielded alike (an unmeant exception is INTERNAL). A call gets a context of
its own (``CallContext``), so its abort, its status and its trailing metadata are its own
and end nothing else. Calls are answered as they finish, in groups (``groups``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, NamedTuple, NoReturn

import grpc

from services.common.calls.groups import batches_as_finished, each, grouped
from services.common.metrics import instrument
from tabletop.v1 import calls_pb2, calls_pb2_grpc


class CallContext:
    """A call's context on a stream: the stream's metadata and peer, its own status."""

    def __init__(self, stream: grpc.aio.ServicerContext) -> None:
        self._stream = stream
        self._code: grpc.StatusCode | None = None
        self._details = ""
        self._trailers: list[tuple[str, str]] = []

    async def abort(
        self, code: grpc.StatusCode, details: str = "", trailing_metadata: Any = ()
    ) -> NoReturn:
        self._code, self._details = code, details
        self._trailers.extend(trailing_metadata)
        raise grpc.aio.AbortError(details)

    def set_code(self, code: grpc.StatusCode) -> None:
        self._code = code

    def set_details(self, details: str) -> None:
        self._details = details

    def code(self) -> grpc.StatusCode | None:
        return self._code

    def details(self) -> str:
        return self._details

    def set_trailing_metadata(self, metadata: Sequence[tuple[str, str]]) -> None:
        self._trailers = list(metadata)

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        metadata: Sequence[tuple[str, str | bytes]] = self._stream.invocation_metadata() or ()
        return metadata

    def peer(self) -> str:
        return str(self._stream.peer())

    def time_remaining(self) -> float | None:
        """None: a call on a stream has no deadline here (its caller keeps its own)."""
        return None

    def status(self, fallback: grpc.StatusCode) -> calls_pb2.CallStatus:
        """How the call ended, once its handler raised (``fallback`` when it set no code)."""
        code = self._code if self._code not in (None, grpc.StatusCode.OK) else fallback
        assert code is not None
        return calls_pb2.CallStatus(
            code=code.name, message=self._details, trailers=dict(self._trailers)
        )


class _Details(NamedTuple):
    """What a generic handler is asked to route (grpc.HandlerCallDetails)."""

    method: str
    invocation_metadata: tuple[tuple[str, str], ...]


class CallsServicer(calls_pb2_grpc.CallsServicer):
    def __init__(self) -> None:
        self._routes: list[grpc.GenericRpcHandler] = []
        #: method → its instrumented handler (None: not a method a call may name)
        self._handlers: dict[str, grpc.RpcMethodHandler | None] = {}

    def route(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        """Carry calls to the methods ``handlers`` serve (as the server routes them)."""
        self._routes.extend(handlers)
        self._handlers.clear()

    def handler(self, method: str) -> grpc.RpcMethodHandler | None:
        if method not in self._handlers:
            found = None
            for route in self._routes:
                found = route.service(_Details(method, ()))
                if found is not None:
                    break
            # a call is one request: a method that streams requests is not one to carry
            carried = found is not None and not found.request_streaming
            self._handlers[method] = instrument(found, method) if carried else None
        return self._handlers[method]

    async def Carry(
        self, calls: AsyncIterator[calls_pb2.Call], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[calls_pb2.Answer]:
        async def answer(call: calls_pb2.Call) -> list[calls_pb2.Answer]:
            return await self._answer(call, context)

        async for ready in batches_as_finished(each(calls), answer):
            for message in grouped(ready):
                yield message

    async def _answer(
        self, call: calls_pb2.Call, stream: grpc.aio.ServicerContext
    ) -> list[calls_pb2.Answer]:
        handler = self.handler(call.method)
        if handler is None:
            status = calls_pb2.CallStatus(
                code=grpc.StatusCode.UNIMPLEMENTED.name, message="Method not found!"
            )
            return [calls_pb2.Answer(id=call.id, status=status)]
        try:
            request = handler.request_deserializer(call.request)
        except Exception:
            status = calls_pb2.CallStatus(
                code=grpc.StatusCode.INVALID_ARGUMENT.name, message="the request is malformed"
            )
            return [calls_pb2.Answer(id=call.id, status=status)]
        context = CallContext(stream)
        answers: list[calls_pb2.Answer] = []
        serialize = handler.response_serializer
        try:
            if handler.unary_unary is not None:
                reply = await handler.unary_unary(request, context)
                return [calls_pb2.Answer(id=call.id, reply=serialize(reply))]
            async for reply in handler.unary_stream(request, context):
                answers.append(calls_pb2.Answer(id=call.id, reply=serialize(reply)))
            ended = calls_pb2.CallStatus(code=grpc.StatusCode.OK.name)
        except grpc.aio.AbortError:
            ended = context.status(grpc.StatusCode.UNKNOWN)
        except Exception:
            # the shield (``instrument``) answered what it could; what is left set its code
            ended = context.status(grpc.StatusCode.UNKNOWN)
        answers.append(calls_pb2.Answer(id=call.id, status=ended))
        return answers


class Registrar:
    """The server as a service's ``register`` sees it: every servicer it adds is served,
    and its methods may be called on the server's Calls streams too."""

    def __init__(self, server: grpc.aio.Server, calls: CallsServicer) -> None:
        self._server = server
        self._calls = calls

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self._server.add_generic_rpc_handlers(handlers)
        self._calls.route(handlers)

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        self._server.add_registered_method_handlers(service, handlers)
