"""Chance outcomes answered before they are durable, appended together by one Seal.

A command's chance nodes are asked one after another (each outcome decides what the
rules ask next), and every append to Kafka is a transaction: one per roll, shuffle or
draw cost the broker and the service ~1.5 ms of CPU and the command ~5-10 ms of waiting
each (a Drillit turn asks 4 on average, a Dungeon Drop one 2). A request marked
``defer_append`` is answered from the match's *draft* (its durable state with the
outcomes given out since folded in) and its event waits there; the board asks Seal once
per command and service, before it appends the command's own events, and the draft
becomes one append.

Why this loses nothing and re-rolls nothing: nothing durable depends on an outcome
before it is sealed (the board appends only once Seal answered). A draft lost in a
restart or a failed seal is dropped, and the durable state it was drawn from is
unchanged, so the same requests asked again derive the same outcomes (they come from
the seed and the durable counter); the only one who saw them, the board, committed
nothing with them. Any other append of the match (a request without ``defer_append``,
a reveal, another command's first deferred request) seals what is waiting first, so the
stream keeps the order in which outcomes were given out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import grpc
from google.protobuf import message

from services.common.envelope import Cause, make_envelope
from services.common.ledger import StreamWriter, append_or_abort
from tabletop.v1 import envelope_pb2

M = TypeVar("M")

Fold = Callable[[M, envelope_pb2.EventEnvelope], None]


@dataclass
class Draft(Generic[M]):
    """One match's outcomes given out and not appended yet, all of one command."""

    match: M
    correlation_id: str
    payloads: list[message.Message] = field(default_factory=list)


class Drafts(Generic[M]):
    """The drafts of a dice or decks service; the caller holds the match's writer lock."""

    def __init__(
        self,
        writer: StreamWriter,
        actor: str,
        copy: Callable[[M | None], M],
        fold: Fold[M],
        apply: Callable[[envelope_pb2.EventEnvelope], None],
    ) -> None:
        """``copy`` makes a draft's state from the durable one (None: a new match),
        ``fold`` folds an event into a draft's state, ``apply`` folds a durable event
        into the service's own state (as after any append)."""
        self._writer = writer
        self._actor = actor
        self._copy = copy
        self._fold = fold
        self._apply = apply
        self._drafts: dict[str, Draft[M]] = {}

    def current(self, match_id: str, durable: M | None) -> M | None:
        """What the match's next request sees: its draft if it has one."""
        draft = self._drafts.get(match_id)
        return durable if draft is None else draft.match

    async def add(
        self,
        match_id: str,
        durable: M | None,
        payload: message.Message,
        correlation_id: str,
        context: grpc.aio.ServicerContext,
    ) -> None:
        """Fold ``payload`` into the match's draft, as its next event once sealed."""
        draft = self._drafts.get(match_id)
        if draft is not None and draft.correlation_id != correlation_id:
            # another command's outcomes that were never sealed (its board went away
            # midway): they were given out first, so they are appended first
            await self.seal(match_id, context)
            draft = None
        if draft is None:
            draft = self._drafts[match_id] = Draft(self._copy(durable), correlation_id)
        # the sequence the writer will give it: the draft's events follow the durable
        # ones in order, and nothing else appends to the match while a draft is open
        sequence = self._writer.version(match_id) + len(draft.payloads) + 1
        envelope = make_envelope(
            match_id=match_id,
            stream=self._writer.stream,
            sequence=sequence,
            payload=payload,
            cause=self._cause(correlation_id),
        )
        self._fold(draft.match, envelope)
        draft.payloads.append(payload)

    async def seal(self, match_id: str, context: grpc.aio.ServicerContext) -> None:
        """Append the match's draft as one append and fold it into the durable state; a
        failed append drops the draft (aborting the call) and changes nothing."""
        draft = self._drafts.pop(match_id, None)
        if draft is None:
            return
        cause = self._cause(draft.correlation_id)
        for envelope in await append_or_abort(
            self._writer, context, match_id, draft.payloads, cause
        ):
            self._apply(envelope)

    def _cause(self, correlation_id: str) -> Cause:
        return Cause(causation_id=correlation_id, correlation_id=correlation_id, actor=self._actor)
