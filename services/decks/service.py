"""tabletop.v1.Decks: secret deck orders from a committed seed; shuffles and draws as events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Self

import grpc

from services.common.commit_reveal import CommitRevealService, SeededMatch
from services.common.envelope import is_a, unpack
from services.games.chance import DeckPiles
from services.games.contract import RuleViolation
from tabletop.v1 import decks_pb2, decks_pb2_grpc, envelope_pb2, platform_events_pb2

ALGORITHM = (
    "seed: 32 bytes, commitment sha256(seed); 64-bit blocks from HMAC-SHA256(seed, "
    "'<match_id>:<counter>') as for dice; a shuffle is Fisher–Yates over the cards as given "
    "(for i from n-1 down to 1, swap i with a uniform j in [0, i]); draws take from the top"
)
MAX_CARDS = 1000


@dataclass
class DecksMatch(SeededMatch):
    """A match's deck piles too (their orders are secret: they re-derive from the seed)."""

    piles: DeckPiles = field(default_factory=DeckPiles)

    def copy(self) -> Self:
        # a pile is replaced, never changed in place (DeckPiles): copying the dict is enough
        piles = DeckPiles(dict(self.piles.piles))
        return type(self)(self.commitment, self.counter, dict(self.replies), piles)


class DecksService(CommitRevealService[DecksMatch], decks_pb2_grpc.DecksServicer):
    stream = "decks"
    algorithm = ALGORITHM
    committed = platform_events_pb2.DecksCommitted
    revealed = platform_events_pb2.DecksSeedRevealed
    # re-deriving a shuffle is the costly part of a recovery
    outcomes = (platform_events_pb2.DeckShuffled, platform_events_pb2.CardsDrawn)

    def new_match(self) -> DecksMatch:
        return DecksMatch()

    def fold_outcome(self, match: DecksMatch, envelope: envelope_pb2.EventEnvelope) -> None:
        if is_a(envelope, platform_events_pb2.DeckShuffled):
            shuffled = unpack(envelope, platform_events_pb2.DeckShuffled)
            assert isinstance(shuffled, platform_events_pb2.DeckShuffled)
            # The order is not in the event (it is secret); it re-derives from the seed.
            rng = self.rng(envelope.match_id, match)
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

    async def Shuffle(
        self, request: decks_pb2.ShuffleRequest, context: grpc.aio.ServicerContext
    ) -> decks_pb2.ShuffleReply:
        if not request.deck or len(request.cards) > MAX_CARDS:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"name the deck and give at most {MAX_CARDS} cards",
            )
        await self.owned(request.match_id, context)
        async with self._writer.lock(request.match_id):
            match = await self.open_match(request.match_id, context)
            first = self.first_reply(match, request, decks_pb2.ShuffleReply)
            if first is not None:
                return first
            rng = self.rng(request.match_id, match)
            rng.shuffled(tuple(request.cards))  # advances the counter exactly as apply() will
            payload = platform_events_pb2.DeckShuffled(
                deck=request.deck,
                cards=request.cards,
                purpose=request.purpose,
                counter_from=match.counter,
                counter_to=rng.counter,
                request_id=request.request_id,
            )
            return await self.recorded(request, payload, decks_pb2.ShuffleReply, context)

    async def Draw(
        self, request: decks_pb2.DrawRequest, context: grpc.aio.ServicerContext
    ) -> decks_pb2.DrawReply:
        await self.owned(request.match_id, context)
        async with self._writer.lock(request.match_id):
            match = await self.open_match(request.match_id, context)
            first = self.first_reply(match, request, decks_pb2.DrawReply)
            if first is not None:
                return first
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
            return await self.recorded(request, payload, decks_pb2.DrawReply, context)
