"""Replay and rebuild.

- **ReplayMatch through the gateway**: a finished match streamed step by step (the board
  events folded afresh, a view per step), one step a message (ReplayMatch) and many
  (ReplayMatchBatches, default bounds), alternately first. Floor: the same fold, views and
  step bytes in-process (``services.gateway.replay``, as the gateway draws them), over the
  same envelopes (fetched with ExportMatch), so the ratio is what reading the events from
  the board and gRPC streaming add. The gateway's CPU per step of each RPC (from /proc, in
  10 ms ticks, summed over the matches) is in the figures' notes.
- **Projector rebuild**: a second, unchanged projector with a fresh app id (new consumer
  group, empty tables) folds every event of the four streams from offset 0 and publishes
  views as it goes. Figure: its folding rate, events per second from the last reading of
  its Prometheus counter before the first fold (read every 20 ms once it is ready) to the
  end of its last batch (its ``tabletop_projector_last_fold_timestamp_seconds``), plus its
  time to be ready (Faust's start and rebalance, not in the rate). Floor: the same
  events read with ``services.common.eventlog.read_stream`` and folded in-process
  (``folding.fold`` for board events, seed reveals for the others) without Faust, tables,
  changelogs or publishing.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc
from prometheus_client.parser import text_string_to_metric_families

from services.adapters import folding
from services.cli.stack import Stack, free_port
from services.common.envelope import is_a
from services.common.eventlog import read_stream
from services.common.topics import STREAMS, event_topic
from services.games.match import Match
from services.gateway.replay import DEFAULT_BATCH_BYTES, DEFAULT_BATCH_STEPS, step_batches
from tabletop.v1 import envelope_pb2, gateway_pb2, gateway_pb2_grpc, platform_events_pb2

from .floors import stop_process
from .procstat import process_cpu
from .stats import Figure, Floor, figure, median
from .timing import ms, now

REPLAY_TIMEOUT_S = 60.0
REBUILD_TIMEOUT_S = 180.0


@dataclass
class ReplayRun:
    #: per match: events per second through ReplayMatch, and the whole replay in ms
    gateway_rates: list[float] = field(default_factory=list)
    gateway_ms: list[float] = field(default_factory=list)
    #: the same through ReplayMatchBatches
    batched_rates: list[float] = field(default_factory=list)
    batched_ms: list[float] = field(default_factory=list)
    #: the gateway's CPU seconds and the steps sent, per RPC (when its pid is known)
    gateway_cpu_s: dict[str, float] = field(default_factory=dict)
    gateway_cpu_steps: dict[str, int] = field(default_factory=dict)
    #: per match: the same fold + views in-process
    inprocess_rates: list[float] = field(default_factory=list)
    inprocess_ms: list[float] = field(default_factory=list)
    steps: list[int] = field(default_factory=list)


@dataclass
class RebuildRun:
    events: int = 0
    #: per-second fold rates of the fresh projector between its first and last fold
    projector_rates: list[float] = field(default_factory=list)
    projector_events_per_s: float = 0.0
    projector_ready_s: float = 0.0
    projector_done: bool = False
    #: read_stream + fold in-process
    floor_events_per_s: float = 0.0
    floor_read_only_per_s: float = 0.0
    #: CPU seconds the fresh projector used while folding, per event folded (ms)
    projector_cpu_ms_per_event: float = 0.0
    #: its CPU use while folding, in cores (1.0: one core busy all the time)
    projector_cores: float = 0.0
    error: str = ""


# -- replay -------------------------------------------------------------------------------
def fold_with_views(board: Sequence[envelope_pb2.EventEnvelope], viewer: str) -> int:
    """What ReplayMatchBatches computes per step, in-process (``services.gateway.replay``,
    default bounds): fold, the viewer's view, the step's bytes in its batch; and what gRPC
    then does with a batch (``SerializeToString``). The steps drawn."""
    for batch in step_batches(board, viewer, True, DEFAULT_BATCH_STEPS, DEFAULT_BATCH_BYTES):
        gateway_pb2.ReplayStepBatch.SerializeToString(batch)
    return len(board)


async def _replay(stub: gateway_pb2_grpc.GatewayStub, rpc: str, match_id: str, viewer: str) -> int:
    """Steps received through ``rpc`` ("ReplayMatch" or "ReplayMatchBatches")."""
    steps = 0
    if rpc == "ReplayMatch":
        request = gateway_pb2.ReplayMatchRequest(match_id=match_id, viewer=viewer)
        async for _ in stub.ReplayMatch(request, timeout=REPLAY_TIMEOUT_S):
            steps += 1
    else:
        batches = gateway_pb2.ReplayMatchBatchesRequest(match_id=match_id, viewer=viewer)
        async for batch in stub.ReplayMatchBatches(batches, timeout=REPLAY_TIMEOUT_S):
            steps += len(batch.steps)
    return steps


async def replay_matches(
    gateway: str, match_ids: Sequence[str], viewer: str, gateway_pid: int | None = None
) -> ReplayRun:
    run = ReplayRun()
    async with grpc.aio.insecure_channel(gateway) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        for index, match_id in enumerate(match_ids):
            rpcs = ["ReplayMatch", "ReplayMatchBatches"]
            if index % 2:
                rpcs.reverse()
            for rpc in rpcs:
                cpu = process_cpu(gateway_pid) if gateway_pid is not None else None
                began = now()
                steps = await _replay(stub, rpc, match_id, viewer)
                elapsed = now() - began
                cpu_after = process_cpu(gateway_pid) if gateway_pid is not None else None
                if steps == 0 or elapsed <= 0:
                    continue
                if cpu is not None and cpu_after is not None:
                    run.gateway_cpu_s[rpc] = run.gateway_cpu_s.get(rpc, 0.0) + cpu_after - cpu
                    run.gateway_cpu_steps[rpc] = run.gateway_cpu_steps.get(rpc, 0) + steps
                if rpc == "ReplayMatch":
                    run.steps.append(steps)
                    run.gateway_ms.append(ms(elapsed))
                    run.gateway_rates.append(steps / elapsed)
                else:
                    run.batched_ms.append(ms(elapsed))
                    run.batched_rates.append(steps / elapsed)
            log = await stub.ExportMatch(
                gateway_pb2.ExportMatchRequest(match_id=match_id), timeout=REPLAY_TIMEOUT_S
            )
            board = sorted((e for e in log.events if e.stream == "board"), key=lambda e: e.sequence)
            began = now()
            shown = fold_with_views(board, viewer)
            elapsed = now() - began
            run.inprocess_ms.append(ms(elapsed))
            run.inprocess_rates.append(shown / elapsed)
    return run


def _cpu_note(replays: Sequence[ReplayRun], rpc: str) -> str:
    """The gateway's CPU per step of ``rpc`` over every replay, if it was read."""
    cpu = sum(r.gateway_cpu_s.get(rpc, 0.0) for r in replays)
    steps = sum(r.gateway_cpu_steps.get(rpc, 0) for r in replays)
    if not steps:
        return ""
    return f"gateway CPU {1e6 * cpu / steps:,.0f} µs per step ({steps:,} steps, 10 ms ticks)"


