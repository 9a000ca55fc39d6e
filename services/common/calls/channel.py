"""The caller's side of tabletop.v1.Calls: a channel whose calls travel on one long-lived
stream of another channel. Generated stubs take it as they take a channel
(``DiceStub(CallChannel(channel, "dice"))``), and their unary and server-streaming calls
behave as their own calls would: the reply, or AioRpcError with the service's status and
trailing metadata, DEADLINE_EXCEEDED past a ``timeout``.

The stream opens on the first call, and again after it ended. Calls made while a write is
under way go out together in the next one (``groups``). A call whose write failed was not
sent: it goes once more, on a new stream. A call in flight when its stream breaks fails
UNAVAILABLE (``StreamBroken``): whether it was carried out is unknown, and what a retry
may do is the caller's to say (a command retried with its command id gets its first
outcome; a read changes nothing). A caller that gives up waiting drops the answer; the
call itself may still be carried out.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from services.common.calls.groups import grouped
from services.common.logging import get_logger
from tabletop.v1 import calls_pb2

log = get_logger(__name__)

CARRY = "/tabletop.v1.Calls/Carry"
#: writes of one call (each on a new stream), before it fails UNAVAILABLE
WRITE_ATTEMPTS = 2

Serialize = Callable[[Any], bytes]
Deserialize = Callable[[bytes], Any]


class CallError(grpc.aio.AioRpcError):  # type: ignore[misc]
    """How a call on a stream ended, as its own call would have."""


class StreamBroken(CallError):
    """UNAVAILABLE: the stream ended before the call's answer (its outcome is unknown)."""


def _error(code: grpc.StatusCode, details: str) -> CallError:
    return CallError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)


def _broken(details: str) -> StreamBroken:
    return StreamBroken(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), details
    )


def _refusal(status: calls_pb2.CallStatus) -> CallError:
    code = grpc.StatusCode.__members__.get(status.code, grpc.StatusCode.UNKNOWN)
    return CallError(
        code, grpc.aio.Metadata(), grpc.aio.Metadata(*status.trailers.items()), status.message
    )


class _Pending:
    """A call in flight: its answer, the stream it went on, what its answers brought."""

    __slots__ = ("answer", "attempts", "call", "replies", "sent_on", "streaming")

    def __init__(self, call: calls_pb2.Call, streaming: bool) -> None:
        self.call = call
        self.streaming = streaming
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.replies: list[bytes] = []
        self.sent_on: Any = None
        self.attempts = 0


