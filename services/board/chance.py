"""Resolving the engine's chance nodes through the dice and decks services.

Request ids derive from the command id and the node's index, so a retried command gets
the same outcomes back instead of new ones. Every call has a deadline; a failed call
raises ChanceFailed with the status the board should answer: UNAVAILABLE only for what a
retry of the command can fix.

A command's seed commitments and outcomes are asked with ``defer_append`` and sealed
together (``settle``) before the board appends the command (services/common/drafts.py):
one append per service and command instead of one per chance node.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

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

#: deadline of one call to dice or decks (each appends one event to Kafka: ~10 ms)
CALL_TIMEOUT_S = 5.0

#: codes of a failed dice/decks call after which the same command may succeed
RETRYABLE = frozenset(
    {
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        grpc.StatusCode.CANCELLED,
    }
)

T = TypeVar("T")

#: the chance services a match may commit seeds with
BOTH = frozenset({"dice", "decks"})


class ChanceFailed(Exception):
    """A dice or decks call failed; ``code`` is what the board answers its client."""

    def __init__(self, code: grpc.StatusCode, message: str, reason: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason

    def refusal(self) -> Refusal:
        """The command's refusal: the board answers with this failure's status."""
        return Refusal(RefusalKind(self.code.name), self.reason, self.message)


def _failed(service: str, error: grpc.aio.AioRpcError) -> ChanceFailed:
    code = error.code()
    if code in RETRYABLE:
        return ChanceFailed(
            grpc.StatusCode.UNAVAILABLE,
            f"{service} is unavailable ({code.name}); retry with the same command id",
            "CHANCE_UNAVAILABLE",
        )
    if code == grpc.StatusCode.FAILED_PRECONDITION:  # e.g. the seed is revealed already
        return ChanceFailed(code, f"{service} refused: {error.details()}", "CHANCE_REFUSED")
    # The board asked something malformed: a bug on our side, not the client's.
    return ChanceFailed(
        grpc.StatusCode.INTERNAL,
        f"{service} failed ({code.name}): {error.details()}",
        "CHANCE_FAILED",
    )


async def _call(service: str, call: Awaitable[T]) -> T:
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        raise _failed(service, error) from error


async def _nothing() -> dice_pb2.CommitReply:
    """The commitment of a service the game does not use: none."""
    return dice_pb2.CommitReply()


async def _reveal(
    service: str, call: Awaitable[dice_pb2.RevealReply], known: frozenset[str] | None
) -> None:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        if known is None and error.code() == grpc.StatusCode.NOT_FOUND:
            return  # no seed committed there for this match: nothing to reveal
        raise _failed(service, error) from error


class RemoteChance:
    def __init__(self, dice: dice_pb2_grpc.DiceStub, decks: decks_pb2_grpc.DecksStub) -> None:
        self.dice = dice
        self.decks = decks
        #: match → the services holding outcomes of its current command not appended yet
        #: (the board holds the match's lock from the first chance node to ``settle``)
        self._unsealed: dict[str, set[str]] = {}
        #: match → the services it committed seeds with, until they are revealed
        self._committed: dict[str, frozenset[str]] = {}

    async def commit(
        self, match_id: str, correlation_id: str, services: frozenset[str] = BOTH
    ) -> tuple[str, str]:
        """Commit the match's seeds with ``services`` (the game's chance services): its
        dice and decks commitments, "" for a service it does not use."""
        # Two services, two streams, no order between them: asked together, a match's set-up
        # (and its last command, for the reveals) waits for the slower one only.
        request = dice_pb2.CommitRequest(
            match_id=match_id, correlation_id=correlation_id, defer_append=True
        )
        used = BOTH & services
        self._unsealed.setdefault(match_id, set()).update(used)
        self._committed[match_id] = used
        dice, decks = await asyncio.gather(
            _call("dice", self.dice.Commit(request, timeout=CALL_TIMEOUT_S))
            if "dice" in used
            else _nothing(),
            _call("decks", self.decks.Commit(request, timeout=CALL_TIMEOUT_S))
            if "decks" in used
            else _nothing(),
        )
        return dice.commitment, decks.commitment

    async def settle(self, match_id: str, cause: str) -> None:
        """Make the outcomes given out for the match's command durable (the command
        handler calls it before it appends the command): a failure is the command's
        refusal, and nothing is appended."""
        unsealed = self._unsealed.pop(match_id, None)
        if not unsealed:
            return
        request = dice_pb2.SealRequest(match_id=match_id, correlation_id=cause)
        calls = []
        if "dice" in unsealed:
            calls.append(_call("dice", self.dice.Seal(request, timeout=CALL_TIMEOUT_S)))
        if "decks" in unsealed:
            calls.append(_call("decks", self.decks.Seal(request, timeout=CALL_TIMEOUT_S)))
        try:
            await asyncio.gather(*calls)
        except ChanceFailed as failed:
            raise failed.refusal() from failed

    def forget(self, match_id: str) -> None:
        """A match whose creation failed after ``commit``, or one that left the board's
        memory while idle (``recall`` when it is read back): keep nothing of it."""
        self._committed.pop(match_id, None)

    def recall(self, match_id: str, dice_commitment: str, decks_commitment: str) -> None:
        """An unfinished match read back from the log: the services it committed seeds
        with are those that gave it a commitment (so its reveal asks only them)."""
        used = {"dice"} if dice_commitment else set()
        if decks_commitment:
            used.add("decks")
        self._committed[match_id] = frozenset(used)

    async def reveal(self, match_id: str, correlation_id: str) -> None:
        """Reveal the match's committed seeds. The services it committed with are known
        from ``commit``, except after a restart: then both are asked, and one that has no
        commitment for the match (NOT_FOUND) has nothing to reveal."""
        request = dice_pb2.RevealRequest(match_id=match_id, correlation_id=correlation_id)
        known = self._committed.get(match_id)
        calls = []
        if known is None or "dice" in known:
            calls.append(_reveal("dice", self.dice.Reveal(request, timeout=CALL_TIMEOUT_S), known))
        if known is None or "decks" in known:
            calls.append(
                _reveal("decks", self.decks.Reveal(request, timeout=CALL_TIMEOUT_S), known)
            )
        await asyncio.gather(*calls)
        self._committed.pop(match_id, None)

    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        """The command handler's ChanceResolver: a failed call is the command's refusal."""
        try:
            return await self._resolve(match_id, request, request_id, cause)
        except ChanceFailed as failed:
            raise failed.refusal() from failed

    async def _resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, correlation_id: str
    ) -> ChanceOutcome:
        match request:
            case RollDice(count=count, sides=sides, purpose=purpose):
                self._unsealed.setdefault(match_id, set()).add("dice")
                roll = self.dice.Roll(
                    dice_pb2.RollRequest(
                        match_id=match_id,
                        count=count,
                        sides=sides,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                        defer_append=True,
                    ),
                    timeout=CALL_TIMEOUT_S,
                )
                rolled = await _call("dice", roll)
                return DiceRolled(tuple(rolled.values))
            case ShuffleDeck(deck=deck, cards=cards, purpose=purpose):
                self._unsealed.setdefault(match_id, set()).add("decks")
                shuffle = self.decks.Shuffle(
                    decks_pb2.ShuffleRequest(
                        match_id=match_id,
                        deck=deck,
                        cards=cards,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                        defer_append=True,
                    ),
                    timeout=CALL_TIMEOUT_S,
                )
                shuffled = await _call("decks", shuffle)
                return DeckShuffled(deck, shuffled.size)
            case DrawCards(deck=deck, count=count, purpose=purpose):
                self._unsealed.setdefault(match_id, set()).add("decks")
                draw = self.decks.Draw(
                    decks_pb2.DrawRequest(
                        match_id=match_id,
                        deck=deck,
                        count=count,
                        purpose=purpose,
                        request_id=request_id,
                        correlation_id=correlation_id,
                        defer_append=True,
                    ),
                    timeout=CALL_TIMEOUT_S,
                )
                drawn = await _call("decks", draw)
                return CardsDrawn(deck, tuple(drawn.cards))
        raise TypeError(f"unknown chance request {request!r}")