# -- rebuild floor ------------------------------------------------------------------------
async def read_and_fold(bootstrap: str, prefix: str) -> tuple[int, float, float]:
    """(events, events/s read + folded, events/s read only) over the four streams."""
    topics = [event_topic(s, prefix) for s in STREAMS]
    began = now()
    raw = [e async for e in read_stream(bootstrap, topics)]
    read_s = now() - began
    began = now()
    matches: dict[str, Match] = {}
    for envelope in raw:
        match = matches.get(envelope.match_id)
        if envelope.stream == "board":
            if is_a(envelope, platform_events_pb2.MatchCreated):
                matches[envelope.match_id] = folding.created(envelope)
            elif match is not None:
                folding.fold(match, envelope)
        elif match is not None and (seed := folding.revealed_seed(envelope)) is not None:
            folding.reveal(match, seed)
    fold_s = now() - began
    total = read_s + fold_s
    return len(raw), (len(raw) / total if total else 0.0), (len(raw) / read_s if read_s else 0.0)


# -- rebuild figure -----------------------------------------------------------------------
@dataclass(frozen=True)
class Progress:
    """What a projector's metrics endpoint says about its folding."""

    folded: float
    ready: bool
    #: Unix time at which it last finished folding a batch (0: not yet)
    last_fold: float = 0.0


