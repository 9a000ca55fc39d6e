"""Serving a service's unary calls on one bidirectional stream (dice's and decks' ``Calls``).

Each message names one call (a ``oneof``); the call runs as its unary handler would, with
a context whose abort refuses that call only, and is answered by id as it finishes
(``grouped_replies``: calls and answers of the same moment share a message with a caller
that groups, DESIGN-NOTES 37), so a slow call holds back no other and a refused one ends
nothing. The calls' own metrics are kept here, as the unary handlers' are by the
interceptor, so alerts and dashboards see each call, not one long stream.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, NoReturn

import grpc
from google.protobuf import message

from services.common.logging import get_logger
from services.common.metrics import (
    GRPC_CODE_LABEL,
    GRPC_HANDLED,
    GRPC_HANDLING,
    GRPC_STARTED,
    INTERNAL_DETAILS,
)
from services.common.replies import grouped_replies

log = get_logger(__name__)

Handler = Callable[[Any, grpc.aio.ServicerContext], Awaitable[message.Message]]

#: grpc_type of a call carried on a stream (its own request and reply, as a unary call)
CALL_TYPE = "unary"


class CallAborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(details)
        self.code = code
        self.details = details


class CallContext:
    """The part of a call's context the dice and decks handlers use, over the stream's."""

    def __init__(self, stream: grpc.aio.ServicerContext) -> None:
        self._stream = stream

    def invocation_metadata(self) -> Sequence[tuple[str, str | bytes]]:
        metadata: Sequence[tuple[str, str | bytes]] = self._stream.invocation_metadata() or ()
        return metadata

    def peer(self) -> str:
        return str(self._stream.peer())

    def time_remaining(self) -> float | None:
        return None

    async def abort(self, code: grpc.StatusCode, details: str = "", *_: Any) -> NoReturn:
        raise CallAborted(code, details)


async def answer_calls(
    calls: AsyncIterator[Any],
    context: grpc.aio.ServicerContext,
    service: str,
    handlers: Mapping[str, tuple[str, Handler]],
    answer: Callable[..., Any],
    refused: Callable[[str, str], message.Message],
) -> AsyncIterator[Any]:
    """Answer each of ``calls`` (``id`` and a ``call`` oneof) by the handler its field names
    in ``handlers`` (field → (method name, handler)); ``answer(id=…, field=reply)`` builds
    an answer, ``refused(code name, message)`` a refusal."""
    call_context = CallContext(context)

    async def one(call: Any) -> list[Any]:
        field = call.WhichOneof("call")
        if field is None or field not in handlers:
            return [answer(id=call.id, refused=refused("INVALID_ARGUMENT", "no call was named"))]
        method, handler = handlers[field]
        GRPC_STARTED.labels(CALL_TYPE, service, method).inc()
        began = time.perf_counter()
        code = grpc.StatusCode.OK
        try:
            reply = await handler(getattr(call, field), call_context)
            return [answer(id=call.id, **{field: reply})]
        except CallAborted as aborted:
            code = aborted.code
            return [answer(id=call.id, refused=refused(code.name, aborted.details))]
        except Exception:  # a fault of ours refuses this call only, as _shield words it
            code = grpc.StatusCode.INTERNAL
            log.exception("rpc_handler_failed", method=f"/{service}/{method}")
            return [answer(id=call.id, refused=refused(code.name, INTERNAL_DETAILS))]
        finally:
            GRPC_HANDLING.labels(CALL_TYPE, service, method).observe(time.perf_counter() - began)
            GRPC_HANDLED.labels(CALL_TYPE, service, method, GRPC_CODE_LABEL[code]).inc()

    async for reply in grouped_replies(calls, one, context):
        yield reply
