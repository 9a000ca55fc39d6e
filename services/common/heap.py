"""The garbage collector of a long-running service: what startup built is frozen, young
collections are rarer, what survives a full collection is frozen too, and every pause is
measured.

A service starts by importing the games (engines, content packs, compiled codecs and
protobuf readers) and restoring its state: 50,000-120,000 objects that live as long as the
process. CPython's full collection walks every one of them, and under load it ran once or
twice every 20 s: measured at 20 concurrent matches, pauses of 49 ms in the board, 60 ms in
the gateway and 177 ms in the projector, each stalling every command or view in flight (a
p99 latency is made of such pauses). ``gc.freeze()`` once startup is done moves them to a
generation no collection visits: the board's longest pause fell to 4.3 ms.

Young collections ran 17 times a second in the board (0.3 ms each) at CPython's threshold
of 700 allocations: a command's garbage is freed by reference counting, the cyclic
collector only finds cycles, which are rare here, so it runs after 10,000 (measured over
20 s at 20 matches: 4 young collections instead of 340).

What a service holds for its matches and streams after startup (states, views, open calls)
grows with the matches in play, and a full collection walked it all again each time the
heap had grown by a quarter: a gateway holding 1,500 human-paced matches (636,000 objects)
paused 725 ms in one. So what survives a middle or full collection is frozen as well
(``Settling``): no later collection walks it, and every pause is bounded by what the young
generations hold. Objects frozen still die by reference counting; only a cycle among them
that becomes garbage is not found, until the process's resident memory has doubled since
the last collection of everything: then they are unfrozen and the next full collection
walks the whole heap (``generation="all"``) and frees such cycles. What this holds back is
bounded by the memory the process held, and that long collection comes each time the
memory doubles rather than each time the heap grows by a quarter. (The resident size, one
read of /proc, is the measure: counting the frozen objects walks them all, 38 ms at 1.2
million.)

Young collections come on a clock too (``collect_young_forever``: one whenever 50 ms passed
without any). CPython 3.11
starts one when allocations net of deallocations pass the threshold, and a service that
replaces each match's state at every action frees about as many old objects as it makes new
ones: the young generation grew to 140,000 objects in the gateway between two collections,
and one took 95 ms of CPU. On a clock, a young collection walks what 50 ms left alive; the
middle and full ones follow when their counts come due, as CPython's own would.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable, Iterator
from typing import Any

from prometheus_client.core import (
    REGISTRY,
    CounterMetricFamily,
    HistogramMetricFamily,
)
from prometheus_client.registry import Collector

#: allocations net of deallocations between two young collections (CPython's default: 700)
YOUNG_THRESHOLD = 10_000
#: resident memory grown this many times since the last collection of everything makes
#: the next full collection walk everything
ALL_AFTER_GROWTH = 2.0
#: what survives a collection of this generation or an older one is frozen (1: an object
#: that outlived two young collections, ~200,000 allocations, is long-lived)
FREEZE_FROM_GENERATION = 1

_PAGE = os.sysconf("SC_PAGE_SIZE")


def resident_bytes() -> int:
    """This process's resident memory (0 where /proc is not there)."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        return 0


#: how often a service collects its young generation itself
YOUNG_EVERY_S = 0.05


def due_generation() -> int:
    """The oldest generation whose count of younger collections has come due (CPython's
    own rule, but for the quarter-of-the-heap condition on full ones: with the survivors
    frozen, a full collection walks only what came since), else 0."""
    counts, thresholds = gc.get_count(), gc.get_threshold()
    for generation in (2, 1):
        if counts[generation] >= thresholds[generation]:
            return generation
    return 0


async def collect_young_forever(every_s: float = YOUNG_EVERY_S) -> None:
    """A young collection (and the older ones when due) whenever ``every_s`` passed without
    any, so that none has more than that long's survivors to walk (module docstring).
    Under a heavy load CPython's own come sooner and this adds none. Runs until cancelled."""
    seen = -1
    while True:
        await asyncio.sleep(every_s)
        collections = _collections()
        if collections == seen:
            gc.collect(due_generation())
            collections = _collections()
        seen = collections


