"""The capacity run: an idle step, then a ramp of matches played at human pace.

The same steps drive Tabletop (the Go generator through the gateway) and boardgame.io
(``tests/bench/peer/human.js`` over socket.io): both answer the same commands (see
``generator.py``), and each process's CPU (``procstat``) and resident memory are read
around every window.

1. **Warm-up:** one match of each game played for a few seconds (imports, caches, first
   compilations are not counted as a match's cost), then nobody acts.
2. **Baseline:** those matches held open, nobody acting: the stack's own idle CPU and
   memory.
3. **Idle step:** ``idle_matches`` matches created and seated, every stream open, nobody
   acting: memory per match (resident bytes after − baseline, per process) and CPU per
   second of an idle match.
4. **Watch streams:** extra spectator streams opened in batches, first many to one
   connection, then one connection each; resident bytes per stream from each batch, then
   again after all of them closed (is the memory given back?).
5. **Ramp:** seats act (think time, then a random legal action); for each step the
   matches in play are raised to M, settle, and a window of ``hold_s`` is measured. A step
   passes when the acting seat's action → view p99 is under the bound, nothing was refused
   and nothing failed; the ramp stops at the first step that does not pass.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from ..procstat import KAFKA_PIDFILE, rss_snapshot, snapshot, usage
from ..servermetrics import gc_buckets, gc_pauses_between
from ..stats import percentile
from .traced_serve import compare as compare_snapshots
from .traced_serve import request as request_snapshot

#: an action's view must reach its player within this, at the 99th percentile
VIEW_P99_BOUND_MS = 150.0
GENERATOR = "load generator"
#: the watch-stream batches: many streams to one connection, and a connection each
SHARED = "one connection"
OWN = "a connection each"
#: the window fields that are samples: kept whole in memory, summarised in the JSON
SAMPLES = ("ack_ms", "view_ms", "others_ms", "setup_ms", "legal_ms")


class Driver(Protocol):
    """What drives the people of the matches (the Go generator, or the peer's node client)."""

    @property
    def pid(self) -> int | None: ...

    async def matches(self, count: int, wait_s: float) -> dict[str, Any]: ...

    async def acting(self, on: bool) -> None: ...

    async def watchers(self, count: int, per_conn: int = 1) -> dict[str, Any]: ...

    async def mark(self) -> None: ...

    async def collect(self) -> dict[str, Any]: ...

    async def status(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class CapacitySizes:
    #: matches in play at each step of the ramp
    steps: tuple[int, ...]
    hold_s: float
    #: after matches are added: their first think times run before the window opens
    settle_s: float
    #: matches of the idle step (0: no idle step)
    idle_matches: int
    #: the baseline's and the idle step's CPU windows
    idle_s: float
    #: spectator streams per batch of the watch-stream measurement (0: none)
    watch_batch: int
    warm_s: float
    #: how long setting up a step's new matches may take before the step fails
    setup_wait_s: float = 600.0
    #: keep ramping after a step that did not pass
    past_failure: bool = False


@dataclass
class Window:
    """One measured window: the people's samples, each process's CPU and memory."""

    kind: str  # "baseline" | "idle" | "load"
    matches: int
    window_s: float
    cpu_s: dict[str, float]
    #: resident bytes per process at the window's start and end
    rss_start: dict[str, int]
    rss_end: dict[str, int]
    #: the driver's window (samples and counters) and its status at the start
    load: dict[str, Any]
    status: dict[str, Any]
    #: how setting up the step's new matches went (the driver's answer)
    setup: dict[str, Any] = field(default_factory=dict)
    #: bytes of this run's Kafka log segments at the window's start and end (Tabletop only)
    kafka_bytes_start: int | None = None
    kafka_bytes_end: int | None = None
    #: each service's garbage collections in the window (``servermetrics.gc_pauses_between``)
    gc_pauses: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def streams(self) -> int:
        return int(self.status.get("streams", 0))

    def refusals(self) -> int:
        return sum(int(v) for v in self.load.get("refusals", {}).values())

    def errors(self) -> int:
        failed = sum(int(v) for v in self.load.get("errors", {}).values())
        not_set_up = max(0, self.matches - int(self.setup.get("ready", self.matches)))
        return failed + not_set_up

    def view_p99(self) -> float:
        return percentile(self.load.get("view_ms", []), 99)

    def passed(self) -> bool:
        views = self.load.get("view_ms", [])
        return (
            bool(views)
            and self.view_p99() < VIEW_P99_BOUND_MS
            and self.refusals() == 0
            and self.errors() == 0
        )

    def actions_per_s(self) -> float:
        return int(self.load.get("actions", 0)) / self.window_s if self.window_s else 0.0


@dataclass
class WatchBatch:
    """Extra spectator streams opened (or all of them closed) with nobody acting."""

    label: str
    streams: int  # opened (negative: closed)
    connections: int
    rss_before: dict[str, int]
    rss_after: dict[str, int]
    answer: dict[str, Any]


@dataclass
class CapacityRun:
    system: str
    shape: dict[str, Any]
    sizes: dict[str, Any]
    baseline: Window | None = None
    idle: Window | None = None
    watch: list[WatchBatch] = field(default_factory=list)
    steps: list[Window] = field(default_factory=list)
    error: str = ""
    #: with tracemalloc (``--capacity-tracemalloc``): per service, the lines whose memory
    #: grew most from the baseline to the idle step
    tracemalloc: dict[str, list[str]] = field(default_factory=dict)

    def capacity(self) -> tuple[int, bool]:
        """The largest M that passed before the first step that did not, and whether a
        step did not pass (False: the ramp never found the limit; M is a lower bound)."""
        best = 0
        for step in self.steps:
            if not step.passed():
                return best, True
            best = step.matches
        return best, False

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        capacity, bounded = self.capacity()
        data["capacity"] = {"matches": capacity, "limit_found": bounded}
        for step, saved in zip(self.steps, data["steps"], strict=True):
            saved["passed"] = step.passed()
        for saved in [data["baseline"], data["idle"], *data["steps"]]:
            if saved is not None:
                load = saved["load"]
                for name in SAMPLES:
                    load[name] = summary(load.get(name, []))
        return data


def summary(samples: Sequence[float]) -> dict[str, float | int | None]:
    """What the JSON keeps of a window's samples (a full ramp has hundreds of thousands)."""
    if not samples:
        return {"count": 0}
    return {
        "count": len(samples),
        "p50": percentile(samples, 50),
        "p90": percentile(samples, 90),
        "p99": percentile(samples, 99),
        "max": max(samples),
    }


def kafka_log_dir(pidfile: Path = KAFKA_PIDFILE) -> Path | None:
    """The local broker's log.dirs (deploy/kafka writes server.properties beside its pid)."""
    with contextlib.suppress(OSError):
        for line in (pidfile.parent / "server.properties").read_text().splitlines():
            if line.startswith("log.dirs="):
                return Path(line.split("=", 1)[1].strip())
    return None


def kafka_log_bytes(prefix: str, log_dir: Path | None) -> int | None:
    """Bytes of the log segments of every partition of the topics named ``prefix``…"""
    if log_dir is None or not prefix:
        return None
    total = 0
    for partition in log_dir.glob(f"{prefix}*"):
        for segment in partition.glob("*.log"):
            with contextlib.suppress(OSError):
                total += segment.stat().st_size
    return total


class Capacity:
    """Runs the steps against one system; ``pids`` are its server processes."""

    def __init__(
        self,
        driver: Driver,
        pids: Mapping[str, int | None],
        sizes: CapacitySizes,
        progress: Callable[[str], None] = lambda _: None,
        topic_prefix: str = "",
        traced: Path | None = None,
        traced_names: Collection[str] = (),
        metrics: Mapping[str, str] | None = None,
    ) -> None:
        self.driver = driver
        #: each service's metrics address, for its garbage-collection pauses
        self.metrics = dict(metrics or {})
        #: the services run by traced_serve write their tracemalloc snapshots here
        self.traced = traced
        self.traced_pids = {
            n: p for n, p in pids.items() if p is not None and n in traced_names and traced
        }
        self.watched = {**pids, GENERATOR: driver.pid}
        self.sizes = sizes
        self.progress = progress
        self.prefix = topic_prefix
        self.log_dir = kafka_log_dir() if topic_prefix else None

    async def window(
        self, kind: str, matches: int, seconds: float, setup: dict[str, Any]
    ) -> Window:
        status = await self.driver.status()
        kafka_start = kafka_log_bytes(self.prefix, self.log_dir)
        rss_start = rss_snapshot(self.watched)
        gc_before = {n: gc_buckets(a) for n, a in self.metrics.items()}
        before = snapshot(self.watched)
        await self.driver.mark()
        await asyncio.sleep(seconds)
        load = await self.driver.collect()
        after = snapshot(self.watched)
        gc_after = {n: gc_buckets(a) for n, a in self.metrics.items()}
        return Window(
            kind=kind,
            matches=matches,
            window_s=float(load.get("window_s", seconds)),
            cpu_s=usage(before, after),
            rss_start=rss_start,
            rss_end=rss_snapshot(self.watched),
            load=load,
            status=status,
            setup=setup,
            kafka_bytes_start=kafka_start,
            kafka_bytes_end=kafka_log_bytes(self.prefix, self.log_dir),
            gc_pauses={n: gc_pauses_between(gc_before[n], gc_after[n]) for n in gc_after},
        )

    async def run(self, run: CapacityRun, warm_matches: int) -> CapacityRun:
        sizes, driver = self.sizes, self.driver
        self.progress("warming up")
        await driver.matches(warm_matches, sizes.setup_wait_s)
        await driver.acting(True)
        await asyncio.sleep(sizes.warm_s)
        await driver.acting(False)
        await asyncio.sleep(sizes.settle_s)
        self.progress(f"baseline: {warm_matches} matches, nobody acting")
        run.baseline = await self.window("baseline", warm_matches, sizes.idle_s, {})
        await self.snapshot(1)
        if sizes.idle_matches > warm_matches:
            self.progress(f"idle: {sizes.idle_matches} matches, nobody acting")
            setup = await driver.matches(sizes.idle_matches, sizes.setup_wait_s)
            await asyncio.sleep(sizes.settle_s)
            run.idle = await self.window("idle", sizes.idle_matches, sizes.idle_s, setup)
            if await self.snapshot(2):
                run.tracemalloc = await asyncio.to_thread(
                    self.compare, sizes.idle_matches - warm_matches
                )
            if sizes.watch_batch:
                await self.watch_streams(run)
        await driver.acting(True)
        for matches in sizes.steps:
            self.progress(f"{matches} matches at human pace")
            setup = await driver.matches(matches, sizes.setup_wait_s)
            await asyncio.sleep(sizes.settle_s)
            step = await self.window("load", matches, sizes.hold_s, setup)
            run.steps.append(step)
            if not step.passed() and not sizes.past_failure:
                break
        await driver.acting(False)
        return run

    async def snapshot(self, number: int, limit_s: float = 180.0) -> bool:
        """Every traced service writes tracemalloc snapshot ``number`` (False: untraced)."""
        if self.traced is None or not self.traced_pids:
            return False
        self.progress("tracemalloc snapshots")
        written = [request_snapshot(self.traced, name, number) for name in self.traced_pids]
        for _ in range(int(limit_s)):  # the files come from other processes: polled
            if all(path.exists() for path in written):
                break
            await asyncio.sleep(1.0)
        return True

    def compare(self, matches: int) -> dict[str, list[str]]:
        assert self.traced is not None
        found = {}
        for name in self.traced_pids:
            before = self.traced / f"{name}-1.tracemalloc"
            after = self.traced / f"{name}-2.tracemalloc"
            if before.exists() and after.exists():
                found[name] = compare_snapshots(before, after, matches)
        return found

    async def watch_streams(self, run: CapacityRun) -> None:
        batch = self.sizes.watch_batch
        for label, per_conn in ((SHARED, batch), (OWN, 1)):
            self.progress(f"{batch} watch streams, {label}")
            before = rss_snapshot(self.watched)
            answer = await self.driver.watchers(batch, per_conn)
            await asyncio.sleep(2.0)
            run.watch.append(
                WatchBatch(
                    label,
                    int(answer.get("open", 0)),
                    int(answer.get("connections", 0)),
                    before,
                    rss_snapshot(self.watched),
                    answer,
                )
            )
        before = rss_snapshot(self.watched)
        answer = await self.driver.watchers(0)
        await asyncio.sleep(self.sizes.settle_s)
        opened = sum(b.streams for b in run.watch)
        run.watch.append(
            WatchBatch("all closed", -opened, 0, before, rss_snapshot(self.watched), answer)
        )


def per_match_slopes(steps: Sequence[Window]) -> dict[str, float]:
    """Resident bytes per match in play, per process: the least-squares slope of each
    step's resident memory at its end over its matches (two steps at least)."""
    points = [(s.matches, s.rss_end) for s in steps if s.kind == "load"]
    if len({m for m, _ in points}) < 2:
        return {}
    slopes = {}
    for name in set.intersection(*(set(rss) for _, rss in points)):
        xs = [float(m) for m, _ in points]
        ys = [float(rss[name]) for _, rss in points]
        mean_x, mean_y = sum(xs) / len(xs), sum(ys) / len(ys)
        spread = sum((x - mean_x) ** 2 for x in xs)
        slopes[name] = (
            sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True)) / spread
        )
    return slopes
