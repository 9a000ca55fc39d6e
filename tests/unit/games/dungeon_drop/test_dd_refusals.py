"""Refusals with stable codes, chance outcomes that do not answer the request, and the
box running out."""

from __future__ import annotations

import pytest

from services.games.contract import (
    CardsDrawn,
    DiceRolled,
    MalformedAction,
    RuleViolation,
)
from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.flow import automatic_events
from tests.unit.games.dungeon_drop.dd_given import at, at_act, at_loot, given, room_table


def code(state: object, player: str, action: object) -> str:
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, player, action)  # type: ignore[arg-type]
    return refused.value.code


def test_actions_out_of_their_step_are_refused() -> None:
    assert (
        code(at_act("ann"), "ann", act.LootRoom(("pillar01", "pillar02", "pillar03"))) == "NOT_NOW"
    )
    assert code(at_loot("ann"), "ann", act.Flick("pillar01", 0.0, 0.5)) == "NO_FLICK"
    assert code(at_loot("ann"), "ann", act.MovePillar("pillar01", 1.0, 1.0)) == "NO_MOVE"
    assert code(at_loot("ann"), "ann", act.UseAbility("race")) == "NOT_NOW"
    assert code(at_loot("ann"), "ann", act.TakeCube("gold01")) == "NOT_NOW"
    assert code(at_loot("ann"), "ann", act.PlaceMeeple(1.0, 1.0)) == "NOT_NOW"


def test_unknown_actions_are_refused() -> None:
    # strangers are the command handler's to refuse (tests/unit/games/test_handler_refusals.py)
    with pytest.raises(MalformedAction):
        GAME.decide(at_act("ann"), "ann", "jump")


def test_nobody_acts_while_the_cubes_fall() -> None:
    state = GAME.fold([ev.TurnStarted("ann", 1, 6)], given())
    assert code(state, "ann", act.SkipAbility()) == "NOT_NOW"
    assert GAME.legal_actions(state, "ann") == ()


def test_a_flick_of_a_cube_not_on_the_table_is_refused() -> None:
    state = at_act("ann", ev.AbilityUsed("ann", "class", "flick", 1))
    assert code(state, "ann", act.Flick("gold09", 0.0, 0.5)) == "NOT_ON_TABLE"


def test_chance_outcomes_must_answer_the_request() -> None:
    state = GAME.fold([ev.TurnStarted("ann", 1, 6)], given())
    with pytest.raises(RuleViolation):
        GAME.resolve(state, CardsDrawn("box", ("bullion01",)))  # 6 were asked for
    with pytest.raises(RuleViolation):
        GAME.resolve(state, DiceRolled((3,)))
    with pytest.raises(RuleViolation):
        GAME.resolve(at_act("ann"), DiceRolled((3,)))  # nothing pending


def test_explore_draws_what_is_left_when_the_box_runs_low() -> None:
    state = given(box=2)
    assert automatic_events(state) == [ev.TurnStarted("ann", 1, 2)]


def test_an_empty_box_and_nothing_set_aside_means_straight_to_act() -> None:
    state = GAME.fold([ev.TurnStarted("ann", 1, 0)], given(box=0))
    assert GAME.legal_actions(state, "ann")[0] == act.UseAbility("race")


def test_take_refuses_monsters_and_pillars() -> None:
    cubes = (at("troll01", 600, 100),)
    state = at_loot(
        "ann", ev.AbilityUsed("ann", "class", "take_outside", 1), table=room_table(*cubes)
    )
    state = GAME.fold(GAME.decide(state, "ann", act.LeaveEmptyHanded()), state)
    assert code(state, "ann", act.TakeCube("troll01")) == "NOT_TAKEABLE"
    assert code(state, "ann", act.TakeCube("pillar01")) == "NOT_TAKEABLE"
