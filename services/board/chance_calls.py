"""The board's calls to dice and decks, many on one long-lived ``Calls`` stream per service.

With defer_append a roll or draw no longer waits for a transaction, and the unary call's
set-up became most of its cost (a unary round trip ~300 µs of CPU on the two sides, a
message pair on an open stream ~90 µs); a Drillit match makes ~55 such calls. These
objects stand where the services' stubs stood: the same methods, and a refusal or a
broken stream raises AioRpcError with the code the unary call would have ended with, so
``RemoteChance`` reads both alike (a broken stream is UNAVAILABLE: the command is retried
with the same request ids, which get the same outcomes). There is no unary fallback: a
board that calls Seal needs dice and decks of its release anyway, so they are upgraded
first (they go on serving older boards' unary calls).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import grpc

from services.common.logging import get_logger
from services.common.stream_calls import Pending, StreamCalls
from tabletop.v1 import decks_pb2, decks_pb2_grpc, dice_pb2, dice_pb2_grpc

log = get_logger(__name__)


class ChanceCallError(grpc.aio.AioRpcError):  # type: ignore[misc]
    """How a call on the stream ended, as its unary call would have: the service's
    refusal, its deadline, or UNAVAILABLE for a broken stream."""


def rpc_error(code: grpc.StatusCode, details: str) -> Exception:
    error: Exception = ChanceCallError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), details)
    return error


class ChanceCalls(StreamCalls):
    def __init__(self, stub: Any, call: Callable[..., Any], service: str) -> None:
        super().__init__(stub.Calls, grouped=True)
        self._message = call
        self._service = service

    async def call(self, field: str, request: Any, deadline_s: float) -> Any:
        """The reply to ``request`` (the ``field`` of the call message), within
        ``deadline_s`` seconds; raises AioRpcError as the unary call would."""
        try:
            return await asyncio.wait_for(
                self.ask(lambda ident: self._message(id=ident, **{field: request})), deadline_s
            )
        except TimeoutError as late:
            raise rpc_error(
                grpc.StatusCode.DEADLINE_EXCEEDED, f"no answer within {deadline_s:g} s"
            ) from late
        except ChanceCallError:
            raise
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError) as broken:
            # the write failed: the stream had ended (the service restarted, say); what
            # its call became is unknown, and the command's retry settles it
            raise self.failure(
                broken if isinstance(broken, grpc.aio.AioRpcError) else None, False
            ) from broken

    def settle(self, reply: Any, pending: Pending) -> None:
        field = reply.WhichOneof("answer")
        if field == "refused":
            code = grpc.StatusCode.__members__.get(reply.refused.code, grpc.StatusCode.UNKNOWN)
            pending.answer.set_exception(rpc_error(code, reply.refused.message))
        else:
            pending.answer.set_result(getattr(reply, field or "refused"))

    def failure(self, error: grpc.aio.AioRpcError | None, stopping: bool) -> Exception:
        """UNAVAILABLE, whatever broke the stream: a retry of the command can fix it."""
        if error is not None:
            code = error.code().name
            if error.code() != grpc.StatusCode.CANCELLED:
                log.warning("call_stream_broken", service=self._service, code=code)
            return rpc_error(
                grpc.StatusCode.UNAVAILABLE, f"the {self._service} call stream broke ({code})"
            )
        if stopping:
            return rpc_error(grpc.StatusCode.UNAVAILABLE, "the board is stopping")
        return rpc_error(grpc.StatusCode.UNAVAILABLE, f"{self._service} ended the call stream")


class StreamedDice:
    """Dice's calls as ``DiceStub`` makes them (awaitable, with a ``timeout``), carried on
    its ``Calls`` stream."""

    def __init__(self, stub: dice_pb2_grpc.DiceStub) -> None:
        self._calls = ChanceCalls(stub, dice_pb2.DiceCall, "dice")

    def Commit(
        self, request: dice_pb2.CommitRequest, timeout: float
    ) -> Awaitable[dice_pb2.CommitReply]:
        return self._calls.call("commit", request, timeout)

    def Roll(self, request: dice_pb2.RollRequest, timeout: float) -> Awaitable[dice_pb2.RollReply]:
        return self._calls.call("roll", request, timeout)

    def Seal(self, request: dice_pb2.SealRequest, timeout: float) -> Awaitable[dice_pb2.SealReply]:
        return self._calls.call("seal", request, timeout)

    def Reveal(
        self, request: dice_pb2.RevealRequest, timeout: float
    ) -> Awaitable[dice_pb2.RevealReply]:
        return self._calls.call("reveal", request, timeout)

    async def close(self) -> None:
        await self._calls.close()


class StreamedDecks:
    """Decks' calls as ``DecksStub`` makes them, carried on its ``Calls`` stream."""

    def __init__(self, stub: decks_pb2_grpc.DecksStub) -> None:
        self._calls = ChanceCalls(stub, decks_pb2.DecksCall, "decks")

    def Commit(
        self, request: dice_pb2.CommitRequest, timeout: float
    ) -> Awaitable[dice_pb2.CommitReply]:
        return self._calls.call("commit", request, timeout)

    def Shuffle(
        self, request: decks_pb2.ShuffleRequest, timeout: float
    ) -> Awaitable[decks_pb2.ShuffleReply]:
        return self._calls.call("shuffle", request, timeout)

    def Draw(
        self, request: decks_pb2.DrawRequest, timeout: float
    ) -> Awaitable[decks_pb2.DrawReply]:
        return self._calls.call("draw", request, timeout)

    def Seal(self, request: dice_pb2.SealRequest, timeout: float) -> Awaitable[dice_pb2.SealReply]:
        return self._calls.call("seal", request, timeout)

    def Reveal(
        self, request: dice_pb2.RevealRequest, timeout: float
    ) -> Awaitable[dice_pb2.RevealReply]:
        return self._calls.call("reveal", request, timeout)

    async def close(self) -> None:
        await self._calls.close()
