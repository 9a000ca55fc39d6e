"""The whole suite: one ephemeral stack, several runs of every benchmark, then the report.

Each run measures its floors first, then the figures, so floors and figures share the
machine's conditions of that moment; runs are repeated to show the noise.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import uuid
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from aiokafka.admin import AIOKafkaAdminClient
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from services.cli.stack import ORDER, Stack
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import BENCH, bench_space
from services.common.topics import views_topic

from .boardgameio import (
    PeerLoad,
    PeerUnavailable,
    install,
    installed_version,
    measure_peer,
    peer_figures,
)
from .bots import LoadResult, finish_one_match, run_load
from .engine import EngineRun, engine_figures, measure_engines
from .floors import FloorRun, FloorSizes, measure_floors
from .human.capacity import CapacityRun
from .human.figures import capacity_figures, capacity_markdown
from .human.options import CapacityPlan
from .human.run import (
    CAPACITY_ENV,
    CAPACITY_ENV_NOTE,
    peer_capacity,
    raise_file_limit,
    tabletop_capacity,
)
from .latency import floor_latency_figures, latency_figures, unary_figures
from .machine import machine_info
from .procstat import kafka_pid
from .profiling import record, summarise
from .replay import (
    RebuildRun,
    ReplayRun,
    measure_rebuild,
    replay_figures,
    replay_matches,
)
from .report import load_summary, write_all
from .stats import Figure, median
from .targets import apply_targets
from .throughput import cpu_figures, floor_rate_figures, throughput_figures

#: the repository's cache folder (.gitignored): the peer is installed into its peer/ folder
PEER_CACHE = Path(__file__).resolve().parents[2] / ".cache"

console = Console(stderr=True)

#: bots stop mid-match when a level ends; the gateway counts such a match in play until it
#: has had no view for this long (TABLETOP_GATEWAY_MATCH_IDLE_S, 600 s by default), and the
#: next level starts once they have left, so it is not refused for the last one's matches
BENCH_MATCH_IDLE_S = 5.0
#: the level of the one window with SubmitAction calls instead of PlayMatch streams
UNARY_LEVEL = 20
#: what the diagnostic windows of the first run are, as the progress bar says it
WINDOW_KINDS = {"tapped": "views tapped", "unary": "SubmitAction calls"}


@dataclass(frozen=True)
class Sizes:
    floors: FloorSizes
    levels: tuple[int, ...]
    warmup_s: float
    duration_s: float
    rpc_timeout_s: float
    replay_matches: int
    rebuild_every_run: bool
    engine_seconds: float
    engine_fold_batches: int
    #: run the peer (boardgame.io) beside Tabletop in every run
    peer: bool

    @classmethod
    def quick(cls, levels: tuple[int, ...]) -> Sizes:
        return cls(
            floors=FloorSizes(40, 0.6, levels, 50_000, 3, warmup=0.2),
            levels=levels,
            # a bot's first view waits for the projector, seconds on a busy machine
            warmup_s=1.5,
            duration_s=2.0,
            rpc_timeout_s=5.0,
            replay_matches=2,
            rebuild_every_run=False,
            engine_seconds=0.4,
            engine_fold_batches=3,
            peer=False,
        )

    @classmethod
    def full(cls, levels: tuple[int, ...]) -> Sizes:
        return cls(
            floors=FloorSizes(500, 3.0, levels, 200_000, 5),
            levels=levels,
            warmup_s=2.0,
            duration_s=10.0,
            rpc_timeout_s=15.0,
            replay_matches=8,
            rebuild_every_run=True,
            engine_seconds=3.0,
            engine_fold_batches=10,
            peer=True,
        )


@dataclass
class Results:
    floors: list[FloorRun]
    loads: dict[int, list[LoadResult]]
    replays: list[ReplayRun]
    rebuilds: list[RebuildRun]
    engines: list[EngineRun]
    #: per level, the diagnostic windows run with a tap on the views topic (first run only)
    tapped: dict[int, list[LoadResult]] = field(default_factory=dict)
    #: windows whose bots use SubmitAction calls beside WatchMatch (first run, one level)
    unary: dict[int, list[LoadResult]] = field(default_factory=dict)
    peer: list[list[PeerLoad]] = field(default_factory=list)
    #: the installed peer project, or why the peer does not run
    peer_project: Path | None = None
    peer_skipped: str = ""


# -- housekeeping ---------------------------------------------------------------------------
async def delete_topics(kafka: KafkaAccess, prefix: str) -> None:
    """Remove this run's own topics (every name starts with its unique prefix)."""
    admin = AIOKafkaAdminClient(**kafka.client_options())
    await admin.start()
    try:
        ours = [t for t in await admin.list_topics() if t.startswith(prefix)]
        if ours:
            await admin.delete_topics(ours)
    finally:
        await admin.close()