class CallChannel:
    def __init__(self, channel: Any, peer: str) -> None:
        """``channel``: a channel to the peer (its stream carries the peer token);
        ``peer`` names the peer in errors and logs ("dice", "board")."""
        self._open_stream = channel.stream_stream(
            CARRY,
            request_serializer=calls_pb2.Call.SerializeToString,
            response_deserializer=calls_pb2.Answer.FromString,
        )
        self.peer = peer
        self._stream: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._writer: asyncio.Task[None] | None = None  # the one writing on the stream
        self._outbox: list[_Pending] = []  # calls not written yet
        self._waiting: dict[int, _Pending] = {}
        self._next_id = 0
        self._closed = False

    # -- what a generated stub asks of a channel ------------------------------------------
    def unary_unary(
        self,
        method: str,
        request_serializer: Serialize,
        response_deserializer: Deserialize,
        **_: Any,
    ) -> Callable[..., Awaitable[Any]]:
        def call(request: Any, timeout: float | None = None, metadata: Any = None) -> Any:
            _no_metadata(metadata)
            return self._unary(method, request_serializer(request), response_deserializer, timeout)

        return call

    def unary_stream(
        self,
        method: str,
        request_serializer: Serialize,
        response_deserializer: Deserialize,
        **_: Any,
    ) -> Callable[..., AsyncIterator[Any]]:
        def call(request: Any, timeout: float | None = None, metadata: Any = None) -> Any:
            _no_metadata(metadata)
            return self._replies(
                method, request_serializer(request), response_deserializer, timeout
            )

        return call

    def stream_unary(self, method: str, *_: Any, **__: Any) -> Callable[..., Any]:
        return _not_carried(method)

    def stream_stream(self, method: str, *_: Any, **__: Any) -> Callable[..., Any]:
        return _not_carried(method)

    async def close(self) -> None:
        self._closed = True
        if self._writer is not None:
            self._writer.cancel()
        stream, self._stream = self._stream, None
        if stream is not None:
            stream.cancel()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._fail(lambda pending: True, self._stopping())

    # -- calls ----------------------------------------------------------------------------
    async def _unary(
        self, method: str, request: bytes, deserialize: Deserialize, within: float | None
    ) -> Any:
        return deserialize(await self._ask(method, request, False, within))

    async def _replies(
        self, method: str, request: bytes, deserialize: Deserialize, within: float | None
    ) -> AsyncIterator[Any]:
        """A server-streaming call's replies, once they have all come."""
        for reply in await self._ask(method, request, True, within):
            yield deserialize(reply)

    async def _ask(self, method: str, request: bytes, streaming: bool, within: float | None) -> Any:
        if self._closed:
            raise self._stopping()
        self._next_id += 1
        ident = self._next_id
        pending = self._waiting[ident] = _Pending(
            calls_pb2.Call(id=ident, method=method, request=request), streaming
        )
        self._outbox.append(pending)
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_out())
        late = None
        if within is not None:
            late = asyncio.get_running_loop().call_later(within, self._expire, pending, within)
        try:
            return await pending.answer
        finally:
            # answered, failed, or its caller gave up
            self._waiting.pop(ident, None)
            if late is not None:
                late.cancel()

    def _expire(self, pending: _Pending, within: float) -> None:
        late = _error(grpc.StatusCode.DEADLINE_EXCEEDED, f"no answer within {within:g} s")
        _settle(pending, late)

    async def _write_out(self) -> None:
        while self._outbox:
            # calls whose callers gave up, or that failed meanwhile, stay unwritten
            batch = {p.call.id: p for p in self._outbox if not p.answer.done()}
            self._outbox = []
            if not batch:
                return
            stream = self._open()
            try:
                for message in grouped([p.call for p in batch.values()]):
                    await stream.write(message)
                    for call in (message, *message.more):
                        pending = batch.pop(call.id)
                        pending.sent_on = stream  # its end fails them: outcome unknown
                        if self._stream is not stream:  # it ended meanwhile: its reader is done
                            _settle(pending, _broken(f"the {self.peer} call stream ended"))
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError):
                # The stream had ended: the rest of the batch was not sent. Once more, on a
                # new stream.
                if self._stream is stream:
                    self._stream = None
                ended = _broken(f"the {self.peer} call stream ended")
                for pending in batch.values():
                    pending.call.ClearField("more")
                    pending.attempts += 1
                    if pending.attempts >= WRITE_ATTEMPTS:
                        _settle(pending, ended)
                self._outbox[:0] = [p for p in batch.values() if not p.answer.done()]
            except asyncio.CancelledError:
                for pending in batch.values():
                    _settle(pending, self._stopping())
                raise

    def _open(self) -> Any:
        if self._stream is None or self._stream.done():
            self._stream = self._open_stream()
            self._reader = asyncio.create_task(self._read(self._stream))
        return self._stream

    async def _read(self, stream: Any) -> None:
        cancelled = False
        try:
            async for message in stream:
                self._take(message)
                for answer in message.more:
                    self._take(answer)
            failure: CallError = _broken(f"{self.peer} ended the call stream")
        except grpc.aio.AioRpcError as error:
            code = error.code()
            if code != grpc.StatusCode.CANCELLED:
                log.warning("call_stream_broken", peer=self.peer, code=code.name)
            failure = _broken(f"the {self.peer} call stream broke ({code.name})")
        except asyncio.CancelledError:
            # the stream was cancelled (by ``close``, or by whoever holds it), or this task
            task = asyncio.current_task()
            cancelled = task is not None and task.cancelling() > 0
            closing = self._closed or cancelled
            failure = (
                self._stopping()
                if closing
                else _broken(f"the {self.peer} call stream was cancelled")
            )
        if self._stream is stream:
            self._stream = None
        self._fail(lambda pending: pending.sent_on is stream, failure)
        if cancelled:
            raise asyncio.CancelledError

    def _take(self, answer: calls_pb2.Answer) -> None:
        pending = self._waiting.get(answer.id)
        if pending is None or pending.answer.done():
            return  # its caller gave up
        if answer.HasField("status"):
            if answer.status.code == "OK":
                pending.answer.set_result(pending.replies)
            else:
                pending.answer.set_exception(_refusal(answer.status))
        elif pending.streaming:
            pending.replies.append(answer.reply)
        else:
            pending.answer.set_result(answer.reply)

    def _fail(self, which: Callable[[_Pending], bool], error: Exception) -> None:
        for pending in list(self._waiting.values()):
            if which(pending):
                _settle(pending, error)

    def _stopping(self) -> CallError:
        return _error(grpc.StatusCode.UNAVAILABLE, f"the {self.peer} call stream is closing")


def _settle(pending: _Pending, error: Exception) -> None:
    if not pending.answer.done():
        pending.answer.set_exception(error)


def _not_carried(method: str) -> Callable[..., Any]:
    def call(*_: Any, **__: Any) -> Any:
        raise TypeError(f"{method} streams its requests: a Calls stream carries calls of one")

    return call


def _no_metadata(metadata: Any) -> None:
    if metadata:
        raise ValueError("a call on a Calls stream carries the stream's metadata only")
