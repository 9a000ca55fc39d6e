"""The board's in-memory matches, folded from board.events (the authority)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from services.adapters import folding
from services.common.envelope import is_a
from services.games.match import Accepted, Match
from tabletop.v1 import envelope_pb2, platform_events_pb2


def created(envelope: envelope_pb2.EventEnvelope) -> Match:
    """A match read back from its MatchCreated, its create remembered."""
    match = folding.created(envelope)
    _remember(match, envelope)
    return match


def fold(match: Match, envelope: envelope_pb2.EventEnvelope) -> bool:
    """Fold an envelope the board appended (or reads back) into its match, as every reader
    does, and remember the command it answered: a retry gets that answer again and
    appends nothing. False (and no change) for an envelope folded already."""
    if not folding.fold(match, envelope):
        return False
    _remember(match, envelope)
    return True


def _remember(match: Match, envelope: envelope_pb2.EventEnvelope) -> None:
    if not envelope.correlation_id:
        return
    previous = match.replies.get(envelope.correlation_id)
    match.replies[envelope.correlation_id] = Accepted(
        version=match.version,
        events_appended=(previous.events_appended if previous else 0) + 1,
        finished=match.finished,
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
        match = created(envelopes[0])
        for envelope in envelopes[1:]:
            fold(match, envelope)
        self._reloaded[match.match_id] = match
        while len(self._reloaded) > self._kept:
            self._reloaded.popitem(last=False)
        return match

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        """Recovery: fold an envelope read back from board.events."""
        if is_a(envelope, platform_events_pb2.MatchCreated):
            self.add(created(envelope))
            return
        match = self._matches.get(envelope.match_id)
        if match is not None:
            fold(match, envelope)
