"""Commands on their way to a board shard: admitted while the stack can take them
(services/gateway/admission.py), their refusals passed on, and the match's update that
comes with the board's acknowledgement shown at once."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar

from services.gateway.admission import Admission
from services.gateway.refusals import exhausted, relay
from services.gateway.shards import Shard, Shards
from services.gateway.viewstore import ViewStore


class _Versioned(Protocol):
    @property
    def version(self) -> int: ...


Acked = TypeVar("Acked", bound=_Versioned)


class Commands:
    def __init__(self, shards: Shards, views: ViewStore, admission: Admission) -> None:
        self._shards = shards
        self._views = views
        self._admission = admission

    def shard(self, match_id: str) -> Shard:
        return self._shards.of(match_id)

    def show(self, update: bytes) -> None:
        """The match's update that came with the board's acknowledgement, to the views."""
        if update:
            self._views.acknowledged(update)

    async def admitted(
        self, match_id: str, call: Callable[[], Awaitable[Acked]], new_match: bool = False
    ) -> Acked:
        """The board's reply to a command, unless the stack is too far behind to take it."""
        refusal = self._admission.refusal(new_match)
        if refusal is not None:
            raise exhausted(refusal)
        self._admission.in_flight += 1
        try:
            reply = await relay(call())
        finally:
            self._admission.in_flight -= 1
        self._admission.acknowledged(match_id, reply.version)
        return reply
