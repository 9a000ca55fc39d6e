"""Summaries of timing samples and the figure record every benchmark produces."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

#: "lower" for latencies (ms), "higher" for rates (per second)
Better = Literal["lower", "higher"]


def percentile(samples: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100), linear interpolation; NaN for no samples."""
    if not samples:
        return math.nan
    ordered = sorted(samples)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def median(samples: Sequence[float]) -> float:
    return statistics.median(samples) if samples else math.nan


def tail(samples: Sequence[float], better: Better) -> float:
    """The p99 on the bad side: the 99th percentile of a latency, the 1st of a rate."""
    return percentile(samples, 99 if better == "lower" else 1)


@dataclass(frozen=True)
class Floor:
    """What the machine allows for the same work, measured in the same run."""

    value: float
    description: str


@dataclass(frozen=True)
class Target:
    """A goal from the issue; reported, never asserted."""

    value: float
    description: str


@dataclass
class Figure:
    key: str
    title: str
    unit: str
    better: Better
    median: float
    p99: float
    samples: int
    floor: Floor | None = None
    target: Target | None = None
    #: target applies to the median ("median") or the tail ("p99")
    target_on: Literal["median", "p99"] = "median"
    #: the median of each run separately: how much the runs disagree
    run_medians: list[float] = field(default_factory=list)
    note: str = ""

    @property
    def ratio(self) -> float | None:
        """How many times the floor's cost the figure is (1.0: as fast as the machine allows)."""
        if self.floor is None or not self.floor.value or not self.median:
            return None
        if self.better == "lower":
            return self.median / self.floor.value
        return self.floor.value / self.median

    @property
    def status(self) -> str:
        if self.target is None:
            return "—"
        value = self.median if self.target_on == "median" else self.p99
        if not math.isfinite(value):
            return "not met"
        ok = value <= self.target.value if self.better == "lower" else value >= self.target.value
        return "met" if ok else "not met"

    @property
    def spread(self) -> float | None:
        """(max - min) / median of the per-run medians: the run-to-run noise."""
        finite = [m for m in self.run_medians if math.isfinite(m)]
        if len(finite) < 2 or not self.median:
            return None
        return (max(finite) - min(finite)) / abs(self.median)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["ratio"] = self.ratio
        data["status"] = self.status
        data["spread"] = self.spread
        return data


def figure(
    key: str,
    title: str,
    unit: str,
    better: Better,
    runs: Sequence[Sequence[float]],
    **extra: Any,
) -> Figure:
    """A figure from the samples of several runs: pooled median and tail, per-run medians."""
    pooled = [s for run in runs for s in run]
    return Figure(
        key=key,
        title=title,
        unit=unit,
        better=better,
        median=median(pooled),
        p99=tail(pooled, better),
        samples=len(pooled),
        run_medians=[median(run) for run in runs if run],
        **extra,
    )
