"""The board's in-memory matches, folded from board.events (the authority)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from services.adapters.folding import FoldedMatch
from services.common.envelope import is_a
from services.games.commands import Accepted
from tabletop.v1 import envelope_pb2, platform_events_pb2


@dataclass
class Match(FoldedMatch):
    """A match as the command handler keeps it (a ``MatchRecord``); envelopes are folded
    only when recovering from board.events."""

    #: client command id → the reply it got, so a retry appends nothing
    replies: dict[str, Accepted] = field(default_factory=dict)
    #: client command id → (player, action) of the commands accepted since the start
    commands: dict[str, tuple[str, Any]] = field(default_factory=dict)

    @classmethod
    def created(cls, envelope: envelope_pb2.EventEnvelope) -> Match:
        match = super().created(envelope)
        assert isinstance(match, Match)
        match._remember(envelope)
        return match

    def fold(self, envelope: envelope_pb2.EventEnvelope) -> bool:
        if not super().fold(envelope):
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
        self.replies[envelope.correlation_id] = Accepted(
            version=self.version,
            events_appended=(previous.events_appended if previous else 0) + 1,
            finished=self.finished,
        )


#: finished matches reloaded from the log that stay in memory (the most recently used)
RELOADED_KEPT = 64


class Matches:
    """The active matches this board shard owns, and a few finished ones reloaded from the
    log on demand (a finished match leaves memory: ``retire``)."""

    def __init__(self, kept: int = RELOADED_KEPT) -> None:
        self._matches: dict[str, Match] = {}
        self._reloaded: OrderedDict[str, Match] = OrderedDict()
        self._kept = kept

    def get(self, match_id: str) -> Match | None:
        match = self._matches.get(match_id)
        if match is None and match_id in self._reloaded:
            match = self._reloaded[match_id]
            self._reloaded.move_to_end(match_id)
        return match

    def __iter__(self) -> Any:
        """The active matches."""
        return iter(self._matches.values())

    def add(self, match: Match) -> None:
        """A match the command handler created."""
        self._matches[match.match_id] = match

    def retire(self, match_id: str) -> None:
        """A finished match leaves memory (``reload`` brings it back from its events)."""
        self._matches.pop(match_id, None)

    def reload(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> Match:
        """Fold a finished match's events (read back from the log) and keep it a while."""
        match = Match.created(envelopes[0])
        for envelope in envelopes[1:]:
            match.fold(envelope)
        self._reloaded[match.match_id] = match
        while len(self._reloaded) > self._kept:
            self._reloaded.popitem(last=False)
        return match

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        """Recovery: fold an envelope read back from board.events."""
        if is_a(envelope, platform_events_pb2.MatchCreated):
            self.add(Match.created(envelope))
            return
        match = self._matches.get(envelope.match_id)
        if match is not None:
            match.fold(envelope)
