"""The board's in-memory matches, folded from board.events (the authority)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from services.adapters import folding
from services.common.envelope import is_a
from services.common.holding import Holding
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
    log on demand (a finished match leaves memory: ``retire``). An active match unused for
    ``holding.idle_held_s`` can leave memory too (``idle``, ``evict``): ``reload`` brings
    it back."""

    def __init__(self, holding: Holding | None = None, kept: int = RELOADED_KEPT) -> None:
        self._matches: dict[str, Match] = {}
        self._reloaded: OrderedDict[str, Match] = OrderedDict()
        self._kept = kept
        #: when each active match was last asked for or folded into (0: never idle)
        self.holding = holding if holding is not None else Holding()

    def get(self, match_id: str) -> Match | None:
        match = self._matches.get(match_id)
        if match is not None:
            self.holding.use(match_id)
        elif match_id in self._reloaded:
            match = self._reloaded[match_id]
            self._reloaded.move_to_end(match_id)
        return match

    def __iter__(self) -> Any:
        """The active matches."""
        return iter(self._matches.values())

    def add(self, match: Match) -> None:
        """A match the command handler created."""
        self._matches[match.match_id] = match
        self.holding.use(match.match_id)

    def retire(self, match_id: str) -> None:
        """A finished match leaves memory (``reload`` brings it back from its events)."""
        self._matches.pop(match_id, None)
        self.holding.forget(match_id)

    def idle(self) -> list[str]:
        """Started, unfinished matches unused for the holding's idle time, least recently
        used first (a lobby stays: its closing time is kept by looking at it)."""
        found = []
        for match_id in self.holding.to_evict():
            match = self._matches[match_id]
            if match.started and not match.finished:
                found.append(match_id)
        return found

    def evict(self, match_id: str) -> None:
        """An active match leaves memory; its events stay in the log (``reload``)."""
        self.retire(match_id)

    def reload(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> Match:
        """Fold a match's events (read back from the log): a finished one is kept a
        while, an unfinished one is active again. A match held already at that version or
        later stays (a read that began before a command's append ended after it)."""
        match = created(envelopes[0])
        for envelope in envelopes[1:]:
            fold(match, envelope)
        if not match.finished:
            held = self._matches.get(match.match_id)
            if held is not None and held.version >= match.version:
                return held
            self.add(match)
            return match
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
