"""Which replica of the bots service plays which match, and the ids of its commands.

Replicas split matches by a stable hash of the match id (replica ``index`` of ``count``, a
StatefulSet's ordinal), so each match has one player in the steady state. Should two ever
act for one seat (a rescale under way, an overlap of replica settings, a replica that was
thought dead), every bot command's id is derived from (match, seat, version): the board
keeps one command per id (a second with the same id appends nothing), and the expected
version refuses a decision taken on a state that is gone.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass


@dataclass(frozen=True)
class Replica:
    index: int = 0
    count: int = 1

    def __post_init__(self) -> None:
        if self.count < 1 or not 0 <= self.index < self.count:
            raise ValueError(f"replica {self.index} of {self.count} does not exist")

    def owns(self, match_id: str) -> bool:
        digest = hashlib.sha256(match_id.encode()).digest()
        return int.from_bytes(digest[:8], "big") % self.count == self.index


def command_id(match_id: str, seat: str, version: int) -> str:
    """The one id of a bot's action for ``seat`` at ``version`` (within the gateway's 64)."""
    digest = hashlib.sha256(f"{match_id}\0{seat}\0{version}".encode()).hexdigest()
    return f"bot-{digest[:40]}"


def decision_seed(match_id: str, seat: str, version: int) -> int:
    """The seed of a bot's decision: replicas that decide the same turn decide alike."""
    digest = hashlib.sha256(f"seed\0{match_id}\0{seat}\0{version}".encode()).digest()
    return int.from_bytes(digest[:4], "big")