def log_findings(run_dir: Path, limit: int = 3) -> list[str]:
    """The most frequent exception lines in the services' logs, for the notes."""
    found: list[str] = []
    pattern = re.compile(r"^(\w+(?:\.\w+)*(?:Error|Exception)\b.*)$")
    for log in sorted(run_dir.glob("*.log")):
        counts: Counter[str] = Counter()
        with contextlib.suppress(OSError):
            for line in log.read_text(errors="replace").splitlines():
                hit = pattern.match(line.strip())
                if hit:
                    counts[hit.group(1)[:160]] += 1
        for message, count in counts.most_common(limit):
            found.append(f"{log.stem} log: {count}x `{message}`")
    return found


class ExperimentStack(Stack):
    """The ephemeral stack with its services run by ``patched_serve`` (see there)."""

    experiment: str = ""
    #: run every service with tracemalloc, snapshots into this folder (human/traced_serve.py)
    traced: Path | None = None

    def start(self, service: str) -> None:
        if self.traced is not None and self.pid(service) is None:
            self._start_module(
                service, ["-m", "tests.bench.human.traced_serve", service, str(self.traced)]
            )
            return
        if not self.experiment or self.pid(service) is not None:
            super().start(service)
            return
        command = ["-m", "tests.bench.patched_serve", service, self.experiment]
        if service == "projector" and self.experiment == "plain-projector":
            command = ["-m", "tests.bench.plain_projector"]
        self._start_module(service, command)

    def _start_module(self, service: str, command: list[str]) -> None:
        self.run_dir.mkdir(parents=True, exist_ok=True)
        log = (self.run_dir / f"{service}.log").open("ab")
        process = subprocess.Popen(
            [sys.executable, *command],
            env=self.env(service),
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        log.close()
        self._pidfile(service).write_text(str(process.pid))


def stop_all(stack: Stack, grace_s: float = 5.0) -> None:
    """Stop every service of the benchmark's own stack at once (SIGTERM, then SIGKILL after
    ``grace_s``): nothing outlives the run, and teardown takes seconds, not a minute."""
    with ThreadPoolExecutor(max_workers=len(ORDER)) as pool:
        list(pool.map(lambda service: stack.stop(service, timeout=grace_s), ORDER))


@contextlib.contextmanager
def ephemeral_stack(
    prefix: str,
    run_dir: Path,
    experiment: str = "",
    extra_env: dict[str, str] | None = None,
    traced: Path | None = None,
) -> Iterator[Stack]:
    base = Stack.ephemeral(run_dir, prefix)
    stack = ExperimentStack(
        base.run_dir,
        base.kafka,
        base.topic_prefix,
        base.partitions,
        base.ports,
        # Load from one address: quotas out of the way (they are per client, not a budget).
        extra_env={
            "TABLETOP_QUOTA_CREATE_PER_S": "100000",
            "TABLETOP_QUOTA_CREATE_BURST": "100000",
            "TABLETOP_QUOTA_ACTIONS_PER_S": "1000000",
            "TABLETOP_QUOTA_ACTIONS_BURST": "1000000",
            # every bot a player of its own, all signing up from one address
            "TABLETOP_QUOTA_SIGNUP_PER_S": "100000",
            "TABLETOP_QUOTA_SIGNUP_BURST": "100000",
            # a bot whose match timed out leaves it unfinished: no bound on how many
            "TABLETOP_GATEWAY_MAX_OPEN_MATCHES_PER_PLAYER": "0",
            # and the bounds on streams per address and per connection (thousands of
            # watchers, many to a connection)
            "TABLETOP_GATEWAY_MAX_STREAMS_PER_ADDRESS": "0",
            "TABLETOP_GATEWAY_MAX_STREAMS_PER_CONNECTION": "0",
            "TABLETOP_GATEWAY_MATCH_IDLE_S": str(BENCH_MATCH_IDLE_S),
            # The closed loop's bots act the instant they are acknowledged: with 100
            # matches asking, 32 in play served more than all 100 at once (NEXT.md), the
            # bound these levels were always measured with (the capacity steps turn it off)
            "TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY": "32",
            **(extra_env or {}),
        },
    )
    stack.experiment = experiment
    stack.traced = traced
    try:
        stack.up()
        yield stack
    finally:
        stop_all(stack)
        # The projector (Faust) keeps its data folder in the working directory.
        shutil.rmtree(Path(f"{prefix}tabletop-projector-data"), ignore_errors=True)
        with contextlib.suppress(Exception):
            asyncio.run(delete_topics(stack.kafka, prefix))
        with contextlib.suppress(Exception):
            stack.revoke()


# -- the runs --------------------------------------------------------------------------------
async def one_run(
    run: int,
    stack: Stack,
    sizes: Sizes,
    game: str,
    results: Results,
    progress: Progress,
    task: Any,
    log_dir: Path,
) -> None:
    pids: dict[str, int | None] = {name: stack.pid(name) for name in ORDER}
    pids["kafka"] = kafka_pid()
    metrics = {name: stack.metrics_addr(name) for name in ORDER if name != "projector"}

    def step(what: str) -> None:
        progress.update(task, description=f"run {run + 1}: {what}")

    step("floors")
    results.floors.append(
        await measure_floors(
            stack.kafka_as(BENCH), f"{bench_space(stack.topic_prefix)}r{run}.", sizes.floors
        )
    )
    progress.advance(task)
    finished: list[str] = []
    # The measured windows run without the views-topic tap: it is a consumer of every view
    # and cost the stack ~10% of its throughput at 20 matches (and the bench client a third
    # more CPU), so where action → view waits is measured in windows of its own, once.
    # The bots play on PlayMatch streams; once, the same load with SubmitAction calls beside
    # WatchMatch (what the browser and plain scripts use), for comparison.
    windows = [(level, "") for level in sizes.levels]
    if run == 0:
        windows += [(level, "tapped") for level in sizes.levels]
        windows += [(level, "unary") for level in sizes.levels if level == UNARY_LEVEL]
    for i, (level, kind) in enumerate(windows):
        tapped = kind == "tapped"
        matches = f"{level} concurrent match{'es' if level > 1 else ''}"
        step(f"{matches} ({WINDOW_KINDS[kind]}, diagnostic)" if kind else matches)
        if i:
            await asyncio.sleep(BENCH_MATCH_IDLE_S + 1)  # the last level's matches leave play
        load = await run_load(
            stack.addr("gateway"),
            game,
            level,
            sizes.duration_s,
            sizes.warmup_s,
            seed=run,
            rpc_limit_s=sizes.rpc_timeout_s,
            pids=pids,
            metrics=metrics,
            views=(stack.kafka_as(BENCH), views_topic(stack.topic_prefix)) if tapped else None,
            transport="unary" if kind == "unary" else "play",
        )
        windows_of = {"": results.loads, "tapped": results.tapped, "unary": results.unary}
        windows_of[kind].setdefault(level, []).append(load)
        finished += load.finished_ids
        if not kind:
            progress.advance(task)
    if results.peer_project is not None:
        step("boardgame.io (peer)")
        try:
            results.peer.append(
                await measure_peer(
                    results.peer_project,
                    sizes.levels,
                    sizes.warmup_s,
                    sizes.duration_s,
                    sizes.rpc_timeout_s,
                )
            )
        except (PeerUnavailable, TimeoutError, OSError) as error:
            results.peer_skipped = f"run {run + 1}: {error}"
    progress.advance(task)
    step("ReplayMatch")
    if not finished:  # a short run on a busy machine
        finished = await finish_one_match(stack.addr("gateway"), game, seed=run)
    results.replays.append(
        await replay_matches(
            stack.addr("gateway"), finished[: sizes.replay_matches], "", stack.pid("gateway")
        )
    )
    progress.advance(task)
    if sizes.rebuild_every_run or run == 0:
        step("projector rebuild")
        results.rebuilds.append(await measure_rebuild(stack, log_dir))
    progress.advance(task)
    step("engines")
    results.engines += await asyncio.to_thread(
        measure_engines, sizes.engine_seconds, run, sizes.engine_fold_batches
    )
    progress.advance(task)


async def profile_run(
    stack: Stack, sizes: Sizes, game: str, level: int, out_dir: Path
) -> dict[str, str]:
    """One extra load run at ``level`` with py-spy on board, gateway and projector."""
    services = ("board", "gateway", "projector", "decks", "dice")
    pids = {name: pid for name in services if (pid := stack.pid(name)) is not None}
    load = asyncio.create_task(
        run_load(
            stack.addr("gateway"),
            game,
            level,
            sizes.duration_s,
            sizes.warmup_s,
            seed=99,
            rpc_limit_s=sizes.rpc_timeout_s,
        )
    )
    await asyncio.sleep(sizes.warmup_s)
    files = await record(pids, sizes.duration_s, out_dir)
    result = await load
    summaries = {name: summarise(path) for name, path in files.items()}
    header = (
        f"{level} concurrent matches, {result.actions} acknowledged actions in "
        f"{result.end - result.start:.0f} s, errors {dict(result.errors)}\n\n"
    )
    summary = out_dir / "summary.txt"
    await asyncio.to_thread(summary.write_text, header + "\n".join(summaries.values()))
    return summaries


def collect(results: Results) -> list[Figure]:
    noop = median([s for run in results.floors for s in run.noop_fold_rate])
    version = installed_version(results.peer_project) if results.peer_project else ""
    figures = [
        *latency_figures(results.loads, results.floors, results.tapped),
        *unary_figures(results.unary, results.floors),
        *throughput_figures(results.loads, results.floors),
        *cpu_figures(results.loads),
        *peer_figures([load for run in results.peer for load in run], version),
        *replay_figures(results.replays, results.rebuilds),
        *engine_figures(results.engines, noop),
        *floor_latency_figures(results.floors),
        *floor_rate_figures(results.floors),
    ]
    apply_targets(figures)
    return figures


def setup_peer(results: Results, wanted: bool) -> None:
    """Install the peer (npm ci into .cache/peer) or note why it does not run."""
    if not wanted:
        results.peer_skipped = "skipped (--quick runs without it; --peer runs it)"
        return
    try:
        results.peer_project = install(PEER_CACHE)
    except (PeerUnavailable, OSError, subprocess.SubprocessError) as error:
        results.peer_skipped = str(error)


def peer_problems(results: Results) -> list[str]:
    problems = []
    for level in sorted({load.concurrency for run in results.peer for load in run}):
        errors: Counter[str] = Counter()
        for run in results.peer:
            for load in run:
                if load.concurrency == level:
                    errors.update(load.errors)
        if errors:
            problems.append(
                f"boardgame.io at {level} matches: failed calls "
                f"{', '.join(f'{k} {v}' for k, v in errors.most_common())}."
            )
    return problems


def problems_of(results: Results, run_dir: Path) -> list[str]:
    problems = []
    for level, loads in sorted(results.loads.items()):
        errors: Counter[str] = Counter()
        for load in loads:
            errors.update(load.errors)
        if errors:
            total = sum(errors.values())
            acked = sum(load.actions for load in loads)
            problems.append(
                f"{level} concurrent match{'es' if level > 1 else ''}: {total} failed calls "
                f"({', '.join(f'{k} {v}' for k, v in errors.most_common())}) next to {acked} "
                "acknowledged actions."
            )
    for engine in results.engines:
        if engine.error:
            problems.append(f"engine {engine.game}: {engine.error.strip().splitlines()[-1]}")
    for message in sorted({e.envelope_error for e in results.engines if e.envelope_error}):
        problems.append(f"envelope fold skipped: {message}")
    for rebuild in results.rebuilds:
        if rebuild.error:
            problems.append(f"projector rebuild: {rebuild.error}")
    if not results.rebuilds or not any(r.projector_events_per_s for r in results.rebuilds):
        problems.append("projector rebuild: no figure (the fresh projector never folded).")
    problems += peer_problems(results)
    problems += log_findings(run_dir)
    return problems


def run_suite(
    out_dir: Path,
    runs: int,
    quick: bool,
    game: str,
    levels: tuple[int, ...],
    experiment: str = "",
    profile_dir: Path | None = None,
    profile_level: int = 20,
    peer: bool | None = None,
    capacity: CapacityPlan | None = None,
) -> tuple[Path, Path]:
    sizes = Sizes.quick(levels) if quick else Sizes.full(levels)
    if peer is not None:
        sizes = replace(sizes, peer=peer)
    machine = machine_info()
    token = uuid.uuid4().hex[:8]
    prefix = f"bench{token}."
    run_dir = Path(tempfile.gettempdir()) / f"tabletop-bench-{token}"
    results = Results([], {}, [], [], [])
    if sizes.peer:
        console.print("installing the peer (boardgame.io) into .cache/peer")
    setup_peer(results, sizes.peer or (capacity is not None and capacity.peer))
    steps_per_run = 5 + len(levels)
    with (
        Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.completed}/{task.total}"),
            TimeElapsedColumn(),
            console=console,
        ) as progress,
    ):
        task = progress.add_task("starting an ephemeral stack", total=runs * steps_per_run)
        with ephemeral_stack(prefix, run_dir, experiment) as stack:
            for run in range(runs):
                asyncio.run(one_run(run, stack, sizes, game, results, progress, task, run_dir))
            if profile_dir is not None:
                progress.update(task, description=f"profiling at {profile_level} matches")
                asyncio.run(profile_run(stack, sizes, game, profile_level, profile_dir))
            progress.update(task, description="stopping the stack")
        capacity_runs: list[CapacityRun] = []
        if capacity is not None:
            capacity_runs = run_capacity(capacity, results.peer_project, progress, token, run_dir)
    figures = collect(results) + capacity_figures(capacity_runs)
    loads = [
        load_summary(level, run, load)
        for level, level_loads in sorted(results.loads.items())
        for run, load in enumerate(level_loads)
    ]
    config = {
        "runs": runs,
        "quick": quick,
        "game": game,
        "levels": list(levels),
        "sizes": asdict(sizes),
        "topic_prefix": prefix,
        "logs": str(run_dir),
        "experiment": experiment,
        "peer_skipped": results.peer_skipped,
        "capacity_env_note": CAPACITY_ENV_NOTE,
    }
    peer_loads = [load.summary(run) for run, loads_ in enumerate(results.peer) for load in loads_]
    problems = problems_of(results, run_dir) + [
        f"capacity, {r.system}: {r.error}" for r in capacity_runs if r.error
    ]
    paths = write_all(
        out_dir,
        machine,
        config,
        figures,
        loads,
        problems,
        peer_loads,
        capacity=[r.to_json() for r in capacity_runs],
        extra_sections=capacity_markdown(capacity_runs, config),
    )
    console.print(f"wrote {paths[0]} and {paths[1]}; service logs in {run_dir}")
    return paths


