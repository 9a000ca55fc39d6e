"""Admission control: with more load than the stack can serve, refuse new commands early
(RESOURCE_EXHAUSTED with a retry-after) instead of queueing them until action → view takes
seconds. Two signals, each with its bound (0 turns it off):

- commands in flight at this gateway (forwarded to a board, not answered yet);
- the projector's lag as this gateway sees it: how long after the board acknowledged a
  version the view of that version arrived here, the median of the last ``window_s``.
  Past the bound no new match is admitted (fewer matches in play is what brings the lag
  down: action → view is matches in play / throughput); past ``ACTION_LAG_FACTOR`` times
  the bound, actions of matches in play are refused too. Refusing every action at the
  first bound made clients abandon their matches and start new ones, which cost more.

The lag is measured when views arrive, so a match whose views never come (its events
dead-lettered) cannot hold every other match's commands back; a projector that publishes
nothing at all shows in its own lag gauge and alerts, not here.
"""

from __future__ import annotations

import statistics
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

#: acknowledged versions remembered per match, and matches tracked at once (memory bounds)
MAX_PENDING_PER_MATCH = 16
MAX_TRACKED_MATCHES = 10_000
#: the retry-after given when the gateway has too many commands in flight
IN_FLIGHT_RETRY_MS = 50
#: actions of matches in play are refused once the lag passes this many times the bound
ACTION_LAG_FACTOR = 4
#: the median lag is worked out again at most this often
LAG_REFRESH_S = 0.05


@dataclass(frozen=True)
class Refusal:
    message: str
    retry_after_ms: int


class Admission:
    def __init__(
        self,
        max_in_flight: int,
        max_view_lag_ms: int,
        window_s: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_in_flight = max_in_flight
        self._max_lag_s = max_view_lag_ms / 1000
        self._window_s = window_s
        self._clock = clock
        self.in_flight = 0
        #: per match: (version, acknowledged at) not seen in a view yet, oldest first
        self._pending: dict[str, deque[tuple[int, float]]] = {}
        #: (measured at, lag) of recent view arrivals, oldest first
        self._samples: deque[tuple[float, float]] = deque()
        #: the last median worked out, and until when it stands
        self._lag = 0.0
        self._lag_until = float("-inf")

    # -- the signals ------------------------------------------------------------------------
    def acknowledged(self, match_id: str, version: int) -> None:
        """The board acknowledged ``version`` of the match: its view should follow."""
        if not self._max_lag_s:
            return
        pending = self._pending.get(match_id)
        if pending is None:
            if len(self._pending) >= MAX_TRACKED_MATCHES:
                return
            pending = self._pending[match_id] = deque(maxlen=MAX_PENDING_PER_MATCH)
        pending.append((version, self._clock()))

    def viewed(self, match_id: str, version: int) -> None:
        """A view of the match up to ``version`` arrived: sample how late it came."""
        pending = self._pending.get(match_id)
        if pending is None:
            return
        now = self._clock()
        oldest: float | None = None
        while pending and pending[0][0] <= version:
            _, acked_at = pending.popleft()
            oldest = acked_at if oldest is None else oldest
        if not pending:
            del self._pending[match_id]
        if oldest is not None:
            self._samples.append((now, now - oldest))

    def view_lag_s(self) -> float:
        """The median lag measured in the last ``window_s`` (0 when none); worked out at
        most every ``LAG_REFRESH_S`` (each command asks, and a median sorts the window)."""
        now = self._clock()
        if now < self._lag_until:
            return self._lag
        horizon = now - self._window_s
        while self._samples and self._samples[0][0] < horizon:
            self._samples.popleft()
        self._lag = statistics.median(lag for _, lag in self._samples) if self._samples else 0.0
        self._lag_until = now + LAG_REFRESH_S
        return self._lag

    # -- the decision ---------------------------------------------------------------------
    def refusal(self, new_match: bool) -> Refusal | None:
        """Why a command (one creating a match, or one of a match in play) must wait now,
        or None to admit it."""
        if self._max_in_flight and self.in_flight >= self._max_in_flight:
            return Refusal(
                f"the service is busy ({self.in_flight} commands in flight); retry shortly",
                IN_FLIGHT_RETRY_MS,
            )
        if self._max_lag_s:
            lag = self.view_lag_s()
            bound = self._max_lag_s * (1 if new_match else ACTION_LAG_FACTOR)
            if lag > bound:
                return Refusal(
                    f"views are {round(lag * 1000)} ms behind; retry shortly",
                    max(IN_FLIGHT_RETRY_MS, round((lag - bound) * 1000)),
                )
        return None