def _folded_total(metrics_addr: str) -> Progress | None:
    """The projector's progress from its metrics endpoint; None if unreachable."""
    try:
        with urllib.request.urlopen(f"http://{metrics_addr}/metrics", timeout=1) as reply:
            body = reply.read().decode()
    except OSError:
        return None
    folded = 0.0
    ready = False
    last_fold = 0.0
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            if sample.name == "tabletop_projector_events_folded_total":
                folded += sample.value
            elif sample.name == "tabletop_projector_assigned_partitions":
                ready = sample.value > 0
            elif sample.name == "tabletop_projector_last_fold_timestamp_seconds":
                last_fold = sample.value
    return Progress(folded, ready, last_fold)


async def rebuild(stack: Stack, expected: int, log_dir: Path) -> RebuildRun:
    """Start a fresh projector over the stack's topics; time it folding ``expected`` events."""
    run = RebuildRun(events=expected)
    app_id = f"bench-rebuild-{uuid.uuid4().hex[:8]}"
    metrics_port = free_port()
    env = {
        **stack.env("projector"),
        "TABLETOP_METRICS_PORT": str(metrics_port),
        "PYTHONPATH": os.pathsep.join([str(Path.cwd()), os.environ.get("PYTHONPATH", "")]),
    }
    work = log_dir / app_id
    work.mkdir(parents=True, exist_ok=True)  # Faust writes its data folder in its cwd
    log_path = log_dir / f"{app_id}.log"
    log = await asyncio.to_thread(log_path.open, "ab")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "tests.bench.rebuild_projector",
        f"{stack.topic_prefix}{app_id}",
        env=env,
        cwd=work,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    started = now()
    #: (perf_counter, unix time, events folded) whenever the count changed, and the last
    #: reading before the first fold
    samples: list[tuple[float, float, float]] = []
    cpu_samples: list[tuple[float, float, float]] = []
    last_fold = 0.0
    try:
        deadline = started + REBUILD_TIMEOUT_S
        last_change = started
        while now() < deadline:
            if process.returncode is not None:
                run.error = f"the rebuild projector exited ({process.returncode}); see {log_path}"
                break
            reading = await asyncio.to_thread(_folded_total, f"127.0.0.1:{metrics_port}")
            stamp, wall = now(), time.time()
            poll = 0.1
            if reading is not None:
                folded = reading.folded
                cpu = process_cpu(process.pid)
                if cpu is not None:
                    cpu_samples.append((stamp, folded, cpu))
                if reading.ready and not run.projector_ready_s:
                    run.projector_ready_s = stamp - started
                if folded == 0:
                    # the start is the last reading before the first fold: read often from
                    # readiness on (a bench corpus folds in a fraction of a second)
                    samples[:] = [(stamp, wall, folded)]
                    if reading.ready:
                        poll = 0.02
                elif folded != samples[-1][2]:
                    samples.append((stamp, wall, folded))
                    last_change = stamp
                if folded >= expected:
                    run.projector_done = True
                    last_fold = reading.last_fold
                    break
                if folded > 0 and stamp - last_change > 20:
                    run.error = f"stalled at {samples[-1][2]:.0f} of {expected} events"
                    break
            await asyncio.sleep(poll)
        else:
            run.error = f"not done after {REBUILD_TIMEOUT_S:.0f} s"
    finally:
        await stop_process(process, 20.0)
        log.close()
        await asyncio.to_thread(shutil.rmtree, work, True)
    busy = [c for c in cpu_samples if c[1] > 0]
    idle = [c for c in cpu_samples if c[1] == 0]
    if busy and idle and busy[-1][1] > 0 and busy[-1][0] > idle[-1][0]:
        (t0, _, c0), (t1, f1, c1) = idle[-1], busy[-1]
        run.projector_cpu_ms_per_event = 1000 * (c1 - c0) / f1
        run.projector_cores = (c1 - c0) / (t1 - t0)
    if len(samples) >= 2 and samples[0][2] == 0:
        # from the last reading before the first fold to the end of the last batch (the
        # projector's own clock), or to the reading that saw it done
        _, wall0, _ = samples[0]
        t1, wall1, f1 = samples[-1]
        end = last_fold if run.projector_done and last_fold > wall0 else wall1
        if end > wall0:
            run.projector_events_per_s = f1 / (end - wall0)
        for (ta, _, fa), (tb, _, fb) in itertools.pairwise(samples[1:]):
            if tb > ta:
                run.projector_rates.append((fb - fa) / (tb - ta))
    return run


