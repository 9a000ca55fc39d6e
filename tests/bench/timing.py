"""Clocks, time windows and bounded concurrent loops shared by the benchmarks."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

now = time.perf_counter


def ms(seconds: float) -> float:
    return seconds * 1000.0


def window_rates(
    stamps: Sequence[float], start: float, end: float, window: float = 1.0
) -> list[float]:
    """Completions per second in each whole ``window`` between ``start`` and ``end``."""
    windows = int((end - start) // window)
    if windows <= 0:
        span = end - start
        return [len(stamps) / span] if span > 0 and stamps else []
    counts = [0] * windows
    for stamp in stamps:
        index = int((stamp - start) // window)
        if 0 <= index < windows:
            counts[index] += 1
    return [c / window for c in counts]


async def closed_loop(
    call: Callable[[], Awaitable[object]],
    concurrency: int,
    duration: float,
    warmup: float = 0.5,
    max_calls: int = 2_000_000,
) -> tuple[list[float], float, float]:
    """``concurrency`` workers calling ``call`` back to back for ``warmup + duration`` s.

    Returns the completion times inside the measured window and the window's bounds.
    """
    begin = now()
    start = begin + warmup
    end = start + duration
    stamps: list[float] = []
    budget = max_calls

    async def worker() -> None:
        nonlocal budget
        while budget > 0 and now() < end:
            budget -= 1
            await call()
            done = now()
            if start <= done < end:
                stamps.append(done)

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return stamps, start, end


async def timed_calls(
    call: Callable[[], Awaitable[object]], count: int, warmup: int = 20, max_seconds: float = 60.0
) -> list[float]:
    """Latencies (ms) of ``count`` sequential calls after ``warmup`` unmeasured ones."""
    deadline = now() + max_seconds
    for _ in range(warmup):
        await call()
    latencies: list[float] = []
    for _ in range(count):
        if now() > deadline:
            break
        began = now()
        await call()
        latencies.append(ms(now() - began))
    return latencies
