"""The capacity run's arithmetic: which step passes, the capacity a ramp shows, what an
idle match and an open stream cost, and the options that plan a run."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

from tests.bench.human.capacity import (
    GENERATOR,
    OWN,
    SHARED,
    CapacityRun,
    WatchBatch,
    Window,
    kafka_log_bytes,
    per_match_slopes,
    summary,
)
from tests.bench.human.figures import (
    capacity_figures,
    capacity_markdown,
    generator_cost,
    idle_costs,
)
from tests.bench.human.generator import Shape
from tests.bench.human.options import DEFAULT_STEPS, QUICK_STEPS, add_arguments, plan_from, steps
from tests.bench.servermetrics import gc_pauses_between

MIB = 1 << 20


def window(
    matches: int,
    view_ms: list[float] | None = None,
    *,
    kind: str = "load",
    refusals: dict[str, int] | None = None,
    errors: dict[str, int] | None = None,
    ready: int | None = None,
    rss: dict[str, int] | None = None,
    cpu: dict[str, float] | None = None,
    streams: int = 0,
    actions: int = 0,
    seconds: float = 10.0,
) -> Window:
    load: dict[str, Any] = {
        "view_ms": [5.0] * 100 if view_ms is None else view_ms,
        "refusals": refusals or {},
        "errors": errors or {},
        "actions": actions,
    }
    return Window(
        kind=kind,
        matches=matches,
        window_s=seconds,
        cpu_s=cpu or {},
        rss_start=rss or {},
        rss_end=rss or {},
        load=load,
        status={"streams": streams},
        setup={"ready": matches if ready is None else ready},
    )


def run_of(*steps: Window) -> CapacityRun:
    plan = plan_from(parse(), peer=False)
    return CapacityRun("tabletop", asdict(plan.shape), asdict(plan.sizes), steps=list(steps))


def test_a_step_passes_with_a_p99_under_the_bound_and_nothing_refused_or_failed() -> None:
    assert window(10, [10.0] * 99 + [149.0]).passed()
    assert not window(10, [10.0] * 98 + [400.0, 400.0]).passed()  # p99 over 150 ms
    assert not window(10, refusals={"action": 1}).passed()
    assert not window(10, errors={"stream: UNAVAILABLE": 1}).passed()


def test_a_step_whose_matches_were_not_all_set_up_fails() -> None:
    step = window(10, ready=9)
    assert step.errors() == 1 and not step.passed()


def test_a_step_without_a_single_action_proves_nothing() -> None:
    assert not window(10, []).passed()


def test_capacity_is_the_last_step_passed_before_the_first_that_failed() -> None:
    late = [10.0] * 90 + [500.0] * 10
    run = run_of(window(100), window(200), window(400, late), window(800))
    assert run.capacity() == (200, True)


def test_a_ramp_that_never_failed_gives_a_lower_bound() -> None:
    assert run_of(window(100), window(200)).capacity() == (200, False)
    assert run_of().capacity() == (0, False)


def test_memory_per_match_is_the_slope_over_the_ramp() -> None:
    steps = [
        window(m, rss={"gateway": 100 * MIB + 50_000 * m, "board": 80 * MIB})
        for m in (100, 200, 400)
    ]
    slopes = per_match_slopes(steps)
    assert slopes["gateway"] == pytest.approx(50_000)
    assert slopes["board"] == pytest.approx(0)
    assert per_match_slopes(steps[:1]) == {}  # one step: no slope


def test_idle_costs_per_match_per_stream_and_what_is_given_back() -> None:
    run = run_of()
    run.baseline = window(
        4, kind="baseline", rss={"gateway": 100 * MIB}, cpu={"gateway": 1.0}, seconds=20
    )
    run.idle = window(
        104,
        kind="idle",
        rss={"gateway": 100 * MIB + 100 * 40_000},
        cpu={"gateway": 1.2},
        seconds=20,
    )
    base = {"gateway": 110 * MIB}
    run.watch = [
        WatchBatch(SHARED, 500, 1, base, {"gateway": 110 * MIB + 500 * 20_000}, {}),
        WatchBatch(OWN, 500, 500, base, {"gateway": 110 * MIB + 500 * 50_000}, {}),
        WatchBatch("all closed", -1000, 0, {"gateway": 150 * MIB}, {"gateway": 140 * MIB}, {}),
    ]
    (cost,) = idle_costs(run)
    assert cost.per_match == pytest.approx(40_000)
    # (1.2 - 1.0) CPU s over 20 s, for 100 matches: 100 µs per match per second
    assert cost.cpu_us_per_match_s == pytest.approx(100)
    assert cost.per_stream_shared == pytest.approx(20_000)
    assert cost.per_stream_own == pytest.approx(50_000)
    assert cost.returned_per_stream == pytest.approx(10 * MIB / 1000)


def test_a_system_that_cannot_share_a_connection_has_no_shared_figure() -> None:
    run = run_of()
    run.baseline = window(4, kind="baseline", rss={"server": MIB})
    run.idle = window(8, kind="idle", rss={"server": 2 * MIB})
    run.watch = [WatchBatch(SHARED, 10, 10, {"server": MIB}, {"server": 2 * MIB}, {})]
    (cost,) = idle_costs(run)
    assert cost.per_stream_shared is None


def test_the_generator_cost_per_action_and_per_stream() -> None:
    run = run_of(
        window(100, cpu={GENERATOR: 0.5, "gateway": 3.0}, actions=1000),
        window(200, cpu={GENERATOR: 1.5, "gateway": 6.0}, actions=1000),
    )
    run.idle = window(100, kind="idle", cpu={GENERATOR: 0.1}, streams=1000, seconds=20)
    cost = generator_cost(run)
    assert cost.cpu_ms_per_action == pytest.approx(1.0)
    assert cost.cpu_us_per_stream_s == pytest.approx(5.0)
    assert cost.cores_at_largest == pytest.approx(0.15)


def test_the_json_keeps_summaries_of_the_samples_not_the_samples() -> None:
    run = run_of(window(10, [float(v) for v in range(1, 101)]))
    data = run.to_json()
    saved = data["steps"][0]
    assert saved["passed"] is True
    assert saved["load"]["view_ms"]["count"] == 100
    assert saved["load"]["view_ms"]["max"] == 100
    assert data["capacity"] == {"matches": 10, "limit_found": False}
    json.dumps(data)  # all of it serialisable
    assert summary([]) == {"count": 0}


def test_figures_and_the_report_section() -> None:
    cpu = {"gateway": 5.0, GENERATOR: 1.0, "other": 2.0}
    rss = {"gateway": 200 * MIB}
    run = run_of(window(100, cpu=cpu, rss=rss), window(200, [400.0] * 10, cpu=cpu, rss=rss))
    keys = {f.key for f in capacity_figures([run])}
    assert keys == {
        "capacity.tabletop.view.m100",
        "capacity.tabletop.view.m200",
        "capacity.tabletop.matches",
    }
    text = "\n".join(capacity_markdown([run], {}))
    assert "**tabletop: capacity 100 matches**" in text
    # each process at each step: CPUs busy (5 s in a 10 s window) and resident MiB
    assert "| gateway | 0.50 / 200.0 | 0.50 / 200.0 |" in text
    assert "| other | 0.20 | 0.20 |" in text
    assert capacity_markdown([], {}) == []


def test_garbage_collections_in_a_window_and_their_longest_pause() -> None:
    inf = float("inf")
    before = {("0", 0.001): 5.0, ("0", inf): 5.0, ("2", 0.1): 1.0, ("2", 0.5): 1.0, ("2", inf): 1.0}
    # in the window: 3 young pauses under 1 ms, one full collection of 0.1-0.5 s
    after = {("0", 0.001): 8.0, ("0", inf): 8.0, ("2", 0.1): 1.0, ("2", 0.5): 2.0, ("2", inf): 2.0}
    assert gc_pauses_between(before, after) == {"full": 1.0, "longest_s": 0.5}
    assert gc_pauses_between(after, after) == {"full": 0.0, "longest_s": 0.0}
    assert gc_pauses_between(before, {}) == {}
    step = window(100)
    step.gc_pauses = {"gateway": gc_pauses_between(before, after), "board": {}}
    text = "\n".join(capacity_markdown([run_of(step)], {}))
    assert "| board | — |" in text and "| gateway | 1 / ≤ 500 |" in text


def test_kafka_log_bytes_counts_only_this_runs_segments(tmp_path: Path) -> None:
    (tmp_path / "bench1c.board.events-0").mkdir()
    (tmp_path / "bench1c.board.events-0" / "00000.log").write_bytes(b"x" * 100)
    (tmp_path / "bench1c.board.events-0" / "00000.index").write_bytes(b"x" * 999)
    (tmp_path / "other.board.events-0").mkdir()
    (tmp_path / "other.board.events-0" / "00000.log").write_bytes(b"x" * 50)
    assert kafka_log_bytes("bench1c.", tmp_path) == 100
    assert kafka_log_bytes("", tmp_path) is None
    assert kafka_log_bytes("bench1c.", None) is None


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    add_arguments(parser)
    return parser.parse_args(argv)


def test_the_default_plan_is_the_modest_one_of_make_bench() -> None:
    plan = plan_from(parse(), peer=True)
    assert plan.sizes.steps == DEFAULT_STEPS and plan.sizes.hold_s == 60
    assert plan.shape.think_mean_s == 10 and plan.shape.think_min_s == 1
    assert plan.sizes.idle_matches == DEFAULT_STEPS[0]


def test_quick_holds_briefly_and_thinks_faster() -> None:
    plan = plan_from(parse("--quick"), peer=False)
    assert plan.sizes.steps == QUICK_STEPS and plan.sizes.hold_s == 10
    assert plan.shape.think_mean_s == 2 and not plan.peer
    # the idle step adds matches to the warm-up's (one per game)
    assert plan.sizes.idle_matches > len(plan.shape.seats)


def test_options_override_the_plan() -> None:
    plan = plan_from(
        parse("--capacity-steps", "10,20", "--capacity-hold", "5", "--think-mean", "3"), True
    )
    assert plan.sizes.steps == (10, 20) and plan.sizes.hold_s == 5
    assert plan.shape.think_mean_s == 3


@pytest.mark.parametrize("text", ["", "0", "20,10", "1,x"])
def test_steps_must_rise_from_one(text: str) -> None:
    with pytest.raises((argparse.ArgumentTypeError, ValueError)):
        steps(text)


def test_the_shape_tells_the_generator_its_people() -> None:
    shape = Shape(spectators=2, think_mean_s=10, think_min_s=1)
    args = shape.args()
    assert (
        args[args.index("-seats") + 1] == "crashland=1,drillit=2,imperial_miners=2,dungeon_drop=2"
    )
    think = args[args.index("-think-mean") + 1]  # a Go duration
    assert think.endswith("s") and float(think[:-1]) == 10
    assert shape.streams_per_match() == pytest.approx(7 / 4 + 2)


def test_tables_choose_the_games_and_seats_for_both_systems() -> None:
    plan = plan_from(parse("--tables", "crashland=1,drillit=3"), peer=True)
    assert dict(plan.shape.seats) == {"crashland": 1, "drillit": 3}
    args = plan.shape.args()
    assert args[args.index("-seats") + 1] == "crashland=1,drillit=3"
    assert plan.shape.streams_per_match() == pytest.approx(4 / 2 + 1)


@pytest.mark.parametrize("text", ["crashland=2", "chess=1", "crashland", "drillit=x"])
def test_tables_the_games_cannot_seat_are_refused(text: str) -> None:
    with pytest.raises(SystemExit):
        parse("--tables", text)


def test_a_run_that_broke_off_keeps_its_steps_and_says_why() -> None:
    run = run_of(window(100), window(200, errors={"setup: fetch": 5}))
    run.error = "the boardgame.io server exited with code 1: Error: EMFILE"
    text = "\n".join(capacity_markdown([run], {}))
    assert "**tabletop: capacity 100 matches**" in text
    assert "- tabletop: the boardgame.io server exited with code 1: Error: EMFILE." in text
    never = run_of()
    never.error = "no generator"
    assert "- tabletop: did not run (no generator)." in "\n".join(capacity_markdown([never], {}))
