"""Act clauses: the Race or the Class ability, abilities as data over a few primitives."""

from __future__ import annotations

import pytest

from services.games.contract import (
    ActionTemplate,
    AwaitingChance,
    CardsDrawn,
    DiceRolled,
    DrawCards,
    MalformedAction,
    RuleViolation,
)
from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT, PRIMITIVES
from services.games.dungeon_drop.state import Phase
from services.games.dungeon_drop.table import drop_reals
from tests.unit.games.dungeon_drop.dd_given import at, at_act, looted, room_table

ROOM = act.LootRoom(("pillar01", "pillar02", "pillar03"))


def test_every_ability_is_one_of_a_few_primitives() -> None:
    abilities = [r.ability for r in CONTENT.races.values()]
    abilities += [c.ability for c in CONTENT.classes.values()]
    assert {a.primitive for a in abilities} <= set(PRIMITIVES)
    assert all(a.amount >= 1 for a in abilities)


def test_act_offers_the_race_or_the_class_ability_or_nothing() -> None:
    state = at_act("ann")
    assert state.phase == Phase.ACT
    assert GAME.legal_actions(state, "ann") == (
        act.UseAbility("race"),
        act.UseAbility("class"),
        act.SkipAbility(),
    )


def test_only_one_ability_per_turn() -> None:
    state = at_act("ann")
    state = GAME.fold(GAME.decide(state, "ann", act.UseAbility("class")), state)  # Cleric heals
    with pytest.raises(RuleViolation):
        GAME.decide(state, "ann", act.UseAbility("race"))


def test_bad_ability_source_refused() -> None:
    with pytest.raises(MalformedAction):
        GAME.decide(at_act("ann"), "ann", act.UseAbility("quest"))


def test_heal_has_no_maximum() -> None:
    hurt = looted("ann", "troll01", health=2)
    out = GAME.decide(at_act("ann", past=(hurt,)), "ann", act.UseAbility("class"))  # Cleric: heal 3
    assert out[:2] == [ev.AbilityUsed("ann", "class", "heal", 3), ev.Healed("ann", 3, 5)]


def test_extra_drop_draws_from_the_box_and_drops() -> None:
    state = at_act("ann", classes={"ann": "bard", "bob": "ranger"})
    state = GAME.fold(GAME.decide(state, "ann", act.UseAbility("class")), state)
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and step.request == DrawCards(
        "box", 3, step.request.purpose
    )
    state = GAME.fold(
        GAME.resolve(state, CardsDrawn("box", ("troll01", "crystal01", "bullion01"))), state
    )
    state = GAME.fold(GAME.resolve(state, DiceRolled((400_000,) * drop_reals(3))), state)
    assert {"troll01", "crystal01"} <= set(state.table) | set(state.aside)
    assert state.phase == Phase.LOOT and state.box_left == 33


def test_move_a_pillar_by_hand() -> None:
    state = at_act("ann", races={"ann": "gnome", "bob": "orc"})  # Gnome: move 1 pillar
    state = GAME.fold(GAME.decide(state, "ann", act.UseAbility("race")), state)
    legal = GAME.legal_actions(state, "ann")
    pillars = [a.example.pillar for a in legal if isinstance(a, ActionTemplate)]
    assert pillars == ["pillar01", "pillar02", "pillar03", "pillar04"]
    with pytest.raises(RuleViolation):
        GAME.decide(state, "ann", act.MovePillar("gold01", 100.0, 100.0))
    with pytest.raises(MalformedAction):
        GAME.decide(state, "ann", act.MovePillar("pillar04", 100.0, 1000.0))
    out = GAME.decide(state, "ann", act.MovePillar("pillar04", 100.0, 120.0))
    moved = out[0]
    assert isinstance(moved, ev.PillarMoved)
    p = next(p for p in moved.placements if p.cube == "pillar04")
    assert (p.x, p.y) == pytest.approx((100.0, 120.0))
    assert GAME.fold(out, state).phase == Phase.LOOT


def test_take_one_cube_from_outside_the_room() -> None:
    cubes = (at("gold01", 300, 280), at("bullion01", 600, 100), at("troll01", 650, 100))
    state = at_act("ann", table=room_table(*cubes), classes={"ann": "rogue", "bob": "ranger"})
    state = GAME.fold(GAME.decide(state, "ann", act.UseAbility("class")), state)
    state = GAME.fold(GAME.decide(state, "ann", ROOM), state)
    assert state.phase == Phase.TAKE
    legal = GAME.legal_actions(state, "ann")
    assert act.TakeCube("bullion01") in legal and act.TakeCube("troll01") not in legal
    assert act.TakeCube("pillar04") not in legal
    state = GAME.fold(GAME.decide(state, "ann", act.TakeCube("bullion01")), state)
    assert set(state.stash["ann"]) == {"gold01", "bullion01"}
    assert state.active == "bob"  # the Rogue takes one


def test_take_outside_with_an_amount_takes_up_to_that_many() -> None:
    cubes = (at("bullion01", 600, 100), at("gold02", 650, 100))
    state = at_act(
        "ann", ev.AbilityUsed("ann", "class", "take_outside", 2), table=room_table(*cubes)
    )
    state = GAME.fold(GAME.decide(state, "ann", act.LeaveEmptyHanded()), state)
    state = GAME.fold(GAME.decide(state, "ann", act.TakeCube("bullion01")), state)
    assert state.phase == Phase.TAKE and state.take_left == 1
    state = GAME.fold(GAME.decide(state, "ann", act.SkipTake()), state)
    assert state.stash["ann"] == ("bullion01",) and state.active == "bob"


def test_end_an_ability_early() -> None:
    state = at_act("ann", ev.AbilityUsed("ann", "class", "flick", 3))
    state = GAME.fold(GAME.decide(state, "ann", act.EndAbility()), state)
    assert state.phase == Phase.LOOT


def test_skip_the_act_step() -> None:
    state = GAME.fold(GAME.decide(at_act("ann"), "ann", act.SkipAbility()), at_act("ann"))
    assert state.phase == Phase.LOOT
