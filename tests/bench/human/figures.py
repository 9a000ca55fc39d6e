"""The capacity runs as the report shows them: figures, the ramp, and what idling costs."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..stats import Figure, figure, percentile
from .capacity import (
    GENERATOR,
    OWN,
    SHARED,
    VIEW_P99_BOUND_MS,
    CapacityRun,
    Window,
    per_match_slopes,
)

#: not processes: procstat's rest of the machine
NOT_PROCESSES = ("other", "idle")


def _key(system: str) -> str:
    return "tabletop" if system == "tabletop" else "peer"


def _ms(value: float) -> str:
    return "—" if not math.isfinite(value) else (f"{value:.1f}" if value < 100 else f"{value:,.0f}")


def _kb(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value / 1024:,.1f}"


def processes(run: CapacityRun) -> list[str]:
    """The run's processes in a stable order, the load generator last."""
    names: set[str] = set()
    for window in [run.baseline, run.idle, *run.steps]:
        if window is not None:
            names.update(n for n in [*window.cpu_s, *window.rss_end] if n not in NOT_PROCESSES)
    return sorted(names - {GENERATOR}) + ([GENERATOR] if GENERATOR in names else [])


@dataclass(frozen=True)
class IdleCost:
    """One process's cost of an idle match and of an open watch stream."""

    process: str
    #: resident bytes with only the warm-up matches, and with the idle step's
    baseline_rss: int | None
    idle_rss: int | None
    per_match: float | None
    #: bytes per match in play over the ramp (slope; includes what acting accumulates)
    per_match_playing: float | None
    #: CPU microseconds per second of one idle match
    cpu_us_per_match_s: float | None
    #: bytes per watch stream: many to one connection, and a connection each
    per_stream_shared: float | None
    per_stream_own: float | None
    #: bytes per stream given back once every extra stream closed (of those opened)
    returned_per_stream: float | None


def idle_costs(run: CapacityRun) -> list[IdleCost]:
    base, idle = run.baseline, run.idle
    slopes = per_match_slopes(run.steps)
    added = idle.matches - base.matches if idle is not None and base is not None else 0
    batches = {b.label: b for b in run.watch}
    opened = sum(b.streams for b in run.watch if b.streams > 0)

    def per_stream(label: str, name: str) -> float | None:
        batch = batches.get(label)
        if batch is None or batch.streams <= 0 or name not in batch.rss_after:
            return None
        if label == SHARED and batch.connections >= batch.streams:
            return None  # the system cannot share a connection among streams
        return (batch.rss_after[name] - batch.rss_before.get(name, 0)) / batch.streams

    costs = []
    for name in processes(run):
        base_rss = base.rss_end.get(name) if base is not None else None
        idle_rss = idle.rss_end.get(name) if idle is not None else None
        per_match = cpu = None
        if base is not None and idle is not None and added > 0:
            if base_rss is not None and idle_rss is not None:
                per_match = (idle_rss - base_rss) / added
            if name in base.cpu_s and name in idle.cpu_s and base.window_s and idle.window_s:
                rate = idle.cpu_s[name] / idle.window_s - base.cpu_s[name] / base.window_s
                cpu = 1e6 * rate / added
        closed = batches.get("all closed")
        returned = None
        if closed is not None and opened and name in closed.rss_after:
            returned = (closed.rss_before.get(name, 0) - closed.rss_after[name]) / opened
        costs.append(
            IdleCost(
                name,
                base_rss,
                idle_rss,
                per_match,
                slopes.get(name),
                cpu,
                per_stream(SHARED, name),
                per_stream(OWN, name),
                returned,
            )
        )
    return costs


@dataclass(frozen=True)
class GeneratorCost:
    cpu_ms_per_action: float | None
    cpu_us_per_stream_s: float | None
    #: its share of one CPU at the largest step
    cores_at_largest: float | None


