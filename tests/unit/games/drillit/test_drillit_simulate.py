"""The in-process simulation: seeded, deterministic, reported per cause of defeat."""

from __future__ import annotations

import pytest

from services.games.contract import MalformedAction
from services.games.drillit.simulate import SimulationReport, simulate


def test_greedy_bot_wins_clearly_more_on_easy_than_on_hard() -> None:
    # a fixed seed set: deterministic, not timed
    easy = simulate(24, "easy", "medium", "greedy", seed=1000)
    hard = simulate(24, "hard", "medium", "greedy", seed=1000)
    assert easy.wins >= hard.wins + 4, (easy, hard)


def test_simulation_reports_win_rate_turns_causes_and_progress() -> None:
    seen: list[int] = []
    report = simulate(4, "medium", "short", "random", players=2, seed=3, progress=seen.append)
    assert seen == [1, 2, 3, 4]
    assert isinstance(report, SimulationReport) and report.games == 4
    assert report.wins + sum(report.defeat_causes.values()) == 4
    assert report.win_rate == report.wins / 4
    assert 1 <= report.mean_turns <= 19
    assert simulate(4, "medium", "short", "random", players=2, seed=3) == report


def test_simulation_refuses_unknown_bots_and_options() -> None:
    with pytest.raises(MalformedAction):
        simulate(1, "easy", "short", "clever")
    with pytest.raises(MalformedAction):
        simulate(1, "brutal", "short", "greedy")
