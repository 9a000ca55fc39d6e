"""The dice service's knowledge of one match, folded from its own events."""

from __future__ import annotations

from dataclasses import dataclass, field

from tabletop.v1 import dice_pb2


@dataclass
class DiceMatch:
    """A match whose seed is not revealed yet (a revealed one keeps its commitment only)."""

    commitment: str = ""
    counter: int = 0
    #: request id → the reply first given, so a retried roll returns the same values
    rolls: dict[str, dice_pb2.RollReply] = field(default_factory=dict)


ALGORITHM = (
    "seed: 32 bytes, commitment sha256(seed); each 64-bit block is the first 8 bytes "
    "(big-endian) of HMAC-SHA256(seed, '<match_id>:<counter>'), counter += 1 per block; "
    "a die of n sides is 1 + x mod n for the first block x < 2^64 - 2^64 mod n"
)
