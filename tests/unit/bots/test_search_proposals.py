"""Which flicks and Pillar moves Dungeon Drop's search plays out.

An ability's templates span the whole table, and most of their draws change nothing. The
game proposes draws ranked by the room each leaves the hero (``dungeon_drop.sampling
.proposals``); the search plays out the best of them and a uniform draw of a few others.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import pytest

from services.bots.levels import level_policy, settings_for
from services.bots.search.budget import Budget
from services.bots.search.determinization import proposals_for, sampler_for
from services.bots.search.rollouts import Search
from services.games.contract import ActionTemplate
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import bots
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.sampling import evaluate, proposals
from services.games.dungeon_drop.table import FLICK_REALS, REAL_SIDES, ROLLOUT, flick
from services.games.registry import get_game
from tests.unit.bots.sampling_kit import Decision, decisions

ENGINE = get_game("dungeon_drop")


def _decision(kind: type, more_than: int = 1) -> Decision:
    """The first decision of seeded greedy matches offering ``kind`` (moves: templates)
    among more than ``more_than`` choices."""
    for seed in range(12):
        for decision in decisions("dungeon_drop", 4, seed):
            first = decision.legal[0]
            example = first.example if isinstance(first, ActionTemplate) else first
            if isinstance(example, kind) and len(decision.legal) > more_than:
                return decision
    raise AssertionError(f"no step offering {kind.__name__}")


def _search(proposed: Any) -> Search:
    settings = settings_for("dungeon_drop", "hard")
    assert settings is not None
    return Search(
        ENGINE,
        sampler_for("dungeon_drop"),
        replace(settings, budget=Budget(iterations=1)),
        seed=3,
        evaluation=evaluate,
        proposals=proposed,
    )


def _room_left(decision: Decision, move: Any) -> float:
    """The hero's best room after the move, worked out here from the rules' own table:
    a Pillar set where it is put, a flick with every die at its middle (as aimed)."""
    view = ENGINE.view(decision.state, decision.player)
    table = bots.table_of(view)
    if isinstance(move, act.MovePillar):
        at = table[move.pillar]
        table[move.pillar] = Placement(move.pillar, move.x, move.y, at.angle)
    else:
        aimed = ((REAL_SIDES + 1) // 2,) * FLICK_REALS
        settled = flick(table, move.cube, move.direction, move.strength, aimed, ROLLOUT)
        table = {p.cube: p for p in settled.placements}
    return bots.best_room(table, bots.seat(view, decision.player), view.ward)[0]


@pytest.mark.parametrize("kind", [act.MovePillar, act.Flick])
def test_the_moves_played_out_are_the_best_proposals_and_a_few_others(kind: type) -> None:
    decision = _decision(kind)
    me = decision.player
    made: list[list[Any]] = []

    def recording(view: Any, player: str, legal: Any, rng: random.Random) -> list[Any]:
        made.append(proposals(view, player, legal, rng))
        return made[-1]

    bot = _search(recording)
    bot(ENGINE.view(decision.state, me), me, decision.legal)
    [proposed] = made
    own, *others = bot.last_candidates
    moves = [c.action for c in others if c.template is not None]
    exact = [c.action for c in others if c.template is None]
    assert exact == ([] if own.action == act.EndAbility() else [act.EndAbility()])
    assert len(others) == bot.settings.max_candidates - 1
    best = len(moves) - bot.settings.uniform_samples
    assert moves[:best] == proposed[:best]
    assert set(moves[best:]) <= set(proposed[best:])
    assert all(c.template is not None and c.template.admits(c.action) for c in others[1:])


@pytest.mark.parametrize("kind", [act.MovePillar, act.Flick])
def test_proposals_come_best_first_by_the_room_they_leave(kind: type) -> None:
    decision = _decision(kind)
    view = ENGINE.view(decision.state, decision.player)
    proposed = proposals(view, decision.player, decision.legal, random.Random(5))
    rooms = [_room_left(decision, move) for move in proposed]
    assert rooms == sorted(rooms, reverse=True)
    # a draw of the search's size without the ranking leaves far less on average
    drawn = random.Random(6).sample(rooms, 14)
    assert sum(rooms[:14]) > sum(drawn)


def test_a_step_without_templates_proposes_nothing() -> None:
    """At a Loot step the proposals are not asked for, and the rooms played out are those
    a search without proposals plays out."""
    decision = _decision(act.LootRoom, 20)
    me = decision.player
    asked: list[Any] = []

    def recording(view: Any, player: str, legal: Any, rng: random.Random) -> list[Any]:
        asked.append(legal)
        return proposals(view, player, legal, rng)

    with_proposals, without = _search(recording), _search(None)
    for bot in (with_proposals, without):
        bot(ENGINE.view(decision.state, me), me, decision.legal)
    assert asked == []
    assert [c.action for c in with_proposals.last_candidates] == [
        c.action for c in without.last_candidates
    ]


def test_a_proposal_no_template_admits_is_refused() -> None:
    decision = _decision(act.MovePillar)
    me = decision.player

    def wrong(view: Any, player: str, legal: Any, rng: random.Random) -> list[Any]:
        return [act.LeaveEmptyHanded()] * 20

    with pytest.raises(ValueError, match="fits none of the step's templates"):
        _search(wrong)(ENGINE.view(decision.state, me), me, decision.legal)


def test_only_dungeon_drop_proposes_and_its_levels_use_it() -> None:
    assert proposals_for("dungeon_drop") is proposals
    assert all(proposals_for(g) is None for g in ("crashland", "drillit", "imperial_miners"))
    hard = level_policy("dungeon_drop", "hard", 1)
    assert isinstance(hard, Search) and hard._proposals is proposals
