"""tabletop.v1.Decks: secret deck orders from a committed seed; shuffles and draws as events."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import grpc
from google.protobuf import message

from services.common.call_streams import Handler, answer_calls
from services.common.drafts import Drafts
from services.common.envelope import Cause, is_a, unpack
from services.common.ledger import StreamWriter, append_or_abort
from services.common.snapshots import Snapshot, restore_revealed_seeds, revealed_seeds
from services.games.chance import DeckPiles
from services.games.contract import RuleViolation
from services.games.randomness import DerivedRandom, commitment, match_seed
from tabletop.v1 import (
    decks_pb2,
    decks_pb2_grpc,
    dice_pb2,
    envelope_pb2,
    platform_events_pb2,
)

ALGORITHM = (
    "seed: 32 bytes, commitment sha256(seed); 64-bit blocks from HMAC-SHA256(seed, "
    "'<match_id>:<counter>') as for dice; a shuffle is Fisher–Yates over the cards as given "
    "(for i from n-1 down to 1, swap i with a uniform j in [0, i]); draws take from the top"
)
MAX_CARDS = 1000


@dataclass
class DecksMatch:
    """A match whose seed is not revealed yet (a revealed one keeps its commitment only)."""

    commitment: str = ""
    counter: int = 0
    piles: DeckPiles = field(default_factory=DeckPiles)
    replies: dict[str, message.Message] = field(default_factory=dict)


class DecksService(decks_pb2_grpc.DecksServicer):
    def __init__(self, writer: StreamWriter, secret: bytes) -> None:
        self._writer = writer
        self._secret = secret
        #: matches whose seed is not revealed yet
        self._matches: dict[str, DecksMatch] = {}
        #: revealed (closed) match → its commitment, all a retried Commit or Reveal needs
        #: (a few dozen bytes each, for every match ever: no piles, no object per match)
        self._revealed: dict[str, str] = {}
        #: while recovering: match → its shuffles and draws, replayed only for the matches
        #: not revealed by the end of the log (re-deriving a shuffle is the costly part)
        self._deferred: dict[str, list[envelope_pb2.EventEnvelope]] | None = None
        #: shuffles and draws given out with defer_append, waiting for the match's Seal
        self._drafts: Drafts[DecksMatch] = Drafts(writer, "decks", _copy, self._fold, self.apply)

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

    def seed(self, match_id: str) -> bytes:
        return match_seed(self._secret, f"decks:{match_id}")

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if self._deferred is not None and (
            is_a(envelope, platform_events_pb2.DeckShuffled)
            or is_a(envelope, platform_events_pb2.CardsDrawn)
        ):
            self._deferred.setdefault(envelope.match_id, []).append(envelope)
            return
        if is_a(envelope, platform_events_pb2.DecksSeedRevealed):
            # No shuffle or draw follows a reveal: the piles and kept replies go, only the
            # commitment is kept.
            revealed = self._matches.pop(envelope.match_id, DecksMatch())
            self._revealed.setdefault(envelope.match_id, revealed.commitment)
            self._writer.close(envelope.match_id)
            if self._deferred is not None:
                self._deferred.pop(envelope.match_id, None)
            return
        self._fold(self._matches.setdefault(envelope.match_id, DecksMatch()), envelope)

    def _fold(self, match: DecksMatch, envelope: envelope_pb2.EventEnvelope) -> None:
        """A commitment, shuffle or draw into a match's state (durable, or a draft's)."""
        if is_a(envelope, platform_events_pb2.DecksCommitted):
            event = unpack(envelope, platform_events_pb2.DecksCommitted)
            assert isinstance(event, platform_events_pb2.DecksCommitted)
            match.commitment = event.commitment
        elif is_a(envelope, platform_events_pb2.DeckShuffled):
            shuffled = unpack(envelope, platform_events_pb2.DeckShuffled)
            assert isinstance(shuffled, platform_events_pb2.DeckShuffled)
            # The order is not in the event (it is secret); it re-derives from the seed.
            rng = DerivedRandom(self.seed(envelope.match_id), envelope.match_id, match.counter)
            size = match.piles.shuffle(shuffled.deck, tuple(shuffled.cards), rng)
            match.counter = rng.counter
            match.replies[shuffled.request_id] = decks_pb2.ShuffleReply(
                size=size, sequence=envelope.sequence
            )
        elif is_a(envelope, platform_events_pb2.CardsDrawn):
            drawn = unpack(envelope, platform_events_pb2.CardsDrawn)
            assert isinstance(drawn, platform_events_pb2.CardsDrawn)
            match.piles.draw(drawn.deck, len(drawn.cards))
            match.replies[drawn.request_id] = decks_pb2.DrawReply(
                cards=drawn.cards, remaining=drawn.remaining, sequence=envelope.sequence
            )

    def _current(self, match_id: str) -> DecksMatch | None:
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
        cause = Cause(causation_id=correlation_id, correlation_id=correlation_id, actor="decks")
        for envelope in await append_or_abort(self._writer, context, match_id, [payload], cause):
            self.apply(envelope)

    async def _open_match(
        self, match_id: str, request_id: str, context: grpc.aio.ServicerContext
    ) -> DecksMatch:
        if not match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        if not self._writer.owns(match_id):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "this decks shard does not own the match"
            )
        if match_id in self._revealed:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "the match's decks seed is revealed"
            )
        match = self._current(match_id)
        if match is None or not match.commitment:
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "no decks seed is committed for this match; call Commit first",
            )
            raise AssertionError
        return match

    async def Commit(
        self, request: dice_pb2.CommitRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.CommitReply:
        if not request.match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        async with self._writer.lock(request.match_id):
            if request.match_id in self._revealed:
                return dice_pb2.CommitReply(commitment=self._revealed[request.match_id])
            match = self._current(request.match_id)
            if match is None or not match.commitment:
                payload = platform_events_pb2.DecksCommitted(
                    commitment=commitment(self.seed(request.match_id)), algorithm=ALGORITHM
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

    async def Shuffle(
        self, request: decks_pb2.ShuffleRequest, context: grpc.aio.ServicerContext
    ) -> decks_pb2.ShuffleReply:
        if not request.deck or len(request.cards) > MAX_CARDS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"name the deck and give at most {MAX_CARDS} cards",
            )
        async with self._writer.lock(request.match_id):
            match = await self._open_match(request.match_id, request.request_id, context)
            if request.request_id and request.request_id in match.replies:
                reply = match.replies[request.request_id]
                assert isinstance(reply, decks_pb2.ShuffleReply)
                return reply
            rng = DerivedRandom(self.seed(request.match_id), request.match_id, match.counter)
            rng.shuffled(tuple(request.cards))  # advances the counter exactly as apply() will
            payload = platform_events_pb2.DeckShuffled(
                deck=request.deck,
                cards=request.cards,
                purpose=request.purpose,
                counter_from=match.counter,
                counter_to=rng.counter,
                request_id=request.request_id,
            )
            reply = await self._recorded(request, payload, context)
            assert isinstance(reply, decks_pb2.ShuffleReply)
            return reply

    async def Draw(
        self, request: decks_pb2.DrawRequest, context: grpc.aio.ServicerContext
    ) -> decks_pb2.DrawReply:
        async with self._writer.lock(request.match_id):
            match = await self._open_match(request.match_id, request.request_id, context)
            if request.request_id and request.request_id in match.replies:
                reply = match.replies[request.request_id]
                assert isinstance(reply, decks_pb2.DrawReply)
                return reply
            try:
                # Peek: the pile changes only once the event is durable (in apply).
                cards = match.piles.peek(request.deck, request.count)
            except RuleViolation as refused:
                await context.abort(grpc.StatusCode.FAILED_PRECONDITION, refused.message)
                raise AssertionError from refused
            payload = platform_events_pb2.CardsDrawn(
                deck=request.deck,
                cards=cards,
                purpose=request.purpose,
                remaining=match.piles.size(request.deck) - len(cards),
                request_id=request.request_id,
            )
            reply = await self._recorded(request, payload, context)
            assert isinstance(reply, decks_pb2.DrawReply)
            return reply

    async def _recorded(
        self,
        request: decks_pb2.ShuffleRequest | decks_pb2.DrawRequest,
        payload: message.Message,
        context: grpc.aio.ServicerContext,
    ) -> message.Message:
        """Record a shuffle or draw; the reply its event folded into."""
        match_id = request.match_id
        await self._record(match_id, payload, request.correlation_id, request.defer_append, context)
        match = self._current(match_id)
        assert match is not None
        return match.replies[request.request_id]

    async def Calls(
        self, calls: AsyncIterator[decks_pb2.DecksCall], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[decks_pb2.DecksAnswer]:
        handlers: dict[str, tuple[str, Handler]] = {
            "commit": ("Commit", self.Commit),
            "shuffle": ("Shuffle", self.Shuffle),
            "draw": ("Draw", self.Draw),
            "seal": ("Seal", self.Seal),
            "reveal": ("Reveal", self.Reveal),
        }
        async for answer in answer_calls(
            calls, context, "tabletop.v1.Decks", handlers, decks_pb2.DecksAnswer, _refused
        ):
            yield answer

    async def Seal(
        self, request: dice_pb2.SealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.SealReply:
        if not request.match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        if not self._writer.owns(request.match_id):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "this decks shard does not own the match"
            )
        async with self._writer.lock(request.match_id):
            await self._drafts.seal(request.match_id, context)
            return dice_pb2.SealReply(sequence=self._writer.version(request.match_id))

    async def Reveal(
        self, request: dice_pb2.RevealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.RevealReply:
        async with self._writer.lock(request.match_id):
            seed = self.seed(request.match_id)
            if request.match_id not in self._revealed:
                await self._drafts.seal(request.match_id, context)  # draws, then the seed
                match = self._matches.get(request.match_id)
                if match is None or not match.commitment:
                    await context.abort(
                        grpc.StatusCode.NOT_FOUND, "no decks commitment for this match"
                    )
                payload = platform_events_pb2.DecksSeedRevealed(seed=seed.hex())
                await self._append(request.match_id, payload, request.correlation_id, context)
            return dice_pb2.RevealReply(
                seed=seed.hex(), commitment=self._revealed[request.match_id]
            )


def _copy(match: DecksMatch | None) -> DecksMatch:
    if match is None:
        return DecksMatch()
    # a pile is replaced, never changed in place (DeckPiles): copying the dict is enough
    piles = DeckPiles(dict(match.piles.piles))
    return DecksMatch(match.commitment, match.counter, piles, dict(match.replies))


def _refused(code: str, message: str) -> dice_pb2.CallRefused:
    return dice_pb2.CallRefused(code=code, message=message)