def generator_cost(run: CapacityRun) -> GeneratorCost:
    steps = [s for s in run.steps if GENERATOR in s.cpu_s]
    actions = sum(int(s.load.get("actions", 0)) for s in steps)
    cpu = sum(s.cpu_s[GENERATOR] for s in steps)
    per_stream = None
    idle = run.idle
    if idle is not None and GENERATOR in idle.cpu_s and idle.streams and idle.window_s:
        per_stream = 1e6 * idle.cpu_s[GENERATOR] / (idle.streams * idle.window_s)
    largest = max(steps, key=lambda s: s.matches, default=None)
    return GeneratorCost(
        1000 * cpu / actions if actions else None,
        per_stream,
        largest.cpu_s[GENERATOR] / largest.window_s if largest and largest.window_s else None,
    )


def server_cores(step: Window) -> float:
    """CPUs busy with the system measured (every process but the load generator)."""
    return sum(v for n, v in step.cpu_s.items() if n not in (*NOT_PROCESSES, GENERATOR)) / (
        step.window_s or math.inf
    )


def capacity_figures(runs: Sequence[CapacityRun]) -> list[Figure]:
    figures = []
    for run in runs:
        key = _key(run.system)
        for step in run.steps:
            figures.append(
                figure(
                    f"capacity.{key}.view.m{step.matches}",
                    f"{run.system}: action → the actor's view, {step.matches} matches, human pace",
                    "ms",
                    "lower",
                    [step.load.get("view_ms", [])],
                )
            )
        if run.steps:
            matches, limited = run.capacity()
            figures.append(
                figure(
                    f"capacity.{key}.matches",
                    f"{run.system}: matches in play with action → view p99 < "
                    f"{VIEW_P99_BOUND_MS:.0f} ms, nothing refused, nothing failed",
                    "matches",
                    "higher",
                    [[float(matches)]],
                    note="" if limited else "a lower bound: no step of the ramp failed",
                )
            )
    return figures


def _step_row(run: CapacityRun, step: Window) -> str:
    load = step.load
    views = load.get("view_ms", [])
    others = load.get("others_ms", [])
    acks = load.get("ack_ms", [])
    generator = step.cpu_s.get(GENERATOR)
    return (
        f"| {run.system} | {step.matches:,} | {step.streams:,} | {step.actions_per_s():.1f} | "
        f"{_ms(percentile(views, 50))} / {_ms(percentile(views, 99))} | "
        f"{_ms(percentile(others, 99))} | {_ms(percentile(acks, 99)) if acks else '—'} | "
        f"{step.refusals()} | {step.errors()} | {load.get('raced', 0)} | "
        f"{server_cores(step):.2f} | "
        f"{(generator / step.window_s) if generator is not None else math.nan:.2f} | "
        f"{'yes' if step.passed() else 'no'} |"
    )


def _problems(run: CapacityRun) -> list[str]:
    lines = []
    for step in run.steps:
        failures = {**step.load.get("refusals", {}), **step.load.get("errors", {})}
        ready = int(step.setup.get("ready", step.matches))
        if ready < step.matches:
            failures["matches not set up in time"] = step.matches - ready
        if failures:
            listed = ", ".join(f"{k} {v}" for k, v in sorted(failures.items()))
            lines.append(f"- {run.system} at {step.matches:,} matches: {listed}.")
    return lines


