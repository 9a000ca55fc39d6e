"""The board's dice/decks client: deadlines on every call, and the status a failure maps to
(UNAVAILABLE only when retrying the command can help)."""

from __future__ import annotations

import asyncio
from typing import Any

import grpc
import pytest

from services.board.chance import CALL_TIMEOUT_S, RemoteChance
from services.games.commands import Refusal, RefusalKind
from services.games.contract import RollDice
from tabletop.v1 import dice_pb2


class Stub:
    """Answers every call by raising ``code`` (or with a reply), recording the timeout."""

    def __init__(self, code: grpc.StatusCode | None) -> None:
        self.code = code
        self.timeouts: list[float | None] = []

    def __getattr__(self, name: str) -> Any:
        def call(request: Any, timeout: float | None = None) -> Any:
            self.timeouts.append(timeout)  # like a stub: returns the call to await
            return self._answer()

        return call

    async def _answer(self) -> dice_pb2.RollReply:
        if self.code is not None:
            raise grpc.aio.AioRpcError(
                self.code, grpc.aio.Metadata(), grpc.aio.Metadata(), details="nope"
            )
        return dice_pb2.RollReply(values=[3])


def roll(code: grpc.StatusCode | None) -> tuple[Stub, Refusal | None]:
    """The command's refusal when a dice call fails (the handler's ChanceResolver)."""
    stub = Stub(code)
    chance = RemoteChance(stub, stub)  # type: ignore[arg-type]
    try:
        asyncio.run(chance.resolve("m", RollDice(1, 6, "test"), "r", "c"))
    except Refusal as refused:
        return stub, refused
    return stub, None


@pytest.mark.parametrize(
    ("code", "answered"),
    [
        (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.UNAVAILABLE),
        (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE),
        (grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.UNAVAILABLE),
        (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.FAILED_PRECONDITION),
        (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.INTERNAL),
        (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INTERNAL),
    ],
)
def test_a_failed_call_is_answered_with_a_code_that_says_whether_to_retry(
    code: grpc.StatusCode, answered: grpc.StatusCode
) -> None:
    _, refused = roll(code)
    assert refused is not None and refused.kind == RefusalKind(answered.name)
    assert ("retry" in refused.message) == (answered == grpc.StatusCode.UNAVAILABLE)


def test_every_call_has_a_deadline() -> None:
    stub, failed = roll(None)
    assert failed is None
    assert stub.timeouts == [CALL_TIMEOUT_S]
