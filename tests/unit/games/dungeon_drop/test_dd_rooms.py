"""Loot clauses: a room of 3 Pillars collects every cube within or touching it; never a
Pillar; never the hero's last Health point; monsters, shields, potions."""

from __future__ import annotations

import pytest

from services.games.contract import RuleViolation
from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.loot import weight
from tests.unit.games.dungeon_drop.dd_given import at, at_loot, looted, room_table

ROOM = act.LootRoom(("pillar01", "pillar02", "pillar03"))


def loot(
    *cubes: object, events: tuple[object, ...] = (), past: tuple[object, ...] = ()
) -> ev.RoomLooted:
    state = at_loot("ann", *events, past=past, table=room_table(*cubes))  # type: ignore[arg-type]
    out = GAME.decide(state, "ann", ROOM)
    assert isinstance(out[0], ev.RoomLooted)
    return out[0]


def refusal(*cubes: object, past: tuple[object, ...] = (), action: object = ROOM) -> str:
    state = at_loot("ann", past=past, table=room_table(*cubes))  # type: ignore[arg-type]
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "ann", action)
    assert action not in GAME.legal_actions(state, "ann")
    return refused.value.code


def test_cubes_within_the_room_are_collected() -> None:
    assert loot(at("gold01", 300, 280), at("gem01", 290, 300)).cubes == ("gem01", "gold01")


def test_a_cube_touching_the_edge_is_collected_one_just_outside_is_not() -> None:
    # the bottom edge runs along y = 250; a small cube is 10 mm wide
    got = loot(at("gold01", 300, 245.0), at("gold02", 320, 244.9)).cubes
    assert got == ("gold01",)


def test_a_turned_cube_touching_with_its_corner_is_collected() -> None:
    # turned 45°, the corner reaches 7.07 mm above the centre: 243 + 7.07 > 250
    got = loot(at("gold01", 300, 243.0, 45.0), at("gold02", 320, 243.0, 0.0)).cubes
    assert got == ("gold01",)


def test_the_three_corner_pillars_are_not_collected() -> None:
    assert not any(c.startswith("pillar") for c in loot(at("gold01", 300, 280)).cubes)


def test_a_room_that_would_collect_a_pillar_is_refused() -> None:
    assert refusal(at("pillar05", 300, 280)) == "COLLECTS_PILLAR"


def test_a_room_touching_a_pillar_is_refused() -> None:
    assert refusal(at("pillar05", 300, 245.0)) == "COLLECTS_PILLAR"


def test_three_pillars_in_a_line_are_no_room() -> None:
    line = act.LootRoom(("pillar01", "pillar02", "pillar05"))
    assert refusal(at("pillar05", 450, 250), action=line) == "COLLECTS_PILLAR"


def test_room_needs_three_different_pillars() -> None:
    state = at_loot("ann")
    with pytest.raises(RuleViolation):
        GAME.decide(state, "ann", act.LootRoom(("pillar01", "pillar01", "pillar02")))
    with pytest.raises(RuleViolation):
        GAME.decide(state, "ann", act.LootRoom(("pillar01", "pillar02", "gold01")))


def test_monsters_cost_health() -> None:
    got = loot(at("goblin01", 300, 280), at("gold01", 290, 270))
    assert (got.damage, got.health) == (1, 2)  # the Gnome starts with 3


def test_a_room_that_would_take_the_last_health_point_is_refused() -> None:
    assert refusal(at("dragon01", 300, 280)) == "LAST_HEALTH"  # 3 damage, 3 Health


def test_a_magic_shield_in_the_room_protects() -> None:
    got = loot(at("dragon01", 300, 280), at("shield01", 280, 265))
    assert (got.damage, got.shields_spent, got.health) == (0, 1, 3)


def test_a_shield_blocks_one_monster_the_strongest() -> None:
    got = loot(at("troll01", 300, 280), at("goblin01", 310, 265), at("shield01", 280, 265))
    assert (got.damage, got.shields_spent) == (1, 1)


def test_a_shield_in_the_stash_protects_once() -> None:
    first = loot(at("troll01", 300, 280), past=(looted("ann", "shield01", health=3),))
    assert (first.damage, first.shields_spent) == (0, 1)
    second = loot(
        at("troll02", 300, 280),
        past=(looted("ann", "shield01", health=3), first),
    )
    assert (second.damage, second.health) == (2, 1)


def test_a_shielded_hero_can_go_for_the_dragon() -> None:
    got = loot(at("dragon01", 300, 280), past=(looted("ann", "shield01", health=3),))
    assert got.health == 3


def test_potions_heal_before_monsters_strike() -> None:
    hurt = looted("ann", "goblin02", health=2)
    got = loot(at("troll01", 300, 280), at("potion01", 290, 265), past=(hurt,))
    assert (got.healed, got.damage, got.health) == (1, 2, 1)
    assert refusal(at("troll01", 300, 280), past=(hurt,)) == "LAST_HEALTH"


def test_potions_heal_even_above_the_starting_health() -> None:
    assert loot(at("potion01", 300, 280)).health == 4  # the Gnome starts with 3


def test_ward_makes_monsters_cost_nothing_this_turn() -> None:
    ward = ev.AbilityUsed("ann", "race", "ward", 1)
    got = loot(at("dragon01", 300, 280), events=(ward,))
    assert (got.damage, got.health) == (0, 3)


def test_collected_cubes_leave_the_table_for_the_stash_monsters_weigh_nothing() -> None:
    state = at_loot("ann", table=room_table(at("goblin01", 300, 280), at("gold01", 290, 270)))
    state = GAME.fold(GAME.decide(state, "ann", ROOM), state)
    assert set(state.stash["ann"]) == {"goblin01", "gold01"}
    assert "gold01" not in state.table and "pillar01" in state.table
    assert weight(state, "ann") == 1
    assert state.last_room == ("pillar01", "pillar02", "pillar03")


def test_looting_ends_the_turn_and_the_next_hero_explores() -> None:
    state = at_loot("ann", table=room_table(at("gold01", 300, 280)))
    out = GAME.decide(state, "ann", ROOM)
    assert [type(e) for e in out] == [ev.RoomLooted, ev.TurnEnded, ev.TurnStarted]
    assert out[2].player == "bob"


def test_legal_rooms_are_listed_with_an_empty_handed_choice() -> None:
    state = at_loot("ann", table=room_table(at("gold01", 300, 280)))
    legal = GAME.legal_actions(state, "ann")
    assert ROOM in legal and legal[-1] == act.LeaveEmptyHanded()
    for room in legal[:-1]:
        assert isinstance(GAME.decide(state, "ann", room)[0], ev.RoomLooted)
    assert GAME.legal_actions(state, "bob") == ()
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "bob", ROOM)
    assert refused.value.code == "NOT_YOUR_TURN"
