"""Act clauses: the Race or the Class ability, abilities as data over a few primitives;
a Pillar moved by hand rests exactly where it is set."""

from __future__ import annotations

import random

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
from services.games.dungeon_drop.placement import Placement, Settled
from services.games.dungeon_drop.rooms import pillars_on, square
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import REAL_SIDES, drop, drop_reals, place
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


def moving_a_pillar(*cubes: Placement) -> DungeonDropState:
    state = at_act("ann", races={"ann": "gnome", "bob": "orc"}, table=room_table(*cubes))
    return GAME.fold(GAME.decide(state, "ann", act.UseAbility("race")), state)


def rest_of(event: ev.PillarMoved | Settled, cube: str) -> Placement:
    return next(p for p in event.placements if p.cube == cube)


def test_a_hand_moved_pillar_rests_exactly_where_it_was_set_pushing_cubes_aside() -> None:
    """House ability (content pack: move_pillar): "A hand-moved Pillar is set down exactly
    (no dice); cubes it overlaps are pushed aside." Set down onto a Gold cube, the Pillar
    rests at the very point, turned as it was, and the Gold is pushed clear of it."""
    state = moving_a_pillar(at("gold01", 500.0, 200.0))
    before = state.table["pillar04"]
    (moved,) = GAME.decide(state, "ann", act.MovePillar("pillar04", 502.5, 201.25))[:1]
    assert isinstance(moved, ev.PillarMoved)
    assert rest_of(moved, "pillar04") == Placement("pillar04", 502.5, 201.25, before.angle)
    gold = rest_of(moved, "gold01")
    assert square(gold).intersection(square(rest_of(moved, "pillar04"))).area < 1.5
    assert (gold.x, gold.y) != (500.0, 200.0)


@pytest.mark.parametrize(
    ("x", "y"), [(0.0, 0.0), (900.0, 600.0), (900.0, 300.0), (450.0, 0.0), (0.0, 600.0)]
)
def test_a_pillar_set_at_the_tables_edge_stays_on_the_table(x: float, y: float) -> None:
    """Any point of the offered range is on the table (a cube whose centre is on the table
    has not fallen off): a Pillar set there, on the edge or in a corner, even onto a Gold
    cube lying just inside, stays exactly there; the Gold is pushed, the Pillar is not."""
    inward = (min(max(x, 4.0), 896.0), min(max(y, 4.0), 596.0))
    state = moving_a_pillar(at("gold01", *inward))
    (template,) = [
        a
        for a in GAME.legal_actions(state, "ann")
        if isinstance(a, ActionTemplate) and a.example.pillar == "pillar04"
    ]
    assert template.admits(act.MovePillar("pillar04", x, y))
    (moved,) = GAME.decide(state, "ann", act.MovePillar("pillar04", x, y))[:1]
    assert "pillar04" not in moved.off_table
    assert (rest_of(moved, "pillar04").x, rest_of(moved, "pillar04").y) == (x, y)


def test_property_a_hand_moved_pillar_never_drifts_over_many_seeded_tables() -> None:
    """Property over 120 seeded dungeon drops: whichever Pillar is set wherever in the
    range (on other cubes, on the edges, anywhere), it rests exactly there, on the table;
    the same move on the same table gives the same result."""
    cubes = CONTENT.setup_cubes(solo=False)
    spec = CONTENT.table
    for seed in range(120):
        rng = random.Random(seed)
        values = tuple(rng.randint(1, REAL_SIDES) for _ in range(drop_reals(len(cubes))))
        table = {p.cube: p for p in drop({}, cubes, values).placements}
        pillar = rng.choice(pillars_on(table))
        if seed % 3 == 0:  # onto another cube
            other = table[rng.choice([c for c in table if c != pillar])]
            x, y = other.x + rng.uniform(-4, 4), other.y + rng.uniform(-4, 4)
        elif seed % 3 == 1:  # on an edge
            x, y = rng.choice(
                [
                    (0.0, rng.uniform(0, spec.height)),
                    (spec.width, rng.uniform(0, spec.height)),
                    (rng.uniform(0, spec.width), 0.0),
                    (rng.uniform(0, spec.width), spec.height),
                ]
            )
        else:
            x, y = rng.uniform(0, spec.width), rng.uniform(0, spec.height)
        settled = place(table, pillar, x, y)
        assert pillar not in settled.off_table, seed
        assert rest_of(settled, pillar) == Placement(pillar, x, y, table[pillar].angle), seed
        assert place(table, pillar, x, y) == settled


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
