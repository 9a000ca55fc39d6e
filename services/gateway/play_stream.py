"""One seat's play on a PlayMatch stream: its actions in, their answers and its views out.

A unary SubmitAction per action costs the client and the gateway a call's set-up each
(measured in-process: a unary round trip ~550 µs of CPU, a message pair on an open stream
~165 µs), and a player who also watches holds a second call for the views. A game client
holds one socket for both (boardgame.io's socket.io does); this is that socket in gRPC.

Each action is judged by the very code that judges SubmitAction, with the stream's caller:
its refusal (``Refused``) becomes an answer on the stream (``PlayRefused``) instead of the
end of it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable
from typing import NamedTuple

import grpc

from services.common.logging import get_logger
from services.common.metrics import INTERNAL_DETAILS
from services.gateway.refusals import Refused
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2

log = get_logger(__name__)

#: actions a stream may have unanswered at once; one more is refused, not queued
MAX_IN_FLIGHT = 16
#: answers waiting for a client that does not read; past this no more requests are read
MAX_UNREAD = 16

#: SubmitAction, for the stream's caller
Submit = Callable[[board_pb2.SubmitActionRequest], Awaitable[board_pb2.SubmitActionReply]]
#: UndoAction, for the stream's caller
Undo = Callable[[gateway_pb2.UndoActionRequest], Awaitable[gateway_pb2.UndoActionReply]]


def refused(ident: int, code: grpc.StatusCode, message: str) -> gateway_pb2.PlayUpdate:
    return gateway_pb2.PlayUpdate(
        id=ident, refused=gateway_pb2.PlayRefused(code=code.name, message=message)
    )


def refusal_answer(ident: int, refusal: Refused) -> gateway_pb2.PlayUpdate:
    """What SubmitAction would have ended its call with, as an answer on the stream."""
    return gateway_pb2.PlayUpdate(
        id=ident,
        refused=gateway_pb2.PlayRefused(
            code=refusal.code.name,
            message=refusal.message,
            reason=refusal.trailer("tabletop-reason"),
            retry_after_ms=int(refusal.trailer("retry-after-ms") or 0),
        ),
    )


class AckWithView(NamedTuple):
    """An ack and the update whose view (rendered by the caller) goes out with it."""

    answer: gateway_pb2.PlayUpdate
    update: match_pb2.ViewUpdate


class Play:
    """The answers and views of one stream, merged in the order they are ready.

    ``run`` yields answers (``PlayUpdate``) and the match's view updates (``ViewUpdate``,
    for the caller to render for its viewer); once the caller says the views are over it
    yields the answers still owed and ends. Nothing grows with a client that sends faster
    than it reads: views are coalesced to the newest (as WatchMatch's are), and requests
    are read only while fewer than ``MAX_UNREAD`` answers wait to be sent. Given
    ``latest`` (the client asked for views with acks), an ack whose version the match's
    newest update has comes as ``AckWithView``, and that update is not yielded again.
    """

    def __init__(
        self,
        match_id: str,
        submit: Submit,
        latest: Callable[[], match_pb2.ViewUpdate | None] | None = None,
        undo: Undo | None = None,
    ) -> None:
        self._match_id = match_id
        self._submit = submit
        self._undo = undo
        #: the match's newest update, for a stream whose acks bring their view
        self._latest = latest
        self._answers: deque[gateway_pb2.PlayUpdate] = deque()
        self._view: match_pb2.ViewUpdate | None = None
        self._sent: match_pb2.ViewUpdate | None = None  # the last update given out
        self._wake = asyncio.Event()
        self._room = asyncio.Event()
        self._in_flight: set[asyncio.Task[None]] = set()
        self._views_over = False
        self._follower: asyncio.Task[None] | None = None
        #: a request that could not be taken (it does not parse): it ends the stream
        self._failed: Refused | None = None

    def views_ended(self) -> None:
        self._views_over = True
        self._wake.set()
        if self._follower is not None:
            self._follower.cancel()

    async def run(
        self,
        requests: AsyncIterator[gateway_pb2.PlayRequest],
        views: AsyncIterator[match_pb2.ViewUpdate],
    ) -> AsyncGenerator[gateway_pb2.PlayUpdate | match_pb2.ViewUpdate | AckWithView, None]:
        reader = asyncio.create_task(self._read(requests))
        self._follower = asyncio.create_task(self._follow(views))
        try:
            while True:
                if self._failed is not None:
                    raise self._failed
                if self._answers:
                    answer = self._answers.popleft()
                    self._room.set()
                    yield self._with_view(answer)
                elif self._view is not None and not self._views_over:
                    view, self._view = self._view, None
                    if view is not self._sent:  # else it went out with an ack
                        self._sent = view
                        yield view
                elif self._views_over and not self._in_flight:
                    return
                else:
                    self._wake.clear()
                    await self._wake.wait()
        finally:
            tasks = [reader, self._follower, *self._in_flight]
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task

    def _with_view(self, answer: gateway_pb2.PlayUpdate) -> gateway_pb2.PlayUpdate | AckWithView:
        """An ack with the match's newest update, when the stream asked for that and the
        update has the ack's version (the board's update reaches the view store before
        its ack reaches the stream): it supersedes any update waiting to go out."""
        if self._latest is None or self._views_over or answer.WhichOneof("kind") != "ack":
            return answer
        update = self._latest()
        if update is None or update.summary.version < answer.ack.version:
            return answer
        self._view = None
        if update is self._sent:
            return answer
        self._sent = update
        return AckWithView(answer, update)

    def _send(self, answer: gateway_pb2.PlayUpdate) -> None:
        self._answers.append(answer)
        self._wake.set()

    async def _follow(self, views: AsyncIterator[match_pb2.ViewUpdate]) -> None:
        async for update in views:
            self._view = update
            self._wake.set()
        self._views_over = True  # the view store stopped following the match
        self._wake.set()

    async def _read(self, requests: AsyncIterator[gateway_pb2.PlayRequest]) -> None:
        try:
            await self._take(requests)
        except Refused as refusal:  # the edge could not take a request: the stream ends
            self._failed = refusal
            self._wake.set()

    async def _take(self, requests: AsyncIterator[gateway_pb2.PlayRequest]) -> None:
        async for request in requests:
            while len(self._answers) >= MAX_UNREAD:
                self._room.clear()
                await self._room.wait()
            kind = request.WhichOneof("kind")
            asked = request.undo if kind == "undo" else request.action
            if kind not in ("action", "undo") or (kind == "undo" and self._undo is None):
                self._send(
                    refused(
                        request.id,
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "after watch a PlayMatch stream takes actions and undos only; "
                        "another match needs another stream",
                    )
                )
            elif asked.match_id not in ("", self._match_id):
                self._send(
                    refused(
                        request.id,
                        grpc.StatusCode.INVALID_ARGUMENT,
                        "an action on this stream is for the match it watches",
                    )
                )
            elif len(self._in_flight) >= MAX_IN_FLIGHT:
                self._send(
                    refused(
                        request.id,
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        f"{MAX_IN_FLIGHT} actions are unanswered on this stream; "
                        "wait for their answers",
                    )
                )
            else:
                task = asyncio.create_task(self._answer(request.id, asked))
                self._in_flight.add(task)

    async def _answer(
        self, ident: int, asked: board_pb2.SubmitActionRequest | gateway_pb2.UndoActionRequest
    ) -> None:
        if not asked.match_id:
            asked.match_id = self._match_id
        try:
            if isinstance(asked, gateway_pb2.UndoActionRequest):
                assert self._undo is not None  # (else refused when it was read)
                answer = gateway_pb2.PlayUpdate(id=ident, undone=await self._undo(asked))
            else:
                answer = gateway_pb2.PlayUpdate(id=ident, ack=await self._submit(asked))
        except Refused as refusal:
            answer = refusal_answer(ident, refusal)
        except asyncio.CancelledError:
            raise
        except Exception:
            log.exception("play_action_failed", match_id=self._match_id)
            answer = refused(ident, grpc.StatusCode.INTERNAL, INTERNAL_DETAILS)
        # Given up in the same step as the answer is queued: ``run`` never sees an answer
        # ready while its action still counts as in flight (nor the reverse).
        current = asyncio.current_task()
        if current is not None:
            self._in_flight.discard(current)
        self._send(answer)
