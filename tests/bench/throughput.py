"""Throughput: acknowledged actions per second at each concurrency level, the whole stack on
this machine. Samples are 1-second windows; the "p99" of a rate is its 1st percentile (the
rate beaten in 99% of seconds).

Floor: the slower of the two bare systems every action crosses, at the same number of
requests in flight — acks=all Kafka writes per second and gRPC echo calls per second.
"""

from __future__ import annotations

from collections.abc import Sequence

from .bots import LoadResult
from .floors import FloorRun
from .stats import Figure, Floor, figure, median
from .timing import window_rates

#: processes that are not the stack: the load generator, other work, idle time
NOT_THE_STACK = frozenset({"bench client", "other", "idle"})


def _rate_floor(floors: Sequence[FloorRun], level: int) -> Floor | None:
    kafka = median([s for run in floors for s in run.kafka_ack_rate.get(level, [])])
    grpc = median([s for run in floors for s in run.grpc_echo_rate.get(level, [])])
    candidates = [(v, name) for v, name in ((kafka, "Kafka acks"), (grpc, "gRPC echo")) if v == v]
    if not candidates:
        return None
    value, _ = min(candidates)
    return Floor(
        value, f"min(Kafka acks {kafka:,.0f}/s, gRPC echo {grpc:,.0f}/s), {level} in flight"
    )


def throughput_figures(
    loads: dict[int, list[LoadResult]], floors: Sequence[FloorRun]
) -> list[Figure]:
    figures = []
    for level, runs in sorted(loads.items()):
        label = "1 match" if level == 1 else f"{level} concurrent matches"
        rates = [window_rates(run.ack_stamps, run.start, run.end) for run in runs]
        figures.append(
            figure(
                f"throughput.acks.c{level}",
                f"Acknowledged actions per second, {label}",
                "/s",
                "higher",
                rates,
                floor=_rate_floor(floors, level),
            )
        )
    return figures


def cpu_figures(loads: dict[int, list[LoadResult]]) -> list[Figure]:
    """Whole-stack CPU per acknowledged action (every service and Kafka; not the bots), one
    sample per run."""
    figures = []
    for level, runs in sorted(loads.items()):
        samples = [
            [1000 * sum(s for n, s in run.cpu_s.items() if n not in NOT_THE_STACK) / run.actions]
            for run in runs
            if run.actions and run.cpu_s
        ]
        if samples:
            label = "1 match" if level == 1 else f"{level} concurrent matches"
            figures.append(
                figure(
                    f"cpu.stack.c{level}",
                    f"Whole-stack CPU per acknowledged action (services + Kafka), {label}",
                    "ms",
                    "lower",
                    samples,
                )
            )
    return figures


def floor_rate_figures(floors: Sequence[FloorRun]) -> list[Figure]:
    levels = sorted({level for run in floors for level in run.kafka_ack_rate})
    figures = []
    for level in levels:
        figures.append(
            figure(
                f"floor.kafka_ack_rate.c{level}",
                f"Kafka acks=all writes per second, {level} in flight (bare aiokafka)",
                "/s",
                "higher",
                [run.kafka_ack_rate.get(level, []) for run in floors],
            )
        )
        figures.append(
            figure(
                f"floor.grpc_echo_rate.c{level}",
                f"gRPC echo calls per second, {level} in flight (bare grpc.aio)",
                "/s",
                "higher",
                [run.grpc_echo_rate.get(level, []) for run in floors],
            )
        )
    figures.append(
        figure(
            "floor.noop_fold",
            "No-op fold: state = f(state, event) with f doing nothing, in-process",
            "events/s",
            "higher",
            [run.noop_fold_rate for run in floors],
        )
    )
    return figures
