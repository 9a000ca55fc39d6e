"""A search bot plays its rollouts on the game's rollout engine (``Game.rollout_engine``):
Dungeon Drop's playouts, and the greedy bots' trial flicks in them, are simulated with
the ROLLOUT physics, while the bot's own choice from the real view (the candidate the
search must beat) is the match engine's, FULL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from services.bots.search.budget import Budget
from services.bots.search.determinization import sampler_for
from services.bots.search.rollouts import Search, SearchSettings
from services.games.contract import ViewPolicy
from services.games.dungeon_drop import game as dd_game
from services.games.dungeon_drop.bots import greedy_view_policy
from services.games.dungeon_drop.placement import Physics
from services.games.dungeon_drop.table import FULL, ROLLOUT
from services.games.registry import get_game
from tests.unit.bots.sampling_kit import decisions


def _counting(calls: list[str], name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    def counted(*args: Any) -> Any:
        calls.append(name)
        return method(*args)

    return counted


def test_dungeon_drop_playouts_run_on_the_rollout_physics(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = get_game("dungeon_drop")
    decision = next(d for d in decisions("dungeon_drop", 2, 3) if len(d.legal) > 1)
    rollout = engine.rollout_engine()
    assert rollout is not engine
    calls: list[str] = []
    for name, target in (("full", engine), ("rollout", rollout)):
        for method in ("decide_folded", "resolve_folded"):
            monkeypatch.setattr(target, method, _counting(calls, name, getattr(target, method)))
    physics: list[Physics] = []

    def greedy(seed: int, chosen: Physics) -> ViewPolicy:
        physics.append(chosen)
        return greedy_view_policy(seed, chosen)

    monkeypatch.setattr(dd_game, "greedy_view_policy", greedy)

    settings = SearchSettings(budget=Budget(iterations=1), max_candidates=2)
    bot = Search(engine, sampler_for("dungeon_drop"), settings, seed=5)
    bot(engine.view(decision.state, decision.player), decision.player, decision.legal)

    assert bot.last_rounds == 1
    assert "rollout" in calls and "full" not in calls
    assert physics[0] == FULL  # the bot's own choice, from the real view
    assert physics[1:] and set(physics[1:]) == {ROLLOUT}  # every seat of the playouts
