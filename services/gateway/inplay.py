"""The matches in play, bounded: past ``limit`` a new match is refused at the door
(RESOURCE_EXHAUSTED with a retry-after) rather than admitted to make every match's
action → view slower (with each player waiting for their view, that wait is matches in
play / throughput: only fewer matches in play shorten it).

Where the count lives: it is derived from the views topic that every gateway replica
already follows from its start (compacted: each match's newest view, with its status),
and, on the replica that carried a command, from the update the board acknowledged it
with (a match this replica's player just finished frees its place at once).
So a restarted gateway counts again what is in play, and every replica counts the same
matches: the bound is for the whole stack, not per replica, and needs no division by a
replica count that autoscaling changes. Matches this replica admitted whose first view
has not arrived yet count too (``pending``), so a burst of creates cannot slip past the
bound in the moment before their views come; another replica's such creates show once
projected (the overshoot is at most what the replicas admit within one projection delay).

A refused client is told to come back later the more clients are waiting: with W of them
and a place freeing every ``interval``, a retry-after of ``interval × W / RETRIES_PER_PLACE``
brings about RETRIES_PER_PLACE retries per freed place instead of W (every retry is a
refused call both sides pay for), while a freed place still waits only a fraction of
``interval`` for its next taker. The waiting clients are the refused creates not yet due
back (a retried create has the same match id, so a client counts once).

Only started matches count (every seat joined once): a match in its lobby holds no place,
so a flood of creates nobody joins cannot fill the bound (its board closes such a lobby
within minutes, services/board/lobby.py). A create still takes a place from its admission
until its first view says whether it started (a one-seat match taken with the create has).

A match leaves play when its view says it is finished, or when no view of it has
arrived for ``idle_s`` (abandoned, or frozen by a dead letter): nobody holds the door
shut forever. After a gateway restart every unfinished match counts from the moment its
view is read again, so an abandoned one holds its place for one more idle timeout.
"""

from __future__ import annotations

import random
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from services.common.metrics import GATEWAY_MATCHES_IN_PLAY, GATEWAY_MATCHES_REFUSED
from services.gateway.admission import Refusal
from services.gateway.viewstore import ViewStore
from tabletop.v1 import match_pb2

#: a match admitted here whose view never came (its creation failed after all) stops
#: counting after this long
PENDING_GRACE_S = 30.0
#: matches finishing within this window tell how soon a place frees
FINISH_WINDOW_S = 30.0
#: the retry-after of a refused create lies within these bounds
MIN_RETRY_MS = 500
MAX_RETRY_MS = 30_000
#: the retry-after when no match is known to be in play (places held by creates only)
UNKNOWN_RETRY_MS = 5_000
#: with many clients waiting, about this many retries are wanted per place that frees
RETRIES_PER_PLACE = 8
#: a retry-after is spread by ± this fraction, so clients refused together spread out
RETRY_JITTER = 0.25
#: a refused client counts as waiting until this many times its retry-after has passed
#: (plus a second): it may come back late, its own jitter on top
WAITING_FOR = 2.0
#: refused creates remembered at once (a memory bound)
MAX_WAITING = 10_000


