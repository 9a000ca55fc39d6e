"""The core dice and decks share: random outcomes of a match from a seed committed before
its first outcome and revealed after its last (commit–reveal), each outcome an event of
the service's own stream, answered at once and appended by the match's next Seal when the
board asks so (``defer_append``, services/common/drafts.py).

A service built on it names its stream and its events and adds its outcome RPCs (Roll;
Shuffle and Draw): each takes the match with ``open_match``, answers a retried request
with its ``first_reply``, derives the outcome from ``rng`` and records its event with
``recorded``, which answers with the reply the event folded into.

Held only while in use: a match unused for ``idle_held_s``, or the least recently used
past ``matches_held``, leaves memory (its state, its replies, the writer's envelopes), and
so does a revealed match's commitment past ``matches_held``. Its next request reads its
events back from the log and folds them again: the same counter, piles and replies, so
the same outcomes and the same answers to retries (``_loaded``).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from typing import ClassVar, Generic, Protocol, Self, TypeVar

import grpc
from google.protobuf import message

from services.common.drafts import Drafts
from services.common.envelope import Cause, is_a, unpack
from services.common.eventlog import LogUnavailable
from services.common.holding import Holding
from services.common.ledger import StreamWriter, append_or_abort
from services.common.metrics import MATCHES_LET_GO, MATCHES_READ_BACK
from services.common.snapshots import Snapshot, restore_revealed_seeds, revealed_seeds
from services.games.randomness import DerivedRandom, commitment, match_seed
from tabletop.v1 import dice_pb2, envelope_pb2, platform_events_pb2


@dataclass
class SeededMatch:
    """A match whose seed is not revealed yet (a revealed one keeps its commitment only)."""

    commitment: str = ""
    #: the next block of the seed's random stream
    counter: int = 0
    #: request id → the reply first given, so a retried request gets the same outcome
    replies: dict[str, message.Message] = field(default_factory=dict)

    def copy(self) -> Self:
        """A draft's state: changed by the draft's outcomes, never the durable one."""
        return type(self)(self.commitment, self.counter, dict(self.replies))


M = TypeVar("M", bound=SeededMatch)
R = TypeVar("R", bound=message.Message)


class OutcomeRequest(Protocol):
    """What every outcome request carries (RollRequest, ShuffleRequest, DrawRequest)."""

    @property
    def match_id(self) -> str: ...
    @property
    def request_id(self) -> str: ...
    @property
    def correlation_id(self) -> str: ...
    @property
    def defer_append(self) -> bool: ...


class CommitRevealService(Generic[M]):
    #: the stream written ("dice"), also the actor of its events and the seed's domain
    stream: ClassVar[str]
    #: how outcomes derive from the seed (recorded with the commitment)
    algorithm: ClassVar[str]
    committed: ClassVar[
        type[platform_events_pb2.DiceCommitted] | type[platform_events_pb2.DecksCommitted]
    ]
    revealed: ClassVar[
        type[platform_events_pb2.DiceSeedRevealed] | type[platform_events_pb2.DecksSeedRevealed]
    ]
    #: the outcome events: while recovering they are folded only for the matches still
    #: unrevealed at the end of the log (a revealed match keeps none of them)
    outcomes: ClassVar[tuple[type[message.Message], ...]]

    def __init__(self, writer: StreamWriter, secret: bytes, holding: Holding | None = None) -> None:
        self._writer = writer
        self._secret = secret
        #: when each held match was last used: which ones leave memory (``evict_idle``)
        self.holding = holding if holding is not None else Holding()
        #: matches whose seed is not revealed yet, while in use (the others are read back
        #: from the log at their next request)
        self._matches: dict[str, M] = {}
        #: revealed (closed) match → its commitment, all a retried Commit or Reveal needs,
        #: the most recently revealed or asked for ``holding.matches_held`` of them
        self._revealed: OrderedDict[str, str] = OrderedDict()
        #: while recovering: match → its outcome events, folded at the end
        self._deferred: dict[str, list[envelope_pb2.EventEnvelope]] | None = None
        #: outcomes given out with defer_append, waiting for the match's Seal
        self._drafts: Drafts[M] = Drafts(writer, self.stream, self._copy, self._fold, self.apply)

    # -- what a service adds ------------------------------------------------------------
    def new_match(self) -> M:
        raise NotImplementedError

    def fold_outcome(self, match: M, envelope: envelope_pb2.EventEnvelope) -> None:
        """An outcome event into a match's state (durable, or a draft's), with its reply."""
        raise NotImplementedError

    # -- recovery and snapshots (services/common/stream_service.py) -----------------------
    def begin_recovery(self) -> None:
        self._deferred = {}

    def end_recovery(self) -> None:
        deferred, self._deferred = self._deferred or {}, None
        for envelopes in deferred.values():
            for envelope in envelopes:
                self.apply(envelope)

    def snapshot(self) -> list[message.Message]:
        """The revealed (closed) matches' commitments: a retried Commit or Reveal of one is
        answered from them; open matches are folded again from their envelopes."""
        return revealed_seeds(self._revealed)

    def restore(self, snapshot: Snapshot) -> None:
        restore_revealed_seeds(snapshot, self._revealed)
        self._bound_revealed()

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if self._deferred is not None and any(is_a(envelope, o) for o in self.outcomes):
            self._deferred.setdefault(envelope.match_id, []).append(envelope)
            return
        match_id = envelope.match_id
        match = self._matches.get(match_id)
        if match is None and envelope.sequence > 1:
            # A match let go of (or not held when the snapshot was taken): its next
            # request reads it back whole, this event included. A command appends only
            # to a match it has read back first.
            self._writer.close(match_id)
            return
        if is_a(envelope, self.revealed):
            # No outcome follows a reveal (a command that drew one committed before its
            # match ended): only the commitment is kept.
            self._matches.pop(match_id, None)
            self.holding.forget(match_id)
            self._keep_revealed(match_id, "" if match is None else match.commitment)
            self._writer.close(match_id)
            if self._deferred is not None:
                self._deferred.pop(match_id, None)
            return
        if match is None:
            match = self._matches[match_id] = self.new_match()
        self.holding.use(match_id)
        self._fold(match, envelope)

    def _keep_revealed(self, match_id: str, commitment: str) -> None:
        self._revealed.setdefault(match_id, commitment)
        self._revealed.move_to_end(match_id)
        self._bound_revealed()

    def _bound_revealed(self) -> None:
        bound = self.holding.matches_held
        while bound and len(self._revealed) > bound:
            self._revealed.popitem(last=False)

    # -- holding only the matches in use --------------------------------------------------
    def evict_idle(self) -> int:
        """Unrevealed matches past the holding limits leave memory, their writer's
        envelopes too; one with a request under way or outcomes waiting for a seal stays.
        Returns how many left."""
        evicted = 0
        for match_id in self.holding.to_evict():
            drafted = self._drafts.current(match_id, None) is not None
            if drafted or self._writer.lock(match_id).locked():
                continue
            self._matches.pop(match_id, None)
            self.holding.forget(match_id)
            self._writer.close(match_id, remember=False)
            evicted += 1
        MATCHES_LET_GO.labels(self.stream).inc(evicted)
        return evicted

    async def _loaded(self, match_id: str, context: grpc.aio.ServicerContext) -> M | None:
        """The match's durable state (under its lock): held, or read back from the log
        and folded again; None for a match never committed, or revealed (its commitment
        is in ``_revealed`` then)."""
        match = self._matches.get(match_id)
        if match is not None:
            self.holding.use(match_id)
            return match
        if match_id in self._revealed:
            self._revealed.move_to_end(match_id)
            return None
        if not self._writer.version(match_id):
            return None
        try:
            envelopes = await self._writer.read_events(match_id)
        except LogUnavailable as error:
            await context.abort(grpc.StatusCode.UNAVAILABLE, f"{error}; retry")
            raise AssertionError("context.abort raises") from error
        MATCHES_READ_BACK.labels(self.stream).inc()
        match = self.new_match()
        for envelope in envelopes:
            if is_a(envelope, self.revealed):
                self._keep_revealed(match_id, match.commitment)
                return None
            self._fold(match, envelope)
        self._matches[match_id] = match
        self.holding.use(match_id)
        return match

    def _fold(self, match: M, envelope: envelope_pb2.EventEnvelope) -> None:
        if is_a(envelope, self.committed):
            committed = unpack(envelope, self.committed)
            assert isinstance(committed, self.committed)
            match.commitment = committed.commitment
        else:
            self.fold_outcome(match, envelope)

    def _copy(self, match: M | None) -> M:
        return self.new_match() if match is None else match.copy()

    # -- for the outcome RPCs -------------------------------------------------------------
    def seed(self, match_id: str) -> bytes:
        return match_seed(self._secret, f"{self.stream}:{match_id}")

    def rng(self, match_id: str, match: M) -> DerivedRandom:
        """The match's random stream from where its outcomes so far left it."""
        return DerivedRandom(self.seed(match_id), match_id, match.counter)

    async def owned(self, match_id: str, context: grpc.aio.ServicerContext) -> None:
        """Refuses a request without a match, or for a match of another shard."""
        if not match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        if not self._writer.owns(match_id):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"this {self.stream} shard does not own the match",
            )

    async def open_match(self, match_id: str, context: grpc.aio.ServicerContext) -> M:
        """The match as its next outcome sees it (its draft's state, if it has one);
        refused unless its seed is committed and not revealed. Under the match's lock."""
        durable = await self._loaded(match_id, context)
        if match_id in self._revealed:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"the match's {self.stream} seed is revealed: no more outcomes",
            )
        match = self._drafts.current(match_id, durable)
        if match is None or not match.commitment:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"no {self.stream} seed is committed for this match; call Commit first",
            )
            raise AssertionError  # abort raises; this line is for the type checker
        return match

    def first_reply(self, match: M, request: OutcomeRequest, reply: type[R]) -> R | None:
        """The reply first given for the request's id: a retry gets the same outcome."""
        first = match.replies.get(request.request_id) if request.request_id else None
        assert first is None or isinstance(first, reply)
        return first

    async def recorded(
        self,
        request: OutcomeRequest,
        payload: message.Message,
        reply: type[R],
        context: grpc.aio.ServicerContext,
    ) -> R:
        """Record an outcome event; the reply it folded into (under the match's lock)."""
        match_id = request.match_id
        await self._record(match_id, payload, request.correlation_id, request.defer_append, context)
        match = self._current(match_id)
        assert match is not None
        recorded = match.replies[request.request_id]
        assert isinstance(recorded, reply)
        return recorded

    def _current(self, match_id: str) -> M | None:
        return self._drafts.current(match_id, self._matches.get(match_id))

    async def _record(
        self,
        match_id: str,
        payload: message.Message,
        correlation_id: str,
        defer: bool,
        context: grpc.aio.ServicerContext,
    ) -> None:
        """Append ``payload`` now, after what waits for a seal, or (``defer``) keep it in
        the match's draft until its Seal."""
        if defer:
            await self._drafts.add(
                match_id, self._matches.get(match_id), payload, correlation_id, context
            )
            return
        await self._drafts.seal(match_id, context)
        await self._append(match_id, payload, correlation_id, context)

    async def _append(
        self,
        match_id: str,
        payload: message.Message,
        correlation_id: str,
        context: grpc.aio.ServicerContext,
    ) -> None:
        cause = Cause(causation_id=correlation_id, correlation_id=correlation_id, actor=self.stream)
        for envelope in await append_or_abort(self._writer, context, match_id, [payload], cause):
            self.apply(envelope)

    # -- the RPCs both services answer ----------------------------------------------------
    async def Commit(
        self, request: dice_pb2.CommitRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.CommitReply:
        await self.owned(request.match_id, context)
        async with self._writer.lock(request.match_id):
            durable = await self._loaded(request.match_id, context)
            if request.match_id in self._revealed:
                return dice_pb2.CommitReply(commitment=self._revealed[request.match_id])
            match = self._drafts.current(request.match_id, durable)
            if match is None or not match.commitment:
                payload = self.committed(
                    commitment=commitment(self.seed(request.match_id)), algorithm=self.algorithm
                )
                await self._record(
                    request.match_id,
                    payload,
                    request.correlation_id,
                    request.defer_append,
                    context,
                )
                match = self._current(request.match_id)
                assert match is not None
            return dice_pb2.CommitReply(commitment=match.commitment)

    async def Seal(
        self, request: dice_pb2.SealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.SealReply:
        await self.owned(request.match_id, context)
        async with self._writer.lock(request.match_id):
            await self._drafts.seal(request.match_id, context)
            return dice_pb2.SealReply(sequence=self._writer.version(request.match_id))

    async def Reveal(
        self, request: dice_pb2.RevealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.RevealReply:
        await self.owned(request.match_id, context)
        async with self._writer.lock(request.match_id):
            seed = self.seed(request.match_id)
            await self._loaded(request.match_id, context)
            if request.match_id not in self._revealed:
                await self._drafts.seal(request.match_id, context)  # outcomes, then the seed
                match = self._matches.get(request.match_id)
                if match is None or not match.commitment:
                    await context.abort(
                        grpc.StatusCode.NOT_FOUND, f"no {self.stream} commitment for this match"
                    )
                payload = self.revealed(seed=seed.hex())
                await self._append(request.match_id, payload, request.correlation_id, context)
            return dice_pb2.RevealReply(
                seed=seed.hex(), commitment=self._revealed[request.match_id]
            )
