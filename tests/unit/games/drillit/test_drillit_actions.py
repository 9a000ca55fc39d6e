"""Actions: movement, attacks, repairs, fires, excavation, crystals, characters, and the
Path piece refill after the actions."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import (
    AwaitingChance,
    CardsDrawn,
    DrawCards,
    MalformedAction,
    RuleViolation,
)
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import DrillitState, Phase
from tests.unit.games.drillit.drillit_given import crystals, fires, given, on_turn, radar

EAST = Hex(2, 0)  # touches the Tank; a straight piece turned 0 runs east-west


def refusal(state: DrillitState, player: str, action: Any) -> RuleViolation:
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, player, action)
    return refused.value


def test_not_your_turn_is_refused() -> None:
    error = refusal(on_turn("ann"), "bob", act.EndTurn())
    assert error.code == "NOT_YOUR_TURN" and error.message == "It is ann's turn."


# --- movement --------------------------------------------------------------------------


def test_movement_to_an_adjacent_room_costs_1() -> None:
    assert GAME.decide(on_turn("ann"), "ann", act.Move(2)) == [ev.GnomeMoved("ann", 2, 1)]
    assert GAME.decide(on_turn("ann"), "ann", act.Move(0)) == [ev.GnomeMoved("ann", 0, 1)]


def test_movement_via_the_centre_reaches_any_room_with_2_points() -> None:
    assert GAME.decide(on_turn("ann"), "ann", act.Move(3)) == [ev.GnomeMoved("ann", 3, 2)]


def test_movement_at_most_2_gnomes_in_a_room() -> None:
    state = on_turn("ann", rooms={"ann": 1, "bob": 2, "cid": 2})
    error = refusal(state, "ann", act.Move(2))
    assert error.code == "ROOM_FULL" and "already holds 2 Gnomes" in error.message
    assert act.Move(2) not in GAME.legal_actions(state, "ann")


def test_movement_may_pass_through_a_full_room() -> None:
    # the centre is full, yet ann walks through it (or around) to room 3
    state = on_turn(
        "ann",
        players=("ann", "bob", "cid", "dan"),
        characters={"ann": "pilot", "bob": "soldier", "cid": "inventor", "dan": "mechanic"},
        rooms={"ann": 1, "bob": 0, "cid": 0, "dan": 4},
        hands={"ann": "P01", "bob": "P02", "cid": "P03", "dan": "P04"},
    )
    assert GAME.decide(state, "ann", act.Move(3)) == [ev.GnomeMoved("ann", 3, 2)]


def test_movement_needs_the_action_points() -> None:
    state = given(ev.TurnStarted("ann", 1, 1))
    assert refusal(state, "ann", act.Move(3)).code == "NO_ACTION_POINTS"


def test_robot_moves_to_any_room_for_1_and_carries_a_colleague() -> None:
    characters = {"ann": "robot", "bob": "soldier", "cid": "inventor"}
    state = on_turn("ann", characters=characters, rooms={"ann": 1, "bob": 1, "cid": 3})
    assert GAME.decide(state, "ann", act.Move(4)) == [ev.GnomeMoved("ann", 4, 1)]
    assert GAME.decide(state, "ann", act.Carry(4, "bob")) == [ev.GnomeCarried("ann", "bob", 4, 1)]
    assert refusal(state, "ann", act.Carry(4, "cid")).code == "NOT_IN_YOUR_ROOM"
    assert refusal(state, "ann", act.Carry(3, "bob")).code == "ROOM_FULL"
    assert refusal(on_turn("ann"), "ann", act.Carry(4, "bob")).code == "NOT_THE_ROBOT"


# --- attacks ---------------------------------------------------------------------------


def test_attack_aligned_with_the_radar_sector_removes_one_goblin() -> None:
    state = on_turn("ann")  # ann in room 1 faces sector 1, whose blue space holds a Goblin
    assert GAME.decide(state, "ann", act.Attack((3,))) == [ev.GoblinsDefeated("ann", 1, (3,), 1)]
    assert GAME.legal_actions(state, "ann").count(act.Attack((3,))) == 1


def test_attack_goblin_inside_the_tank_from_the_same_room() -> None:
    state = on_turn("ann", radar({1: (1, 0, 0, 0)}))
    assert GAME.decide(state, "ann", act.Attack((0,))) == [ev.GoblinsDefeated("ann", 1, (0,), 1)]


def test_attack_never_from_the_centre() -> None:
    state = on_turn("ann", rooms={"ann": 0, "bob": 2, "cid": 3})
    error = refusal(state, "ann", act.Attack((3,)))
    assert error.code == "IN_CENTRE" and "centre" in error.message


def test_attack_needs_a_goblin_there() -> None:
    assert refusal(on_turn("ann"), "ann", act.Attack((1,))).code == "NO_GOBLIN"


def test_attack_one_goblin_per_attack_except_the_soldier() -> None:
    board = radar({1: (0, 1, 0, 1), 2: (0, 1, 0, 1)})
    with pytest.raises(MalformedAction):
        GAME.decide(on_turn("ann", board), "ann", act.Attack((1, 3)))
    soldier = on_turn("bob", board)
    assert GAME.decide(soldier, "bob", act.Attack((1, 3))) == [
        ev.GoblinsDefeated("bob", 2, (1, 3), 1)
    ]


# --- repairs and fires -----------------------------------------------------------------


def test_repair_returns_the_armor_from_the_life_track_for_1() -> None:
    state = on_turn("ann", ev.ArmorDestroyed(1))
    assert state.damage == 1
    events = GAME.decide(state, "ann", act.Repair())
    assert events == [ev.ArmorRepaired("ann", 1, 1)]
    assert GAME.fold(events, state).damage == 0
    assert refusal(on_turn("ann"), "ann", act.Repair()).code == "NOTHING_TO_REPAIR"


def test_mechanic_one_armor_repair_per_turn_costs_no_action_point() -> None:
    characters = {"ann": "mechanic", "bob": "soldier", "cid": "inventor"}
    state = on_turn("ann", ev.ArmorDestroyed(1), ev.ArmorDestroyed(2), characters=characters)
    first = GAME.decide(state, "ann", act.Repair())
    assert first == [ev.ArmorRepaired("ann", 1, 0)]
    state = GAME.fold([*first, *GAME.decide(GAME.fold(first, state), "ann", act.Move(2))], state)
    assert GAME.decide(state, "ann", act.Repair()) == [ev.ArmorRepaired("ann", 2, 1)]


def test_extinguish_worked_example_one_fire_in_room_4_two_in_room_5() -> None:
    state = on_turn("ann", fires(4, 1), fires(5, 2), rooms={"ann": 4, "bob": 2, "cid": 3})
    produced = []
    for action in (act.Extinguish(), act.Move(5), act.Extinguish(), act.Extinguish()):
        events = GAME.decide(state, "ann", action)
        produced += events
        state = GAME.fold(events, state)
    assert produced == [
        ev.FireExtinguished("ann", 4, 1),
        ev.GnomeMoved("ann", 5, 1),
        ev.FireExtinguished("ann", 5, 1),
        ev.FireExtinguished("ann", 5, 1),
    ]
    assert state.fires == {} and state.action_points == 0
    assert refusal(state, "ann", act.Extinguish()).code == "NO_FIRE"


# --- excavation ------------------------------------------------------------------------


def test_excavate_own_piece_collects_a_crystal_of_its_colour() -> None:
    events = GAME.decide(on_turn("ann"), "ann", act.Excavate("ann", EAST, 0))
    assert events == [
        ev.PathPiecePlaced("ann", "ann", "P01", EAST, 0, 1),
        ev.CrystalCollected("blue"),
    ]


def test_excavate_may_touch_the_tank_but_never_overlap_it() -> None:
    error = refusal(on_turn("ann"), "ann", act.Excavate("ann", Hex(1, 0), 0))
    assert error.code == "BAD_PLACEMENT" and "never over it" in error.message


def test_excavate_must_connect_to_the_tunnels() -> None:
    assert refusal(on_turn("ann"), "ann", act.Excavate("ann", Hex(4, 0), 0)).code == (
        "BAD_PLACEMENT"
    )
    # a straight piece turned 1 at (2, 0) runs north-east/south-west: no opening to the Tank
    assert refusal(on_turn("ann"), "ann", act.Excavate("ann", EAST, 1)).code == "BAD_PLACEMENT"


def test_excavate_a_piece_must_fit_its_neighbours() -> None:
    placed = ev.PathPiecePlaced("ann", "ann", "P01", EAST, 0, 0)  # open to the east
    state = on_turn("bob", placed, hands={"bob": "P19", "cid": "P03"})
    # the sharp curve P19 (edges 0 and 1) turned 3 opens west (3) into the tunnel
    assert GAME.decide(state, "bob", act.Excavate("bob", Hex(3, 0), 3))[0].cell == Hex(3, 0)
    # turned 1 it opens on edges 1 and 2, a wall against the tunnel's open end
    assert refusal(state, "bob", act.Excavate("bob", Hex(3, 0), 1)).code == "BAD_PLACEMENT"


def test_excavate_a_colleagues_piece_only_in_the_same_room() -> None:
    state = on_turn("bob")  # bob (Soldier) in room 2, cid in room 3
    error = refusal(state, "bob", act.Excavate("cid", EAST, 0))
    assert error.code == "NOT_SAME_ROOM"
    same = on_turn("bob", rooms={"ann": 1, "bob": 3, "cid": 3})
    assert GAME.decide(same, "bob", act.Excavate("cid", EAST, 0))[0] == ev.PathPiecePlaced(
        "bob", "cid", "P03", EAST, 0, 1
    )


def test_pilot_places_other_players_pieces_from_any_room() -> None:
    state = on_turn("ann")  # ann is the Pilot in room 1; cid is in room 3
    assert GAME.decide(state, "ann", act.Excavate("cid", EAST, 0))[1] == ev.CrystalCollected(
        "yellow"
    )


def test_mechanic_places_the_robots_piece_with_the_last_action_point() -> None:
    characters = {"ann": "mechanic", "bob": "robot", "cid": "soldier"}
    state = given(
        ev.TurnStarted("ann", 1, 1), characters=characters, rooms={"ann": 2, "bob": 2, "cid": 4}
    )
    legal = GAME.legal_actions(state, "ann")
    assert act.Excavate("bob", EAST, 0) in legal and act.Excavate("ann", EAST, 0) in legal
    assert act.Excavate("cid", EAST, 0) not in legal
    events = GAME.decide(state, "ann", act.Excavate("bob", EAST, 0))
    assert events[0] == ev.PathPiecePlaced("ann", "bob", "P02", EAST, 0, 1)
    state = GAME.fold(events, state)
    assert refusal(state, "ann", act.Excavate("ann", Hex(-2, 0), 0)).code == "NO_ACTION_POINTS"


def test_after_the_actions_everyone_without_a_path_piece_draws_one() -> None:
    state = on_turn("ann")
    state = GAME.fold(GAME.decide(state, "ann", act.Excavate("ann", EAST, 0)), state)
    state = GAME.fold(GAME.decide(state, "ann", act.Excavate("bob", Hex(-2, 0), 0)), state)
    state = GAME.fold(GAME.decide(state, "ann", act.EndTurn()), state)
    step = GAME.next_step(state)
    assert step == AwaitingChance(DrawCards("paths", 2, "players without a Path piece draw one"))
    events = GAME.resolve(state, CardsDrawn("paths", ("P30", "P31")))
    assert events[:3] == [
        ev.PathPiecesDrawn({"ann": "P30", "bob": "P31"}, 31),
        ev.TurnEnded(1),
        ev.TurnStarted("bob", 2, 4),
    ]


# --- crystals --------------------------------------------------------------------------


def test_crystals_blue_puts_out_all_fires_of_one_room_from_anywhere() -> None:
    state = on_turn("ann", fires(4, 2), fires(5, 1), *crystals("blue", 2))
    assert GAME.decide(state, "ann", act.UseBlueOnFires(4)) == [
        ev.CrystalsSpent("ann", "blue", 2, 1),
        ev.FiresPutOut(4, 2),
    ]


def test_crystals_blue_repairs_all_punctured_armor_never_permanent_damage() -> None:
    board = [ev.ArmorDestroyed(2), ev.ArmorDestroyed(5), ev.PermanentDamageTaken(1, "test")]
    state = on_turn("ann", *board, *crystals("blue", 2))
    events = GAME.decide(state, "ann", act.UseBlueOnArmor())
    assert events == [ev.CrystalsSpent("ann", "blue", 2, 1), ev.ArmorRestored((2, 5))]
    after = GAME.fold(events, state)
    assert after.armor_destroyed == () and after.permanent_damage == 1


def test_crystals_red_bombs_one_sector_never_goblins_inside() -> None:
    state = on_turn("ann", radar({4: (1, 1, 0, 2)}), *crystals("red", 3))
    events = GAME.decide(state, "ann", act.UseRedBomb(4))
    assert events == [ev.CrystalsSpent("ann", "red", 2, 1), ev.SectorBombed(4, 3)]
    assert GAME.fold(events, state).goblins(4) == (1, 0, 0, 0)
    inside_only = on_turn("ann", radar({4: (1, 0, 0, 0)}), *crystals("red", 2))
    assert refusal(inside_only, "ann", act.UseRedBomb(4)).code == "NO_GOBLINS"


def test_crystals_need_two_of_one_colour() -> None:
    state = on_turn("ann", fires(4, 1), *crystals("blue", 1), *crystals("red", 1))
    error = refusal(state, "ann", act.UseBlueOnFires(4))
    assert error.code == "NOT_ENOUGH_CRYSTALS"
    assert "need 2 blue Crystals" in error.message


def test_inventor_uses_crystal_abilities_without_action_points() -> None:
    state = given(fires(4, 1), *crystals("blue", 2), ev.TurnStarted("cid", 1, 0))
    assert GAME.decide(state, "cid", act.UseBlueOnFires(4))[0] == ev.CrystalsSpent(
        "cid", "blue", 2, 0
    )


def test_crystals_yellow_turbo_lays_two_random_pieces_in_a_row_mining_nothing() -> None:
    state = on_turn("ann", *crystals("yellow", 2))
    events = GAME.decide(state, "ann", act.UseYellowTurbo())
    assert events == [ev.CrystalsSpent("ann", "yellow", 2, 1), ev.TurboStarted(2)]
    state = GAME.fold(events, state)
    assert GAME.next_step(state) == AwaitingChance(
        DrawCards("paths", 1, "Turbo: a random Path piece")
    )
    state = GAME.fold(GAME.resolve(state, CardsDrawn("paths", ("P04",))), state)
    assert state.phase == Phase.TURBO and state.turbo_piece == "P04"
    assert refusal(state, "ann", act.EndTurn()).code == "TURBO"
    first = GAME.decide(state, "ann", act.PlaceTurboPiece(EAST, 0))
    assert first == [ev.TurboPiecePlaced("P04", EAST, 0)]
    state = GAME.fold(first, state)
    state = GAME.fold(GAME.resolve(state, CardsDrawn("paths", ("P05",))), state)
    # the second piece continues the first one, not any tunnel
    assert refusal(state, "ann", act.PlaceTurboPiece(Hex(-2, 0), 0)).code == "BAD_PLACEMENT"
    assert set(GAME.legal_actions(state, "ann")) == {act.PlaceTurboPiece(Hex(3, 0), 0)}
    second = GAME.decide(state, "ann", act.PlaceTurboPiece(Hex(3, 0), 0))
    state = GAME.fold(second, state)
    assert state.phase == Phase.ACTIONS and state.crystals == {"blue": 0, "red": 0, "yellow": 0}
    assert state.path_pile == 36 - 3 - 2


def test_crystals_yellow_turbo_is_blocked_by_a_trap() -> None:
    state = given(*crystals("yellow", 2), ev.TurnStarted("ann", 1, 4), ev.TrapSet())
    assert refusal(state, "ann", act.UseYellowTurbo()).code == "TRAP"


def test_legal_actions_only_for_the_active_player() -> None:
    state = on_turn("ann")
    assert GAME.legal_actions(state, "bob") == ()
    legal = GAME.legal_actions(state, "ann")
    assert legal[-1] == act.EndTurn()
    for action in legal:
        GAME.decide(state, "ann", action)


def test_excavate_equivalent_rotations_are_one_placement() -> None:
    # a straight piece turned 3 is the same as turned 0: recorded (and listed) once
    events = GAME.decide(on_turn("ann"), "ann", act.Excavate("ann", EAST, 3))
    assert events[0] == ev.PathPiecePlaced("ann", "ann", "P01", EAST, 0, 1)
    legal = GAME.legal_actions(on_turn("ann"), "ann")
    assert act.Excavate("ann", EAST, 0) in legal and act.Excavate("ann", EAST, 3) not in legal
    with pytest.raises(MalformedAction):
        GAME.decide(on_turn("ann"), "ann", act.Excavate("ann", EAST, 6))