def run_capacity(
    plan: CapacityPlan,
    peer_project: Path | None,
    progress: Progress,
    token: str,
    run_dir: Path,
) -> list[CapacityRun]:
    """The capacity steps against a fresh stack of their own, then against the peer."""
    task = progress.add_task("capacity at human pace", total=None)

    def say(what: str) -> None:
        progress.update(task, description=f"capacity: {what}")

    raise_file_limit()
    runs = []
    say("starting a stack")
    with ephemeral_stack(
        f"bench{token}c.", run_dir / "capacity", extra_env=CAPACITY_ENV, traced=plan.traced
    ) as stack:
        runs.append(
            asyncio.run(tabletop_capacity(stack, plan.shape, plan.sizes, say, traced=plan.traced))
        )
        say("stopping the stack")
    if plan.peer and peer_project is not None:
        runs.append(
            asyncio.run(
                peer_capacity(
                    peer_project, plan.shape, plan.sizes, lambda what: say(f"boardgame.io: {what}")
                )
            )
        )
    progress.update(task, description="capacity: done")
    return runs


def run_capacity_only(out_dir: Path, plan: CapacityPlan) -> Path:
    """Only the capacity steps: the report's section on the console and everything in
    ``capacity-results.json``; BENCHMARKS.md is left alone."""
    results = Results([], {}, [], [], [])
    if plan.peer:
        setup_peer(results, True)
    token = uuid.uuid4().hex[:8]
    run_dir = Path(tempfile.gettempdir()) / f"tabletop-bench-{token}"
    with Progress(
        TextColumn("{task.description}"), TimeElapsedColumn(), console=console
    ) as progress:
        runs = run_capacity(plan, results.peer_project, progress, token, run_dir)
    config = {"capacity_env_note": CAPACITY_ENV_NOTE, "peer_skipped": results.peer_skipped}
    print("\n".join(capacity_markdown(runs, config)))  # Markdown: not wrapped by rich
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "capacity-results.json"
    path.write_text(
        json.dumps(
            {
                "machine": machine_info(),
                "config": config,
                "figures": [f.to_json() for f in capacity_figures(runs)],
                "capacity": [r.to_json() for r in runs],
            },
            indent=2,
        )
        + "\n"
    )
    console.print(f"wrote {path}; service logs in {run_dir}")
    return path


