"""Issue 42's playouts per CPU-second are of playouts as search plays them out (on Dungeon
Drop's ROLLOUT physics); through the board's command handler they are reported beside."""

from __future__ import annotations

from services.games.contract import Outcome
from tests.bench.contract_loop import contract_cpu_rate
from tests.bench.engine import EngineRun, engine_figures, one_playout, search_playout
from tests.bench.targets import apply_targets


def test_the_target_is_on_search_playouts_and_the_handler_is_reported_beside() -> None:
    runs = [
        EngineRun(
            "dungeon_drop",
            playout_rates=[10.0],
            playout_cpu_s=[0.02, 0.02],
            search_cpu_s=[0.01] * 4,
            events_per_playout=[100],
        ),
        EngineRun("crashland", [10.0], [0.001] * 5, [0.0005] * 4, events_per_playout=[30]),
    ]
    figures = {f.key: f for f in engine_figures(runs, noop_rate=0.0)}
    apply_targets(list(figures.values()))
    searched = figures["engine.playouts_cpu.dungeon_drop"]
    assert searched.median == 100.0 and "ROLLOUT" in searched.note
    assert searched.target is not None
    handler = figures["engine.playouts_cpu_handler.dungeon_drop"]
    assert handler.median == 50.0 and handler.target is None and "FULL" in handler.note
    assert figures["engine.playouts_cpu.crashland"].median == 2000.0
    assert figures["engine.playouts_cpu_handler.crashland"].median == 1000.0
    assert "ROLLOUT" not in figures["engine.playouts_cpu.crashland"].note


def test_a_rollout_playout_runs_on_the_rollout_physics() -> None:
    full, rollout = one_playout("dungeon_drop", 3), one_playout("dungeon_drop", 3, rollout=True)
    assert full.outcome is not None and rollout.outcome is not None
    # the same seeds and choices, but settled cubes end elsewhere under ROLLOUT physics
    assert full.events != rollout.events


def test_a_search_playout_plays_every_game_to_its_end_and_repeats_with_its_seed() -> None:
    for game in ("crashland", "drillit", "imperial_miners", "dungeon_drop"):
        first = search_playout(game, 5)
        assert isinstance(first, Outcome) and first.results
        assert search_playout(game, 5) == first


def test_checkouts_from_before_the_search_are_measured_on_a_copy_of_its_loop() -> None:
    """``engine_ab``'s fallback plays whole matches on the contract alone."""
    assert contract_cpu_rate("drillit", seconds=0.0, seed=1) > 0
