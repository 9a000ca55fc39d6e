"""How the gateway says no: an RPC body raises ``Refused`` (a status code, a message for
the client, trailing metadata) and the edge (services/gateway/edge.py) ends the call with
it; on a PlayMatch stream the same refusal becomes an answer to one action instead.

A refusal from a peer service is passed on by ``relay``: its code and reason code, but
never a message that might name the stack's internals.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import TypeVar

import grpc

from services.gateway.admission import Refusal
from services.gateway.auth import Quota

#: a refusal passed on from a peer is cut to this many characters
MAX_DETAIL = 300

Reply = TypeVar("Reply")


class Refused(Exception):
    """The call is refused: ``code``, ``message`` (for the client: bounded, never an echo
    of its input nor a Python class) and ``trailers`` (retry-after-ms, tabletop-reason)."""

    def __init__(
        self, code: grpc.StatusCode, message: str, trailers: Sequence[tuple[str, str]] = ()
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.trailers = tuple(trailers)

    def trailer(self, key: str) -> str:
        return next((value for k, value in self.trailers if k == key), "")


def exhausted(refusal: Refusal) -> Refused:
    """RESOURCE_EXHAUSTED, with when to come back."""
    return Refused(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        refusal.message,
        (("retry-after-ms", str(refusal.retry_after_ms)),),
    )


def forwarded(refused: grpc.aio.AioRpcError) -> Refused:
    """A peer's refusal as the client's (code, reason, a bounded message)."""
    reason = dict(refused.trailing_metadata() or ()).get("tabletop-reason", "")
    trailers = (("tabletop-reason", str(reason)),) if reason else ()
    code = refused.code()
    if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
        # A peer's bug is not the client's business; its log has the detail.
        return Refused(grpc.StatusCode.UNAVAILABLE, "the service failed; try again", trailers)
    if code in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    ):
        # Infrastructure trouble (its message may name internals): the reason code stays.
        code = grpc.StatusCode.UNAVAILABLE if code == grpc.StatusCode.CANCELLED else code
        return Refused(code, "a service is unavailable; retry with the same command id", trailers)
    return Refused(code, (refused.details() or "")[:MAX_DETAIL], trailers)


async def relay(call: Awaitable[Reply]) -> Reply:
    """The peer's reply, or its refusal passed on."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise forwarded(error) from error


def within_quota(quota: Quota, client: str) -> None:
    """Take one from the client's quota; RESOURCE_EXHAUSTED, with when, if it is empty."""
    wait = quota.take(client)
    if wait > 0:
        raise too_many(wait)


def too_many(wait: float, what: str = "requests") -> Refused:
    """RESOURCE_EXHAUSTED for a quota that is empty for ``wait`` seconds more."""
    retry_ms = max(1, int(wait * 1000))
    return Refused(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        f"too many {what}; retry after {retry_ms} ms",
        (("retry-after-ms", str(retry_ms)),),
    )
