"""Action latency figures: an action sent on a PlayMatch stream → its acknowledgement, and →
the new view on the same stream, at each concurrency level, next to their floors.

Floors (unloaded, measured in the same run):
- acknowledged: 2 bare gRPC hops (client → gateway → board) + one bare acks=all Kafka write;
- view: 2 bare gRPC hops + 2 bare Kafka hops (produce → read_committed consumer): the events
  reach the projector, the view reaches the gateway. The stream push itself is not counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from .bots import LoadResult
from .floors import FloorRun
from .stats import Figure, Floor, figure, median
from .timing import window_rates


def _pooled(runs: Sequence[FloorRun], attribute: str) -> list[float]:
    return [s for run in runs for s in getattr(run, attribute)]


def ack_floor(floors: Sequence[FloorRun]) -> Floor:
    echo = median(_pooled(floors, "grpc_echo_ms"))
    kafka = median(_pooled(floors, "kafka_ack_ms"))
    return Floor(2 * echo + kafka, f"2xgRPC {echo:.2f} + Kafka ack {kafka:.2f} ms")


def view_floor(floors: Sequence[FloorRun]) -> Floor:
    echo = median(_pooled(floors, "grpc_echo_ms"))
    hop = median(_pooled(floors, "kafka_hop_ms"))
    return Floor(2 * echo + 2 * hop, f"2xgRPC {echo:.2f} + 2xKafka hop {hop:.2f} ms")


def _level_note(loads: Sequence[LoadResult]) -> str:
    errors = sum(sum(load.errors.values()) for load in loads)
    lost = sum(load.views_lost for load in loads)
    parts = []
    if errors:
        kinds = sorted({k for load in loads for k in load.errors})
        parts.append(f"{errors} failed calls ({', '.join(kinds)})")
    if lost:
        parts.append(f"{lost} views never arrived")
    refused = sum(load.creates_refused for load in loads)
    if refused:
        parts.append(f"{refused} new matches refused (the stack was full; not timed)")
    return "; ".join(parts)


def latency_figures(
    loads: dict[int, list[LoadResult]],
    floors: Sequence[FloorRun],
    tapped: dict[int, list[LoadResult]] | None = None,
) -> list[Figure]:
    """Ack and view latency per level from the measured windows; from the ``tapped``
    windows (the views topic read beside the bots), how soon the projector's view follows,
    which other gateway replicas and later readers see (the bots' gateway shows the
    board's update with the acknowledgement: DESIGN-NOTES 34)."""
    tapped = tapped or {}
    figures: list[Figure] = []
    for level, runs in sorted(loads.items()):
        label = "1 match" if level == 1 else f"{level} concurrent matches"
        note = _level_note(runs)
        figures.append(
            figure(
                f"latency.ack.c{level}",
                f"Action (PlayMatch) → acknowledged (durable), {label}",
                "ms",
                "lower",
                [run.ack_ms for run in runs],
                floor=ack_floor(floors),
                note=note,
            )
        )
        figures.append(
            figure(
                f"latency.view.c{level}",
                f"Action (PlayMatch) → new view on the stream, {label}",
                "ms",
                "lower",
                [run.view_ms for run in runs],
                floor=view_floor(floors),
                target_on="p99",
                note=note,
            )
        )
    for level, runs in sorted(tapped.items()):
        if not any(run.published_ms for run in runs):
            continue
        label = "1 match" if level == 1 else f"{level} concurrent matches"
        figures.append(
            figure(
                f"latency.published.c{level}",
                f"(diagnostic) Action → view published on the views topic, {label}",
                "ms",
                "lower",
                [run.published_ms for run in runs],
                floor=view_floor(floors),
                note="what other gateway replicas and later readers wait for (the actor's "
                "gateway shows the board's update with the acknowledgement); in a window of "
                "its own with a consumer of the views topic beside the bots",
            )
        )
    return figures


def unary_figures(loads: dict[int, list[LoadResult]], floors: Sequence[FloorRun]) -> list[Figure]:
    """The same load with SubmitAction calls beside a WatchMatch stream (the calls the
    browser and plain scripts use), for comparison with the PlayMatch windows."""
    figures: list[Figure] = []
    for level, runs in sorted(loads.items()):
        label = "1 match" if level == 1 else f"{level} concurrent matches"
        note = "; ".join(filter(None, ["in a window of its own", _level_note(runs)]))
        figures.append(
            figure(
                f"latency.view.unary.c{level}",
                f"(diagnostic) SubmitAction → new view on WatchMatch, {label}",
                "ms",
                "lower",
                [run.view_ms for run in runs],
                floor=view_floor(floors),
                note=note,
            )
        )
        figures.append(
            figure(
                f"throughput.acks.unary.c{level}",
                f"(diagnostic) Acknowledged actions per second by SubmitAction calls, {label}",
                "/s",
                "higher",
                [window_rates(run.ack_stamps, run.start, run.end) for run in runs],
                note=note,
            )
        )
    return figures


def floor_latency_figures(floors: Sequence[FloorRun]) -> list[Figure]:
    rows = (
        ("floor.kafka_ack", "Kafka send_and_wait, acks=all (bare aiokafka)", "kafka_ack_ms"),
        (
            "floor.kafka_txn",
            "Kafka transaction with one record (as the board appends)",
            "kafka_txn_ms",
        ),
        (
            "floor.kafka_hop",
            "Kafka hop: produce (acks=all) → read_committed consumer",
            "kafka_hop_ms",
        ),
        ("floor.grpc_echo", "gRPC unary echo to another process (bare grpc.aio)", "grpc_echo_ms"),
    )
    return [
        figure(key, title, "ms", "lower", [getattr(run, attribute) for run in floors])
        for key, title, attribute in rows
    ]
