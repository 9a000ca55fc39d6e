"""Requests to a service on one long-lived bidirectional stream, each answered by id (the
board's commands, a service's event reads): a gRPC call's set-up costs several times a
request and reply on an open stream. The stream opens on first use and again after it
ended; what a reply means, and what a broken stream means, the users say."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import grpc

from services.common.replies import BATCHED_REPLIES, BATCHED_REQUESTS, in_groups


class Pending:
    """A request in flight: its answer, and what its replies brought so far."""

    __slots__ = ("answer", "parts")

    def __init__(self) -> None:
        self.answer: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.parts: list[Any] = []


class StreamCalls:
    """``grouped``: the stream's messages have a ``more`` field (DESIGN-NOTES 37). Then the
    stream is opened saying it reads grouped replies, and once the service has said in
    its initial metadata that it reads grouped requests, each write carries every request
    made since the last one."""

    def __init__(self, open_stream: Callable[..., Any], grouped: bool = False) -> None:
        self._open_stream = open_stream
        self._grouped = grouped
        self._grouping: Any = None  # the stream, once its service said it reads groups
        self._learning: asyncio.Task[None] | None = None  # held: a task needs a reference
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[int, Pending] = {}
        self._next_id = 0
        self._outbox: list[tuple[int, Any]] = []  # (id, request) not yet written
        self._writer: asyncio.Task[None] | None = None  # the one writing on the stream

    async def ask(self, request_for: Callable[[int], Any]) -> Any:
        """Send the request ``request_for`` builds for a new id and await its answer (or
        the exception ``settle`` or ``failure`` gave it). A failed write raises what grpc
        raised: AioRpcError, or InvalidStateError on a stream that ended meanwhile.

        Requests go out through an outbox: one writer task at a time drains it, all the
        requests made since its last write at once (``send``), so a burst of requests
        costs one write where the service reads them grouped."""
        self._next_id += 1
        ident = self._next_id
        pending = self._waiting[ident] = Pending()
        self._outbox.append((ident, request_for(ident)))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write_out())
        try:
            return await pending.answer
        finally:
            # answered, failed, or its caller gave up (the request may still be carried
            # out; its reply is dropped when it comes)
            self._waiting.pop(ident, None)

    def _unanswered(self, ident: int) -> bool:
        pending = self._waiting.get(ident)
        return pending is not None and not pending.answer.done()

    async def send(self, call: Any, requests: list[Any]) -> None:
        """Write ``requests`` on ``call``: one message each, unless the service groups."""
        if call is not self._grouping:
            for request in requests:
                await call.write(request)
            return
        for group in in_groups(requests):
            group[0].more.extend(group[1:])
            await call.write(group[0])

    async def _learn(self, call: Any) -> None:
        """Whether the service of ``call`` reads grouped requests (its initial metadata says
        so; until it comes, each request goes in a message of its own)."""
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            if BATCHED_REQUESTS in tuple(await call.initial_metadata() or ()):
                self._grouping = call

    async def _write_out(self) -> None:
        while self._outbox:
            # requests whose callers gave up, or already failed with a broken stream, stay
            # unwritten
            batch = [(i, r) for i, r in self._outbox if self._unanswered(i)]
            self._outbox = []
            if not batch:
                return
            try:
                await self.send(self._open(), [request for _, request in batch])
            except BaseException as error:
                # each caller gets what its own write would have raised (closing the
                # stream cancels this task: its callers get what the stream's end gives)
                failed = (
                    self.failure(None, stopping=True)
                    if isinstance(error, asyncio.CancelledError)
                    else error
                )
                for ident, _ in batch:
                    pending = self._waiting.get(ident)
                    if pending is not None and not pending.answer.done():
                        pending.answer.set_exception(failed)
                if not isinstance(error, Exception):
                    raise

    def settle(self, reply: Any, pending: Pending) -> None:
        """Take a reply for ``pending``: set its answer once it is complete."""
        raise NotImplementedError

    def replies(self, message: Any) -> Sequence[Any]:
        """The replies one message of the stream carries: itself, and with groups the
        others ready with it."""
        return (message, *message.more) if self._grouped and message.more else (message,)

    def failure(self, error: grpc.aio.AioRpcError | None, stopping: bool) -> Exception:
        """What the requests still waiting get when the stream ends: ``error`` when it
        broke, None when the service ended it or (``stopping``) the caller closed it."""
        raise NotImplementedError

    def _open(self) -> Any:
        if self._call is None or self._call.done():
            if self._grouped:
                self._call = self._open_stream(metadata=(BATCHED_REPLIES,))
                self._grouping = None
                self._learning = asyncio.create_task(self._learn(self._call))
            else:
                self._call = self._open_stream()
            self._reader = asyncio.create_task(self._read(self._call))
        return self._call

    async def _read(self, call: Any) -> None:
        try:
            async for message in call:
                for reply in self.replies(message):
                    pending = self._waiting.get(reply.id)
                    if pending is not None and not pending.answer.done():
                        self.settle(reply, pending)
            failure = self.failure(None, stopping=False)
        except grpc.aio.AioRpcError as error:
            failure = self.failure(error, stopping=False)
        except asyncio.CancelledError:
            failure = self.failure(None, stopping=True)
        if self._call is call:
            self._call = None
        for pending in list(self._waiting.values()):
            if not pending.answer.done():
                pending.answer.set_exception(failure)

    async def read_to_end(self, limit_s: float) -> None:
        """Wait, at most ``limit_s``, for the reader to see the stream end. After a failed
        write the stream's own status is the reader's to learn: grpc reports a write to a
        call its service already ended as INTERNAL ("Internal error from Core")."""
        reader = self._reader
        if reader is not None and not reader.done():
            with contextlib.suppress(TimeoutError, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(reader), limit_s)

    async def close(self) -> None:
        for task in (self._writer, self._learning):
            if task is not None:
                task.cancel()
        call, self._call = self._call, None
        if call is not None:
            call.cancel()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
