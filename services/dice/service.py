"""tabletop.v1.Dice: random outcomes from a committed seed, each recorded as an event."""

from __future__ import annotations

import grpc

from services.common.commit_reveal import CommitRevealService, SeededMatch
from services.common.envelope import unpack
from tabletop.v1 import dice_pb2, dice_pb2_grpc, envelope_pb2, platform_events_pb2

#: a physical chance node (a drop of every small cube) draws 1 + 5 reals per cube
MAX_DICE = 1024
#: random reals come as dice of a million sides (a resolution of 1e-6)
MAX_SIDES = 1_000_000

ALGORITHM = (
    "seed: 32 bytes, commitment sha256(seed); each 64-bit block is the first 8 bytes "
    "(big-endian) of HMAC-SHA256(seed, '<match_id>:<counter>'), counter += 1 per block; "
    "a die of n sides is 1 + x mod n for the first block x < 2^64 - 2^64 mod n"
)


class DiceService(CommitRevealService[SeededMatch], dice_pb2_grpc.DiceServicer):
    stream = "dice"
    algorithm = ALGORITHM
    committed = platform_events_pb2.DiceCommitted
    revealed = platform_events_pb2.DiceSeedRevealed
    outcomes = (platform_events_pb2.DiceRolled,)

    def new_match(self) -> SeededMatch:
        return SeededMatch()

    def fold_outcome(self, match: SeededMatch, envelope: envelope_pb2.EventEnvelope) -> None:
        rolled = unpack(envelope, platform_events_pb2.DiceRolled)
        assert isinstance(rolled, platform_events_pb2.DiceRolled)
        match.counter = rolled.counter_to
        match.replies[rolled.request_id] = dice_pb2.RollReply(
            values=rolled.values, sequence=envelope.sequence
        )

    async def Roll(
        self, request: dice_pb2.RollRequest, context: grpc.aio.ServicerContext
    ) -> dice_pb2.RollReply:
        await self.owned(request.match_id, context)
        if not 1 <= request.count <= MAX_DICE or not 2 <= request.sides <= MAX_SIDES:
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"roll 1–{MAX_DICE} dice of 2–{MAX_SIDES} sides, "
                f"not {request.count}d{request.sides}",
            )
        async with self._writer.lock(request.match_id):
            match = await self.open_match(request.match_id, context)
            first = self.first_reply(match, request, dice_pb2.RollReply)
            if first is not None:
                return first
            rng = self.rng(request.match_id, match)
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
            return await self.recorded(request, payload, dice_pb2.RollReply, context)
