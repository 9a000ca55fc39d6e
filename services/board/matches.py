"""The board's in-memory matches, folded from board.events (the authority)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.common.envelope import is_a
from services.common.folding import FoldedMatch
from tabletop.v1 import board_pb2, envelope_pb2, platform_events_pb2


@dataclass
class Match(FoldedMatch):
    #: client command id → the reply it got, so a retry appends nothing
    replies: dict[str, board_pb2.SubmitActionReply] = field(default_factory=dict)

    @classmethod
    def created(cls, envelope: envelope_pb2.EventEnvelope) -> Match:
        match = super().created(envelope)
        assert isinstance(match, Match)
        match._remember(envelope)
        return match

    def fold(self, envelope: envelope_pb2.EventEnvelope, decoded: Any = None) -> bool:
        if not super().fold(envelope, decoded):
            return False
        self._remember(envelope)
        return True

    def superseded(self, player: str, seat_token: str) -> bool:
        """True if ``seat_token`` (when given) is not the seat's newest token."""
        return bool(seat_token) and self.seat_tokens.get(player) != seat_token

    def _remember(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if not envelope.correlation_id:
            return
        previous = self.replies.get(envelope.correlation_id)
        self.replies[envelope.correlation_id] = board_pb2.SubmitActionReply(
            version=self.version,
            events_appended=(previous.events_appended if previous else 0) + 1,
            duplicate=True,
            finished=self.finished,
        )


class Matches:
    """Every match this board shard owns."""

    def __init__(self) -> None:
        self._matches: dict[str, Match] = {}

    def get(self, match_id: str) -> Match | None:
        return self._matches.get(match_id)

    def __iter__(self) -> Any:
        return iter(self._matches.values())

    def add(self, envelopes: list[envelope_pb2.EventEnvelope]) -> Match:
        """A new match from its first envelopes (MatchCreated first)."""
        match = Match.created(envelopes[0])
        for envelope in envelopes[1:]:
            match.fold(envelope)
        self._matches[match.match_id] = match
        return match

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        """Recovery: fold an envelope read back from board.events."""
        if is_a(envelope, platform_events_pb2.MatchCreated):
            self.add([envelope])
            return
        match = self._matches.get(envelope.match_id)
        if match is not None:
            match.fold(envelope)
