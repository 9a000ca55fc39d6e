"""Resolving the engine's chance nodes through the dice and decks services.

Request ids derive from the command id and the node's index, so a retried command gets
the same outcomes back instead of new ones.
"""

from __future__ import annotations

import grpc

from services.games.commands import Refusal, RefusalKind
from services.games.contract import (
    CardsDrawn,
    ChanceOutcome,
    ChanceRequest,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    RollDice,
    ShuffleDeck,
)
from tabletop.v1 import decks_pb2, decks_pb2_grpc, dice_pb2, dice_pb2_grpc


class RemoteChance:
    def __init__(self, dice: dice_pb2_grpc.DiceStub, decks: decks_pb2_grpc.DecksStub) -> None:
        self.dice = dice
        self.decks = decks

    async def commit(self, match_id: str, correlation_id: str) -> tuple[str, str]:
        dice = await self.dice.Commit(
            dice_pb2.CommitRequest(match_id=match_id, correlation_id=correlation_id)
        )
        decks = await self.decks.Commit(
            dice_pb2.CommitRequest(match_id=match_id, correlation_id=correlation_id)
        )
        return dice.commitment, decks.commitment

    async def reveal(self, match_id: str, correlation_id: str) -> None:
        request = dice_pb2.RevealRequest(match_id=match_id, correlation_id=correlation_id)
        await self.dice.Reveal(request)
        await self.decks.Reveal(request)

    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        """The command handler's ChanceResolver: an unreachable service is a refusal."""
        try:
            return await self._resolve(match_id, request, request_id, cause)
        except grpc.aio.AioRpcError as error:
            raise Refusal(
                RefusalKind.UNAVAILABLE,
                "CHANCE_UNAVAILABLE",
                f"the {type(request).__name__} could not be resolved "
                f"({error.code().name}); retry with the same command id",
            ) from error

    async def _resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, correlation_id: str
    ) -> ChanceOutcome:
        match request:
            case RollDice(count=count, sides=sides, purpose=purpose):
                rolled = await self.dice.Roll(
                    dice_pb2.RollRequest(
                        match_id=match_id,
                        count=count,
                        sides=sides,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                    )
                )
                return DiceRolled(tuple(rolled.values))
            case ShuffleDeck(deck=deck, cards=cards, purpose=purpose):
                shuffled = await self.decks.Shuffle(
                    decks_pb2.ShuffleRequest(
                        match_id=match_id,
                        deck=deck,
                        cards=cards,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                    )
                )
                return DeckShuffled(deck, shuffled.size)
            case DrawCards(deck=deck, count=count, purpose=purpose):
                drawn = await self.decks.Draw(
                    decks_pb2.DrawRequest(
                        match_id=match_id,
                        deck=deck,
                        count=count,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                    )
                )
                return CardsDrawn(deck, tuple(drawn.cards))
        raise TypeError(f"unknown chance request {request!r}")