class MatchesInPlay:
    def __init__(
        self,
        limit: int,
        idle_s: float,
        clock: Callable[[], float] = time.monotonic,
        rng: random.Random | None = None,
    ) -> None:
        self._limit = limit
        self._idle_s = idle_s
        self._clock = clock
        self._rng = rng or random.Random()
        #: refused creates expected back: until when they count as waiting, oldest first
        self._waiting: OrderedDict[str, float] = OrderedDict()
        #: unfinished matches by when their newest view arrived, oldest first
        self._active: OrderedDict[str, float] = OrderedDict()
        #: admitted here, no view yet: when admitted, oldest first
        self._pending: OrderedDict[str, float] = OrderedDict()
        #: when recent matches finished, oldest first
        self._finishes: deque[float] = deque()

    def follow(self, views: ViewStore) -> None:
        """Count from every view the gateway accepts."""

        def listener(match_id: str, version: int) -> None:
            update = views.latest(match_id)
            if update is None:
                return
            summary = update.summary
            self.viewed(
                match_id, summary.status == match_pb2.MATCH_STATUS_FINISHED, summary.started
            )

        views.listeners.append(listener)

    def viewed(self, match_id: str, finished: bool, started: bool = True) -> None:
        now = self._clock()
        self._pending.pop(match_id, None)
        if finished:
            if self._active.pop(match_id, None) is not None:
                self._finishes.append(now)
        elif not started:  # a lobby: no place held
            self._active.pop(match_id, None)
        else:
            self._active[match_id] = now
            self._active.move_to_end(match_id)
        # with no bound nothing calls count(): abandoned matches must leave here too
        _drop_older(self._active, now - self._idle_s)
        GATEWAY_MATCHES_IN_PLAY.set(len(self._active) + len(self._pending))

    def count(self) -> int:
        """Matches in play now (abandoned ones and stale reservations dropped)."""
        now = self._clock()
        _drop_older(self._active, now - self._idle_s)
        _drop_older(self._pending, now - PENDING_GRACE_S)
        count = len(self._active) + len(self._pending)
        GATEWAY_MATCHES_IN_PLAY.set(count)
        return count

    def reserve(self, match_id: str) -> Refusal | None:
        """Take a place for a new match, or say why not. A retried create of a match
        already counted takes no second place."""
        if not self._limit or match_id in self._active or match_id in self._pending:
            return None
        count = self.count()
        if count >= self._limit:
            GATEWAY_MATCHES_REFUSED.inc()
            others = self.waiting(besides=match_id)
            wait_ms = self.contended_retry_after_ms(others)
            self._waiting[match_id] = self._clock() + WAITING_FOR * wait_ms / 1000 + 1
            self._waiting.move_to_end(match_id)
            if len(self._waiting) > MAX_WAITING:
                self._waiting.popitem(last=False)
            waiting = f" and {others} other players are waiting" if others else ""
            return Refusal(
                f"the server is full: {count} matches are being played (at most "
                f"{self._limit}){waiting}; a place frees when one ends, try again in "
                f"about {max(1, round(wait_ms / 1000))} s",
                wait_ms,
            )
        self._waiting.pop(match_id, None)
        self._pending[match_id] = self._clock()
        return None

    def waiting(self, besides: str = "") -> int:
        """Clients refused lately and expected back (``besides`` not counted)."""
        _drop_expired(self._waiting, self._clock())
        return len(self._waiting) - (besides in self._waiting)

    def contended_retry_after_ms(self, others: int) -> int:
        """The retry-after for a client with ``others`` waiting too: the interval between
        freed places, stretched so that about ``RETRIES_PER_PLACE`` of the waiting come
        back per place, jittered, bounded."""
        stretch = max(1.0, (others + 1) / RETRIES_PER_PLACE)
        jitter = self._rng.uniform(1 - RETRY_JITTER, 1 + RETRY_JITTER)
        wait_ms = self.retry_after_ms() * stretch * jitter
        return int(min(MAX_RETRY_MS, max(MIN_RETRY_MS, wait_ms)))

    def release(self, match_id: str) -> None:
        """The reserved match was not created (refused or failed): free its place."""
        self._pending.pop(match_id, None)

    def retry_after_ms(self) -> int:
        """About when the next place frees: the mean interval between recent finishes, or
        if none finished lately, when the longest unplayed match will have been idle long
        enough to leave play (whichever is sooner)."""
        now = self._clock()
        horizon = now - FINISH_WINDOW_S
        while self._finishes and self._finishes[0] < horizon:
            self._finishes.popleft()
        _drop_older(self._active, now - self._idle_s)
        idles_ms = (
            (next(iter(self._active.values())) + self._idle_s - now) * 1000
            if self._active
            else None
        )
        if self._finishes:
            interval_ms = FINISH_WINDOW_S * 1000 / len(self._finishes)
            wait_ms = interval_ms if idles_ms is None else min(interval_ms, idles_ms)
        else:
            wait_ms = UNKNOWN_RETRY_MS if idles_ms is None else idles_ms
        return int(min(MAX_RETRY_MS, max(MIN_RETRY_MS, wait_ms)))


def _drop_older(entries: OrderedDict[str, float], horizon: float) -> None:
    while entries:
        match_id, stamp = next(iter(entries.items()))
        if stamp >= horizon:
            return
        del entries[match_id]


def _drop_expired(entries: OrderedDict[str, float], now: float) -> None:
    """Entries hold when they expire, in about that order (the oldest are dropped first)."""
    while entries:
        match_id, until = next(iter(entries.items()))
        if until >= now:
            return
        del entries[match_id]
