"""Which matches a service may let go of: those unused for a while, and the least recently
used past a bound on how many it holds. The service reloads one it let go of from its
log at the match's next request (dice, decks, scoring)."""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import time
from collections import OrderedDict
from collections.abc import Callable

from services.common.logging import get_logger

log = get_logger(__name__)

#: how often matches to let go of are looked for (at most; half the idle time when shorter)
EVICT_EVERY_S = 60.0
#: once this many matches were let go of, the freed heap goes back to the operating
#: system (glibc keeps it otherwise, and the resident size would not show what went)
TRIM_AFTER = 100


class Holding:
    """When each held match was last used, least recently first."""

    def __init__(
        self,
        idle_held_s: float = 0.0,
        matches_held: int = 0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``idle_held_s``: a match unused this long may go; ``matches_held``: past this
        many, the least recently used may go. 0 turns a limit off."""
        self.idle_held_s = idle_held_s
        self.matches_held = matches_held
        self._clock = clock
        self._used: OrderedDict[str, float] = OrderedDict()

    def __len__(self) -> int:
        return len(self._used)

    def use(self, match_id: str) -> None:
        self._used[match_id] = self._clock()
        self._used.move_to_end(match_id)

    def forget(self, match_id: str) -> None:
        self._used.pop(match_id, None)

    def to_evict(self) -> list[str]:
        """The matches past a limit, least recently used first (the caller skips one in
        use right now: it stays, and is looked at again next time)."""
        excess = len(self._used) - self.matches_held if self.matches_held else 0
        horizon = self._clock() - self.idle_held_s if self.idle_held_s else None
        found: list[str] = []
        for match_id, used in self._used.items():
            if len(found) >= excess and (horizon is None or used >= horizon):
                break
            found.append(match_id)
        return found

    @property
    def every_s(self) -> float:
        """How often to look (0: never, both limits off)."""
        if not self.idle_held_s and not self.matches_held:
            return 0.0
        return min(EVICT_EVERY_S, self.idle_held_s / 2) if self.idle_held_s else EVICT_EVERY_S


async def evict_forever(holding: Holding, evict: Callable[[], int]) -> None:
    """Calls ``evict`` every ``holding.every_s`` (never when both limits are off), and
    trims the heap once ``TRIM_AFTER`` matches went (a few ms, not on every pass)."""
    every, untrimmed = holding.every_s, 0
    while every:
        await asyncio.sleep(every)
        try:
            untrimmed += evict()
        except Exception:  # one failed pass must not end eviction for the process's life
            log.exception("evict_failed")
            continue
        if untrimmed >= TRIM_AFTER:
            untrimmed = 0
            with contextlib.suppress(OSError, AttributeError):
                ctypes.CDLL("libc.so.6").malloc_trim(0)
