"""Issue 42's playouts per CPU-second are of the engine search plays out with: Dungeon
Drop's ROLLOUT physics, its FULL physics (every recorded drop and flick) reported beside."""

from __future__ import annotations

from tests.bench.engine import EngineRun, engine_figures, one_playout
from tests.bench.targets import apply_targets


def test_a_game_with_a_rollout_engine_is_targeted_on_it_and_reported_on_its_own() -> None:
    runs = [
        EngineRun(
            "dungeon_drop",
            playout_rates=[10.0],
            playout_cpu_s=[0.02, 0.02],
            rollout_cpu_s=[0.01] * 4,
            events_per_playout=[100],
        ),
        EngineRun("crashland", [10.0], [0.001] * 5, events_per_playout=[30]),
    ]
    figures = {f.key: f for f in engine_figures(runs, noop_rate=0.0)}
    apply_targets(list(figures.values()))
    searched = figures["engine.playouts_cpu.dungeon_drop"]
    assert searched.median == 100.0 and "ROLLOUT" in searched.note
    assert searched.target is not None
    assert figures["engine.playouts_cpu_full.dungeon_drop"].median == 50.0
    assert figures["engine.playouts_cpu_full.dungeon_drop"].target is None
    assert figures["engine.playouts_cpu.crashland"].median == 1000.0
    assert "engine.playouts_cpu_full.crashland" not in figures


def test_a_rollout_playout_runs_on_the_rollout_physics() -> None:
    full, rollout = one_playout("dungeon_drop", 3), one_playout("dungeon_drop", 3, rollout=True)
    assert full.outcome is not None and rollout.outcome is not None
    # the same seeds and choices, but settled cubes end elsewhere under ROLLOUT physics
    assert full.events != rollout.events