def _collections() -> int:
    return sum(generation["collections"] for generation in gc.get_stats())


#: pause buckets (seconds): young collections take ~0.1-1 ms, full ones up to seconds
PAUSE_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
GENERATIONS = ("0", "1", "2", "all")


class Settling(Collector):
    """``gc.callbacks`` entry: freezes the survivors of each middle and full collection,
    makes a collection of everything once resident memory has doubled, and counts
    every collection's pause and what it freed by generation (``tabletop_gc_pause_seconds``,
    ``tabletop_gc_collected_objects_total``).

    The pauses are plain counters, read at scrape time: a metric's own lock taken inside a
    collection could be the one the collecting thread already holds."""

    def __init__(
        self,
        all_after_growth: float = ALL_AFTER_GROWTH,
        freeze_from: int = FREEZE_FROM_GENERATION,
        resident: Callable[[], int] = resident_bytes,
    ) -> None:
        self._resident = resident
        self._growth = all_after_growth
        self._freeze_from = freeze_from
        self._started = 0.0
        #: the next full collection walks the frozen generation too (it was unfrozen)
        self._everything = False
        #: resident bytes after the last collection of everything (or startup's freeze)
        self._resident_after_all = resident()
        self._buckets = {g: [0] * (len(PAUSE_BUCKETS) + 1) for g in GENERATIONS}
        self._sums = dict.fromkeys(GENERATIONS, 0.0)
        self._collected = dict.fromkeys(GENERATIONS, 0)

    def __call__(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        generation = info["generation"]
        everything = generation == 2 and self._everything
        if everything:
            self._everything = False
            gc.freeze()  # the whole heap's survivors: the next growth is measured from them
            self._resident_after_all = self._resident()
        elif generation >= self._freeze_from and not self._everything:
            # The generations collected are empty: their survivors went older. freeze()
            # also zeroes every generation's count, so no plain full collection comes due
            # after it (nothing would be left for one to walk): full collections happen
            # only after an unfreeze, as collections of everything.
            gc.freeze()
            if self._resident() > self._growth * self._resident_after_all > 0:
                gc.unfreeze()  # the next full collection walks everything
                self._everything = True
        label = "all" if everything else str(generation)
        self._count(label, time.perf_counter() - self._started)
        self._collected[label] += info["collected"]

    def _count(self, label: str, seconds: float) -> None:
        buckets = self._buckets[label]
        for i, bound in enumerate(PAUSE_BUCKETS):
            if seconds <= bound:
                buckets[i] += 1
                break
        else:
            buckets[-1] += 1
        self._sums[label] += seconds

    def collect(self) -> Iterator[HistogramMetricFamily | CounterMetricFamily]:
        family = HistogramMetricFamily(
            "tabletop_gc_pause_seconds",
            "Pauses of the cyclic garbage collector, by generation collected "
            '("all": a full collection that walked the frozen objects too).',
            labels=["generation"],
        )
        for label in GENERATIONS:
            counts = self._buckets[label]
            cumulative, running = [], 0
            for bound, count in zip((*PAUSE_BUCKETS, float("inf")), counts, strict=True):
                running += count
                cumulative.append((_bound(bound), running))
            family.add_metric([label], cumulative, self._sums[label])
        yield family
        collected = CounterMetricFamily(
            "tabletop_gc_collected_objects",
            "Objects the cyclic garbage collector freed, by generation collected.",
            labels=["generation"],
        )
        for label in GENERATIONS:
            collected.add_metric([label], self._collected[label])
        yield collected


def _bound(value: float) -> str:
    return "+Inf" if value == float("inf") else repr(value)


_settling: Settling | None = None


def settle_after_startup() -> Settling:
    """Call once the service is ready to serve: collect what startup left over, freeze the
    rest out of every later collection, make young collections rarer, and from now on
    freeze what survives each full collection (``Settling``). Idempotent."""
    global _settling
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    if _settling is None:
        _settling = Settling()
        gc.callbacks.append(_settling)
        REGISTRY.register(_settling)
    return _settling
