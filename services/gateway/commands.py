"""The gateway's commands to a board shard, many on one long-lived SubmitActions stream.

A unary SubmitAction per command cost the gateway and the board about 0.4 ms of CPU per
action in call set-up alone (measured: a unary round trip ~550 µs, a message pair on an
open stream ~165 µs); one stream per shard carries them all, each request answered by id.

An accepted command's reply brings the match's update at the new version (the bytes the
projector will publish for it), handed to ``on_update`` (the view store) before the
command's caller is answered, so the caller's watchers see the result without waiting for
the projector.

A refusal comes back as a status inside the reply (``Refused`` here); a broken stream
(the board restarted) fails the commands waiting on it as UNAVAILABLE, whose outcome the
client settles by retrying with the same command id, as after any lost answer; the next
command opens a new stream. A board without the stream (older, mid-upgrade) is called by
unary SubmitAction instead.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import grpc

from services.common.logging import get_logger
from services.common.stream_calls import Pending, StreamCalls
from tabletop.v1 import board_pb2, board_pb2_grpc

log = get_logger(__name__)


class Refused(Exception):
    """The board refused the command (or could not carry it out): what SubmitAction would
    have ended the call with."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason

    @classmethod
    def of(cls, refused: board_pb2.CommandRefused) -> Refused:
        code = grpc.StatusCode.__members__.get(refused.code, grpc.StatusCode.UNKNOWN)
        return cls(code, refused.message, refused.reason)

    @classmethod
    def from_rpc(cls, error: grpc.aio.AioRpcError) -> Refused:
        reason = dict(error.trailing_metadata() or ()).get("tabletop-reason", "")
        return cls(error.code(), error.details() or "", str(reason))


#: how long a command whose write failed waits for the stream's status
STREAM_END_WAIT_S = 1.0
#: writes of one command on a stream (each on a new one), before UNAVAILABLE
WRITE_ATTEMPTS = 2


class CommandStream(StreamCalls):
    def __init__(
        self,
        board: board_pb2_grpc.BoardStub,
        on_update: Callable[[bytes], None] | None = None,
    ) -> None:
        super().__init__(board.SubmitActions, grouped=True)
        self._board = board
        self._on_update = on_update
        #: the board answered UNIMPLEMENTED: it predates the stream
        self.unary_only = False

    async def submit(self, request: board_pb2.SubmitActionRequest) -> board_pb2.SubmitActionReply:
        """The board's reply to the command; raises Refused."""
        if self.unary_only:
            return await self._unary(request)
        try:
            return await self._on_stream(request)
        except Unimplemented:
            return await self._unary(request)

    async def _on_stream(
        self, request: board_pb2.SubmitActionRequest
    ) -> board_pb2.SubmitActionReply:
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                reply: board_pb2.SubmitActionReply = await self.ask(
                    lambda ident: board_pb2.SubmitActionsRequest(id=ident, command=request)
                )
                return reply
            except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as failed:
                # The write failed: the stream had ended, so the command was not sent. Why
                # it ended the reader learns, when grpc kept the status: a board without the
                # stream ends it UNIMPLEMENTED, but a write racing that end can turn it
                # into INTERNAL for the write and the reader alike. So the command goes
                # once more, on a new stream.
                await self.read_to_end(STREAM_END_WAIT_S)
                if self.unary_only:
                    raise Unimplemented() from failed
                if attempt == WRITE_ATTEMPTS:
                    raise Refused(
                        grpc.StatusCode.UNAVAILABLE, "the board's command stream ended; retry"
                    ) from failed
        raise AssertionError("unreachable")

    def settle(self, reply: Any, pending: Pending) -> None:
        if reply.WhichOneof("outcome") == "reply":
            if reply.view_update and self._on_update is not None:
                try:
                    self._on_update(reply.view_update)
                except Exception:  # the command is done all the same; its view will come
                    log.exception("acknowledged_update_unreadable")
            pending.answer.set_result(reply.reply)
        else:
            pending.answer.set_exception(Refused.of(reply.refused))

    def failure(self, error: grpc.aio.AioRpcError | None, stopping: bool) -> Exception:
        if error is not None:
            return self._broken(error)
        if stopping:
            return Refused(grpc.StatusCode.UNAVAILABLE, "the gateway is stopping")
        return Refused(grpc.StatusCode.UNAVAILABLE, "the board ended the command stream")

    def _broken(self, error: grpc.aio.AioRpcError) -> Exception:
        if error.code() == grpc.StatusCode.UNIMPLEMENTED:
            self.unary_only = True
            log.info("board_without_command_stream")
            return Unimplemented()
        if error.code() != grpc.StatusCode.CANCELLED:
            log.warning("command_stream_broken", code=error.code().name)
        return Refused(error.code(), error.details() or "")

    async def _unary(self, request: board_pb2.SubmitActionRequest) -> board_pb2.SubmitActionReply:
        try:
            reply: board_pb2.SubmitActionReply = await self._board.SubmitAction(request)
            return reply
        except grpc.aio.AioRpcError as error:
            raise Refused.from_rpc(error) from error


class Unimplemented(Exception):
    """The board has no SubmitActions (the caller falls back to SubmitAction)."""