def capacity_markdown(runs: Sequence[CapacityRun], config: dict[str, Any]) -> list[str]:
    """The report's section (empty when nothing ran)."""
    if not runs:
        return []
    shape = runs[0].shape
    sizes = runs[0].sizes
    seats = ", ".join(f"{g} {n}" for g, n in shape["seats"].items())
    lines = [
        "## Capacity at human pace",
        "",
        f"Tables of every game in turn (seats: {seats}; {shape['spectators']} spectator(s) a "
        f"match), every person on a stream of their own (Tabletop: each seat a `PlayMatch` "
        f"stream, each spectator a `WatchMatch` stream; {shape['persons_per_conn']} person(s) "
        f"a connection; boardgame.io: a socket.io connection each). A seat whose turn it is "
        f"thinks {shape['think_min_s']:g} s plus an exponential draw (mean "
        f"{shape['think_mean_s']:g} s in all), then plays a random legal action (Tabletop: "
        "from the legal actions the gateway gives it, parameters drawn inside their ranges). "
        f"Steps of {', '.join(f'{m:,}' for m in sizes['steps'])} matches, each held "
        f"{sizes['hold_s']:g} s after {sizes['settle_s']:g} s to settle. A step passes when "
        f"the acting seat sees its action's view within {VIEW_P99_BOUND_MS:.0f} ms at the "
        "p99, nothing is refused and nothing fails; the ramp stops at the first step that "
        "does not pass. Tabletop runs a fresh stack of its own with "
        f"{config.get('capacity_env_note', 'the shipped settings')}; boardgame.io "
        f"0.50 runs FlatFile storage. The load generators are Go (grpc-go) for Tabletop and "
        "Node (socket.io-client) for boardgame.io; their CPU is in its own column, not in the "
        "server's.",
        "",
        "| System | Matches | Streams | Actions/s | Action → own view p50 / p99 (ms) | "
        "→ others' views p99 (ms) | → ack p99 (ms) | Refused | Failed | Raced | "
        "Server CPUs busy | Generator CPUs busy | Passed |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for run in runs:
        lines += [_step_row(run, step) for step in run.steps]
    lines.append("")
    for run in runs:
        if run.error and not run.steps:
            lines.append(f"- {run.system}: did not run ({run.error}).")
            continue
        matches, limited = run.capacity()
        lines.append(
            f"- **{run.system}: capacity {matches:,} matches**"
            + ("" if limited else " (a lower bound: no step of the ramp failed)")
            + "."
        )
        if run.error:  # e.g. the peer's server gone mid-ramp
            lines.append(f"- {run.system}: {run.error}.")
        lines += _problems(run)
    for run in runs:
        lines += _process_table(run)
    lines += [
        "",
        "*Raced*: an action refused because another seat's action changed the match between "
        "the legal actions and the click (a stale button), not counted as a failure. "
        "*Others' views*: every other seat and spectator of the match showing the action.",
        "",
        "### What an idle match and an open stream cost",
        "",
        "Resident memory and CPU per process. *Per idle match*: the idle step (matches created "
        "and seated, every stream open, nobody acting) minus the baseline (only the warm-up "
        "matches), per added match. *Per match playing*: the slope of resident memory over the "
        "ramp's steps (what acting accumulates included). *Per stream*: extra spectator "
        "streams opened with nobody acting, many to one connection, then one connection each "
        "(batches add up: nothing freed before either); *given back*: per stream, once all "
        "were closed. Resident memory moves in allocator-sized steps and the machine is "
        "shared: small figures are noise.",
        "",
    ]
    for run in runs:
        if run.error or run.idle is None:
            continue
        base, idle = run.baseline, run.idle
        assert base is not None
        lines += [
            f"**{run.system}**: {idle.matches - base.matches:,} idle matches added to "
            f"{base.matches}, {idle.streams - base.streams:,} streams; "
            f"{sum(b.streams for b in run.watch if b.streams > 0):,} extra watch streams.",
            "",
            "| Process | RSS baseline (MiB) | RSS idle (MiB) | Per idle match (KiB) | "
            "Per match playing (KiB) | CPU per idle match (µs/s) | Per stream, shared "
            "connection (KiB) | Per stream, own connection (KiB) | Given back per stream (KiB) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
        ]
        for cost in idle_costs(run):
            lines.append(
                f"| {cost.process} | {_mib(cost.baseline_rss)} | {_mib(cost.idle_rss)} | "
                f"{_kb(cost.per_match)} | {_kb(cost.per_match_playing)} | "
                f"{_us(cost.cpu_us_per_match_s)} | {_kb(cost.per_stream_shared)} | "
                f"{_kb(cost.per_stream_own)} | {_kb(cost.returned_per_stream)} |"
            )
        kafka = _kafka_bytes(run)
        if kafka:
            lines += ["", kafka]
        for service, grown in sorted(run.tracemalloc.items()):
            lines += [
                "",
                f"{run.system} {service}: the lines whose memory grew most from the baseline "
                "to the idle step (tracemalloc; per = per idle match added):",
                "",
                "```",
                *(grown or ["(nothing grew)"]),
                "```",
            ]
        gen = generator_cost(run)
        lines += [
            "",
            f"Load generator: {_num(gen.cpu_ms_per_action, 3)} ms CPU per action over the ramp, "
            f"{_num(gen.cpu_us_per_stream_s, 2)} µs CPU per open stream per second idle, "
            f"{_num(gen.cores_at_largest, 2)} CPUs busy at the largest step.",
            "",
        ]
    return lines


def _process_table(run: CapacityRun) -> list[str]:
    """Each process's CPUs busy and resident memory at the end of each step."""
    if not run.steps:
        return []
    lines = [
        "",
        f"{run.system}, each process at each step: CPUs busy / resident MiB at the step's end "
        "(*other*: the rest of the machine, other work included).",
        "",
        "| Process | " + " | ".join(f"{s.matches:,} matches" for s in run.steps) + " |",
        "|---|" + "---:|" * len(run.steps),
    ]
    for name in [*processes(run), "other"]:
        cells = []
        for step in run.steps:
            cpu = step.cpu_s.get(name)
            rss = step.rss_end.get(name)
            busy = f"{cpu / step.window_s:.2f}" if cpu is not None and step.window_s else "—"
            cells.append(busy if name == "other" else f"{busy} / {_mib(rss)}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines + _gc_rows(run)


def _gc_rows(run: CapacityRun) -> list[str]:
    """Each service's full garbage collections in each step's window and its longest pause
    of any generation (the upper bound of its histogram bucket)."""
    names = sorted({n for step in run.steps for n in step.gc_pauses})
    if not names:
        return []
    lines = [
        "",
        "Garbage collection in each step's window: full collections / longest pause of any "
        "generation, ms (≤ its bucket's bound; `tabletop_gc_pause_seconds`).",
        "",
        "| Process | " + " | ".join(f"{s.matches:,} matches" for s in run.steps) + " |",
        "|---|" + "---:|" * len(run.steps),
    ]
    for name in names:
        cells = []
        for step in run.steps:
            gc = step.gc_pauses.get(name)
            cells.append("—" if not gc else f"{gc['full']:.0f} / ≤ {1000 * gc['longest_s']:g}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def _kafka_bytes(run: CapacityRun) -> str:
    base, idle = run.baseline, run.idle
    if base is None or idle is None or base.kafka_bytes_end is None or idle.kafka_bytes_end is None:
        return ""
    added = idle.matches - base.matches
    text = (
        "Kafka holds no memory of its own per match (the broker's heap is fixed; the JVM's "
        "resident memory is in the table): a match costs log bytes, "
        f"{(idle.kafka_bytes_end - base.kafka_bytes_end) / max(added, 1):,.0f} bytes per "
        "idle match set up (its creation and joins, on every topic)"
    )
    grown = actions = 0
    for step in run.steps:
        if step.kafka_bytes_start is not None and step.kafka_bytes_end is not None:
            grown += step.kafka_bytes_end - step.kafka_bytes_start
            actions += int(step.load.get("actions", 0))
    if actions:
        text += f"; {grown / actions:,.0f} bytes per action played in the ramp's windows"
    return text + "."


def _mib(value: int | None) -> str:
    return "—" if value is None else f"{value / (1 << 20):,.1f}"


def _us(value: float | None) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:,.1f}"


def _num(value: float | None, digits: int) -> str:
    return "—" if value is None or not math.isfinite(value) else f"{value:.{digits}f}"
