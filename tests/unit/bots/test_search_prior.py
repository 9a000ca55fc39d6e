"""Which of a Drillit! seat's actions its search plays out: a dig offers dozens of cells
and turns, and a greedy playout to the end costs ~25 ms, so a decision plays out only the
greedy bot's choice and the others that bot values most (``drillit.sampling.prior``)."""

from __future__ import annotations

from typing import Any

from services.bots.levels import settings_for
from services.bots.search.budget import Budget
from services.bots.search.determinization import prior_for, sampler_for
from services.bots.search.rollouts import Search, SearchSettings
from services.games.drillit.bots import STOP, action_values, greedy_view_policy
from services.games.drillit.state import Phase
from services.games.registry import get_game
from tests.unit.bots.sampling_kit import Decision, decisions

ENGINE = get_game("drillit")
OPTIONS = {"difficulty": "medium", "distance": "medium"}


def _wide_decision(more_than: int) -> Decision:
    for seed in range(5):
        for decision in decisions("drillit", 3, seed, OPTIONS):
            if len(decision.legal) > more_than:
                return decision
    raise AssertionError("no decision with that many actions")


def _played_out(rank: bool) -> tuple[Decision, Any, list[Any]]:
    decision = _wide_decision(20)
    me = decision.player
    settings = SearchSettings(Budget(iterations=1), max_candidates=6, rank_candidates=rank)
    bot = Search(ENGINE, sampler_for("drillit"), settings, seed=3, prior=prior_for("drillit"))
    bot(ENGINE.view(decision.state, me), me, decision.legal)
    own, *others = bot.last_candidates
    assert len(others) == 5
    return decision, own.action, [c.action for c in others]


def _worth(decision: Decision) -> Any:
    view = ENGINE.view(decision.state, decision.player)
    return action_values(view, decision.player, decision.legal)


def test_the_actions_played_out_are_those_the_greedy_bot_values_most() -> None:
    decision, own, played = _played_out(rank=True)
    worth = _worth(decision)
    left = [a for a in decision.legal if a not in played and a != own]
    assert min(worth(a) for a in played) >= max(worth(a) for a in left)


def test_without_the_prior_the_others_are_a_uniform_draw() -> None:
    """The control: 5 of 20-odd actions drawn at random are not the 5 valued most."""
    decision, own, played = _played_out(rank=False)
    worth = _worth(decision)
    best = sorted((a for a in decision.legal if a != own), key=lambda a: -worth(a))
    assert set(played) != set(best[:5])


def test_the_greedy_choice_is_the_action_the_prior_values_most() -> None:
    """The prior is the greedy bot's own valuation: where the bot acts (its best is worth
    an Action Point), it chooses an action of the highest value."""
    checked = 0
    for seed in range(3):
        bot = greedy_view_policy(seed)
        for decision in decisions("drillit", 3, seed, OPTIONS):
            if decision.state.phase in (Phase.SETUP, Phase.TURBO) or len(decision.legal) < 2:
                continue
            view = ENGINE.view(decision.state, decision.player)
            worth = action_values(view, decision.player, decision.legal)
            best = max(worth(a) for a in decision.legal)
            chosen = bot(view, decision.player, decision.legal)
            if best >= STOP + 1.0:
                # an Excavate's value has a random tie-break below 1 in both
                assert worth(chosen) >= best - 1.0
                checked += 1
    assert checked > 20


def test_drillit_hard_plays_out_six_candidates_with_its_prior() -> None:
    settings = settings_for("drillit", "hard")
    assert settings is not None and settings.max_candidates == 6 and settings.rank_candidates
    assert prior_for("drillit") is action_values
    assert prior_for("dungeon_drop") is None and prior_for("crashland") is None


def test_drillit_medium_plays_out_three_candidates_for_longer() -> None:
    """In 0.1 s ``medium`` finished no round of six whole-match playouts (it played as
    greedy): Drillit!'s medium plays out three for 0.3 s; other games keep 0.1 s."""
    medium, hard = settings_for("drillit", "medium"), settings_for("drillit", "hard")
    assert medium is not None and hard is not None
    assert medium.max_candidates == 3 and medium.rank_candidates
    assert medium.budget.cpu_seconds == 0.3 and hard.budget.cpu_seconds == 0.75
    for game in ("crashland", "imperial_miners", "dungeon_drop"):
        other = settings_for(game, "medium")
        assert other is not None and other.budget.cpu_seconds == 0.1