def run_peer_only(out_dir: Path, quick: bool, levels: tuple[int, ...], runs: int) -> Path:
    """Only the peer (no Tabletop stack): its figures on the console and in
    ``peer-results.json``; BENCHMARKS.md is left alone."""
    sizes = Sizes.quick(levels) if quick else Sizes.full(levels)
    results = Results([], {}, [], [], [])
    setup_peer(results, True)
    if results.peer_project is None:
        raise SystemExit(f"the peer cannot run: {results.peer_skipped}")
    for _ in range(runs):
        results.peer.append(
            asyncio.run(
                measure_peer(
                    results.peer_project,
                    levels,
                    sizes.warmup_s,
                    sizes.duration_s,
                    sizes.rpc_timeout_s,
                )
            )
        )
    figures = peer_figures(
        [load for run in results.peer for load in run], installed_version(results.peer_project)
    )
    for found in figures:
        console.print(f"{found.key:32} {found.median:10.2f} p99 {found.p99:10.2f} {found.unit}")
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / "peer-results.json"
    path.write_text(
        json.dumps(
            {
                "machine": machine_info(),
                "figures": [f.to_json() for f in figures],
                "peer_loads": [
                    load.summary(run) for run, loads in enumerate(results.peer) for load in loads
                ],
                "problems": peer_problems(results),
            },
            indent=2,
        )
        + "\n"
    )
    return path