async def measure_rebuild(stack: Stack, log_dir: Path) -> RebuildRun:
    events, floor_rate, read_rate = await read_and_fold(stack.kafka_bootstrap, stack.topic_prefix)
    run = await rebuild(stack, events, log_dir)
    run.floor_events_per_s = floor_rate
    run.floor_read_only_per_s = read_rate
    return run


def replay_figures(replays: Sequence[ReplayRun], rebuilds: Sequence[RebuildRun]) -> list[Figure]:
    figures: list[Figure] = []
    inprocess_rate = median([s for r in replays for s in r.inprocess_rates])
    inprocess_ms = median([s for r in replays for s in r.inprocess_ms])
    steps = median([float(s) for r in replays for s in r.steps])
    if any(r.gateway_rates for r in replays):
        figures.append(
            figure(
                "replay.gateway.events",
                "ReplayMatch through the gateway (one step a message): events (steps with "
                "views) per second",
                "events/s",
                "higher",
                [r.gateway_rates for r in replays],
                floor=Floor(inprocess_rate, "same fold + views in-process"),
                note=_cpu_note(replays, "ReplayMatch"),
            )
        )
        figures.append(
            figure(
                "replay.gateway.match",
                f"ReplayMatch through the gateway: a whole match (~{steps:.0f} steps)",
                "ms",
                "lower",
                [r.gateway_ms for r in replays],
                floor=Floor(inprocess_ms, "same fold + views in-process"),
            )
        )
    if any(r.batched_rates for r in replays):
        figures.append(
            figure(
                "replay.gateway.batches",
                "ReplayMatchBatches through the gateway (many steps a message): events "
                "(steps with views) per second",
                "events/s",
                "higher",
                [r.batched_rates for r in replays],
                floor=Floor(inprocess_rate, "same fold + views in-process"),
                note=_cpu_note(replays, "ReplayMatchBatches"),
            )
        )
        figures.append(
            figure(
                "replay.gateway.batches.match",
                f"ReplayMatchBatches through the gateway: a whole match (~{steps:.0f} steps)",
                "ms",
                "lower",
                [r.batched_ms for r in replays],
                floor=Floor(inprocess_ms, "same fold + views in-process"),
            )
        )
    done = [r for r in rebuilds if r.projector_events_per_s > 0]
    if done:
        floor = median([r.floor_events_per_s for r in rebuilds])
        read = median([r.floor_read_only_per_s for r in rebuilds])
        ready = median([r.projector_ready_s for r in done if r.projector_ready_s])
        events = max(r.events for r in rebuilds)
        errors = "; ".join(r.error for r in rebuilds if r.error)
        figures.append(
            figure(
                "replay.rebuild.projector",
                f"Read-model rebuild by a fresh projector from offset 0 ({events:,} events)",
                "events/s",
                "higher",
                [[r.projector_events_per_s] for r in done],
                floor=Floor(floor, f"read_stream + fold in-process (read alone {read:,.0f}/s)"),
                note=f"ready after {ready:.1f} s (Faust start, rebalance); while folding it used "
                f"{median([r.projector_cores for r in done]):.2f} cores, "
                f"{median([r.projector_cpu_ms_per_event for r in done]):.2f} ms CPU per event"
                + (f"; {errors}" if errors else ""),
            )
        )
    return figures
