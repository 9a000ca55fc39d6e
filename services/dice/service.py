"""tabletop.v1.Dice: random outcomes from a committed seed, each recorded as an event."""

from __future__ import annotations

from collections.abc import AsyncIterator

import grpc
from google.protobuf import message

from services.common.call_streams import Handler, answer_calls
from services.common.drafts import Drafts
from services.common.envelope import Cause, is_a, unpack
from services.common.ledger import StreamWriter, append_or_abort
from services.common.snapshots import Snapshot, restore_revealed_seeds, revealed_seeds
from services.dice.state import ALGORITHM, DiceMatch
from services.games.randomness import DerivedRandom, commitment, match_seed
from tabletop.v1 import dice_pb2, dice_pb2_grpc, envelope_pb2, platform_events_pb2

#: a physical chance node (a drop of every small cube) draws 1 + 5 reals per cube
MAX_DICE = 1024
#: random reals come as dice of a million sides (a resolution of 1e-6)
MAX_SIDES = 1_000_000


class DiceService(dice_pb2_grpc.DiceServicer):
    def __init__(self, writer: StreamWriter, secret: bytes) -> None:
        self._writer = writer
        self._secret = secret
        #: matches whose seed is not revealed yet
        self._matches: dict[str, DiceMatch] = {}
        #: revealed (closed) match → its commitment, all a retried Commit or Reveal needs
        #: (a few dozen bytes each, for every match ever: no rolls, no object per match)
        self._revealed: dict[str, str] = {}
        #: while recovering: match → its rolls, folded only for the matches not revealed
        #: by the end of the log (a revealed match keeps no rolls)
        self._deferred: dict[str, list[envelope_pb2.EventEnvelope]] | None = None
        #: outcomes given out with defer_append, waiting for the match's Seal
        self._drafts: Drafts[DiceMatch] = Drafts(writer, "dice", _copy, _fold, self.apply)

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
        return match_seed(self._secret, f"dice:{match_id}")

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if self._deferred is not None and is_a(envelope, platform_events_pb2.DiceRolled):
            self._deferred.setdefault(envelope.match_id, []).append(envelope)
            return
        if is_a(envelope, platform_events_pb2.DiceSeedRevealed):
            # No roll follows a reveal (a command that rolled committed before its match
            # ended): only the commitment is kept.
            revealed = self._matches.pop(envelope.match_id, DiceMatch())
            self._revealed.setdefault(envelope.match_id, revealed.commitment)
            self._writer.close(envelope.match_id)
            if self._deferred is not None:
                self._deferred.pop(envelope.match_id, None)
            return
        _fold(self._matches.setdefault(envelope.match_id, DiceMatch()), envelope)

    def _current(self, match_id: str) -> DiceMatch | None:
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
        cause = Cause(causation_id=correlation_id, correlation_id=correlation_id, actor="dice")
        for envelope in await append_or_abort(self._writer, context, match_id, [payload], cause):
            self.apply(envelope)

    async def _check_owner(self, match_id: str, context: grpc.aio.ServicerContext) -> None:
        if not match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        if not self._writer.owns(match_id):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION, "this dice shard does not own the match"
            )

    async def Commit(
        self, request: dice_pb2.CommitRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.CommitReply:
        await self._check_owner(request.match_id, context)
        async with self._writer.lock(request.match_id):
            if request.match_id in self._revealed:
                return dice_pb2.CommitReply(commitment=self._revealed[request.match_id])
            match = self._current(request.match_id)
            if match is None or not match.commitment:
                payload = platform_events_pb2.DiceCommitted(
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

    async def Roll(
        self, request: dice_pb2.RollRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.RollReply:
        await self._check_owner(request.match_id, context)
        if not 1 <= request.count <= MAX_DICE or not 2 <= request.sides <= MAX_SIDES:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"roll 1–{MAX_DICE} dice of 2–{MAX_SIDES} sides, "
                f"not {request.count}d{request.sides}",
            )
        async with self._writer.lock(request.match_id):
            if request.match_id in self._revealed:
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "the match's dice seed is revealed: no more rolls",
                )
            match = self._current(request.match_id)
            if match is None or not match.commitment:
                await context.abort(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "no dice seed is committed for this match; call Commit first",
                )
                raise AssertionError  # abort raises; this line is for the type checker
            if request.request_id and request.request_id in match.rolls:
                return match.rolls[request.request_id]
            rng = DerivedRandom(self.seed(request.match_id), request.match_id, match.counter)
            values = rng.roll(request.count, request.sides)
            payload = platform_events_pb2.DiceRolled(
                count=request.count,
                sides=request.sides,
                values=values,
                purpose=request.purpose,
                counter_from=match.counter,
                counter_to=rng.counter,
                request_id=request.request_id,
            )
            await self._record(
                request.match_id, payload, request.correlation_id, request.defer_append, context
            )
            match = self._current(request.match_id)
            assert match is not None
            return match.rolls[request.request_id]

    async def Calls(
        self, calls: AsyncIterator[dice_pb2.DiceCall], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dice_pb2.DiceAnswer]:
        handlers: dict[str, tuple[str, Handler]] = {
            "commit": ("Commit", self.Commit),
            "roll": ("Roll", self.Roll),
            "seal": ("Seal", self.Seal),
            "reveal": ("Reveal", self.Reveal),
        }
        async for answer in answer_calls(
            calls, context, "tabletop.v1.Dice", handlers, dice_pb2.DiceAnswer, _refused
        ):
            yield answer

    async def Seal(
        self, request: dice_pb2.SealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.SealReply:
        await self._check_owner(request.match_id, context)
        async with self._writer.lock(request.match_id):
            await self._drafts.seal(request.match_id, context)
            return dice_pb2.SealReply(sequence=self._writer.version(request.match_id))

    async def Reveal(
        self, request: dice_pb2.RevealRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.RevealReply:
        await self._check_owner(request.match_id, context)
        async with self._writer.lock(request.match_id):
            seed = self.seed(request.match_id)
            if request.match_id not in self._revealed:
                await self._drafts.seal(request.match_id, context)  # outcomes, then the seed
                match = self._matches.get(request.match_id)
                if match is None or not match.commitment:
                    await context.abort(
                        grpc.StatusCode.NOT_FOUND, "no dice commitment for this match"
                    )
                payload = platform_events_pb2.DiceSeedRevealed(seed=seed.hex())
                await self._append(request.match_id, payload, request.correlation_id, context)
            return dice_pb2.RevealReply(
                seed=seed.hex(), commitment=self._revealed[request.match_id]
            )


def _fold(match: DiceMatch, envelope: envelope_pb2.EventEnvelope) -> None:
    """A commitment or a roll into a match's state (durable, or a draft's)."""
    if is_a(envelope, platform_events_pb2.DiceCommitted):
        committed = unpack(envelope, platform_events_pb2.DiceCommitted)
        assert isinstance(committed, platform_events_pb2.DiceCommitted)
        match.commitment = committed.commitment
    elif is_a(envelope, platform_events_pb2.DiceRolled):
        rolled = unpack(envelope, platform_events_pb2.DiceRolled)
        assert isinstance(rolled, platform_events_pb2.DiceRolled)
        match.counter = rolled.counter_to
        match.rolls[rolled.request_id] = dice_pb2.RollReply(
            values=rolled.values, sequence=envelope.sequence
        )


def _copy(match: DiceMatch | None) -> DiceMatch:
    if match is None:
        return DiceMatch()
    return DiceMatch(match.commitment, match.counter, dict(match.rolls))


def _refused(code: str, message: str) -> dice_pb2.CallRefused:
    return dice_pb2.CallRefused(code=code, message=message)
