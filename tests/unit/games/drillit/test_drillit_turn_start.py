"""Event cards: sub-events in order (Goblin Advance, Fire Intensification, Overheating,
3+ players), then the main event, with the rulebook's worked examples."""

from __future__ import annotations

from typing import Any

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    DiceRolled,
    RollDice,
    RuleViolation,
)
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import DrillitState, SectorGoblins
from services.games.drillit.tunnels import abyss_cell
from services.games.drillit.turn_start import main_event
from tests.unit.games.drillit.drillit_given import card_with, crystals, fires, given, radar

ADVANCE_ONLY_FIRE = card_with(advance="on", intensify="off", main="fire")
INTENSIFY_FIRE = card_with(advance="off", intensify="on", main="fire")
OVERHEAT_FIRE = card_with(advance="off", intensify="on", overheat="on", main="fire")


def next_turn(*board: Any, top: tuple[str, ...], players: int = 3, **setup: Any) -> list[Any]:
    """Events when ann ends turn 1 and bob reveals the top card of turn 2."""
    names = ("ann", "bob", "cid", "dan")[:players]
    state = given(
        *board,
        ev.TurnStarted("ann", 1, 4),
        top=top,
        players=names,
        characters=dict(zip(names, ("pilot", "soldier", "inventor", "robot"), strict=False)),
        rooms=dict(zip(names, (1, 2, 3, 4), strict=False)),
        hands=dict(zip(names, ("P01", "P02", "P03", "P04"), strict=False)),
        **setup,
    )
    return GAME.decide(state, "ann", act.EndTurn())


def after_reveal(events: list[Any]) -> list[Any]:
    index = next(i for i, e in enumerate(events) if isinstance(e, ev.EventCardRevealed))
    return events[index + 1 :]


def test_turn_start_reveals_the_top_card_before_anything_else() -> None:
    events = next_turn(top=(ADVANCE_ONLY_FIRE,))
    assert events[:4] == [
        ev.ActionsEnded("ann"),
        ev.TurnEnded(1),
        ev.TurnStarted("bob", 2, 4),
        ev.EventCardRevealed(ADVANCE_ONLY_FIRE, "fire", 17),
    ]


def test_goblin_advance_worked_example() -> None:
    # Goblin 1 (sector 1) is next to intact Armor; Goblin 2 (sector 2) is far away;
    # Goblin 4 (sector 4) faces Armor already destroyed; Goblin 3 is inside room 3.
    board = [
        radar({1: (0, 1, 0, 0), 2: (0, 0, 0, 1), 3: (1, 0, 0, 0), 4: (0, 1, 0, 0)}),
        ev.ArmorDestroyed(4),
    ]
    events = after_reveal(next_turn(*board, top=(ADVANCE_ONLY_FIRE,)))
    events = [e for e in events if e != ev.SubEventSkipped("Overheating", "switched off")]
    assert events == [
        radar({2: (0, 0, 1, 0), 4: (1, 0, 0, 0)}),
        ev.ArmorDestroyed(1),
        ev.GoblinsReachedCentre(1),
        ev.PermanentDamageTaken(1, "goblins reached the centre"),
        ev.SubEventSkipped("Fire Intensification", "switched off"),
        # Overheating (if on) finds an empty Crystal Storage: nothing happens
    ]


def test_goblin_advance_only_one_goblin_sacrifices_itself_per_armor() -> None:
    events = after_reveal(next_turn(radar({5: (0, 3, 0, 0)}), top=(ADVANCE_ONLY_FIRE,)))
    assert events[:2] == [radar({5: (2, 0, 0, 0)}), ev.ArmorDestroyed(5)]


def test_goblin_advance_each_goblin_reaching_the_centre_is_one_permanent_damage() -> None:
    events = after_reveal(
        next_turn(radar({1: (2, 0, 0, 0), 2: (1, 0, 0, 0)}), top=(ADVANCE_ONLY_FIRE,))
    )
    assert events[1:3] == [
        ev.GoblinsReachedCentre(3),
        ev.PermanentDamageTaken(3, "goblins reached the centre"),
    ]


def test_fire_intensification_worked_example_rooms_2_and_4_room_4_explodes() -> None:
    events = after_reveal(next_turn(fires(2, 1), fires(4, 2), top=(INTENSIFY_FIRE,)))
    assert events[1:4] == [
        ev.FiresIntensified((2, 4)),
        ev.RoomExploded(4),
        ev.PermanentDamageTaken(1, "room 4 exploded"),
    ]


def test_fire_intensification_never_starts_a_fire() -> None:
    events = after_reveal(next_turn(top=(INTENSIFY_FIRE,)))
    assert events[1] == ev.FiresIntensified(())


def test_overheating_worked_example_easy_with_5_crystals() -> None:
    board = [*crystals("blue", 2), *crystals("red", 2), *crystals("yellow", 1)]
    events = after_reveal(next_turn(*board, top=(OVERHEAT_FIRE,), difficulty="easy"))
    assert events[2:4] == [
        ev.CrystalStorageOverheated(5, 4),
        ev.PermanentDamageTaken(1, "the Crystal Storage overheated"),
    ]


def test_overheating_at_the_limit_is_safe() -> None:
    board = crystals("blue", 4)
    events = after_reveal(next_turn(*board, top=(OVERHEAT_FIRE,), difficulty="easy"))
    assert not any(isinstance(e, ev.CrystalStorageOverheated) for e in events)


def test_overheating_limit_follows_the_difficulty() -> None:
    board = crystals("red", 3)
    hard = after_reveal(next_turn(*board, top=(OVERHEAT_FIRE,), difficulty="hard"))
    assert ev.CrystalStorageOverheated(3, 2) in hard


def test_more_gnomes_worse_3_plus_sub_events_apply_only_with_3_players() -> None:
    card = card_with(advance="3+")
    board = radar({1: (0, 0, 1, 0)})
    two = after_reveal(next_turn(board, top=(card,), players=2))
    three = after_reveal(next_turn(board, top=(card,), players=3))
    assert two[0] == ev.SubEventSkipped("Goblin Advance", "needs 3 or more players")
    assert three[0] == radar({1: (0, 1, 0, 0)})


def test_main_event_crystal_is_collected_after_overheating() -> None:
    card = card_with(overheat="on", main="crystal-blue")
    events = after_reveal(next_turn(*crystals("red", 4), top=(card,)))
    assert ev.CrystalFound("blue") in events
    # 4 on Easy is within the limit, so the fifth (found) crystal is kept
    assert not any(isinstance(e, ev.CrystalStorageOverheated) for e in events)


def test_main_event_crystal_found_after_storage_lost_it_all() -> None:
    card = card_with(overheat="on", main="crystal-blue")
    events = after_reveal(next_turn(*crystals("red", 5), top=(card,)))
    overheat = events.index(ev.CrystalStorageOverheated(5, 4))
    assert events.index(ev.CrystalFound("blue")) > overheat
    state = fold_next_turn(*crystals("red", 5), top=(card,))
    assert state.crystals == {"blue": 1, "red": 0, "yellow": 0}


def fold_next_turn(*board: Any, top: tuple[str, ...], **setup: Any) -> DrillitState:
    state = given(*board, ev.TurnStarted("ann", 1, 4), top=top, **setup)
    return GAME.fold(GAME.decide(state, "ann", act.EndTurn()), state)


def test_main_event_blackout_goblin_attack_waits_until_after_the_actions() -> None:
    card = card_with(main="blackout")
    state = fold_next_turn(top=(card,))
    assert state.blackout
    assert GAME.next_step(state) == AwaitingPlayers(("bob",), "actions")
    events = GAME.decide(state, "bob", act.EndTurn())
    assert events == [ev.ActionsEnded("bob")]
    state = GAME.fold(events, state)
    assert GAME.next_step(state) == AwaitingChance(
        RollDice(1, 6, "Goblin attack: the radar sector")
    )
    after = GAME.resolve(state, DiceRolled((3,)))
    assert after[:2] == [ev.AttackDieRolled(3), ev.GoblinsArrived(3, int(_box(card)))]
    assert ev.TurnEnded(2) in after


def _box(card_id: str) -> str:
    return CONTENT.cards[card_id].attack[0]


def test_main_event_trap_no_path_piece_may_be_placed_this_turn() -> None:
    state = fold_next_turn(top=(card_with(main="trap"),))
    state = GAME.fold(GAME.resolve(state, DiceRolled((1,))), state)
    assert state.trap
    assert not any(isinstance(a, act.Excavate) for a in GAME.legal_actions(state, "bob"))
    refused = _refusal(state, "bob", act.Excavate("bob", Hex(2, 0), 0))
    assert refused == "TRAP"


def _refusal(state: DrillitState, player: str, action: Any) -> str:
    try:
        GAME.decide(state, player, action)
    except RuleViolation as exc:
        return exc.code
    raise AssertionError("the action was accepted")


def test_main_event_abyss_opens_next_to_the_path_piece_closest_to_the_exit() -> None:
    # a straight tunnel heading north-east toward exit option 1 at (d, -d)
    board = [
        ev.PathPiecePlaced("ann", "ann", "P01", Hex(2, -2), 1, 0),
        ev.PathPiecePlaced("ann", "bob", "P02", Hex(3, -3), 1, 0),
    ]
    state = given(*board, ev.TurnStarted("ann", 1, 4))
    assert abyss_cell(state) == Hex(4, -4)  # blocks the straight continuation
    card = card_with(main="abyss")
    state = given(*board, ev.TurnStarted("bob", 2, 4), ev.EventCardRevealed(card, "abyss", 17))
    (fact,) = main_event(state, CONTENT.cards[card])
    assert fact == ev.AbyssOpened(Hex(4, -4))
    state = GAME.fold([fact], state)
    assert state.abysses == (Hex(4, -4),) and state.abysses_found == 1


def test_main_event_abyss_opens_toward_the_exit_piece_not_the_other_exit_option() -> None:
    # two tunnels: north-east toward option 1, west toward option 2 (both 2 pieces long)
    board = [
        ev.PathPiecePlaced("ann", "ann", "P01", Hex(2, -2), 1, 0),
        ev.PathPiecePlaced("ann", "bob", "P02", Hex(3, -3), 1, 0),
        ev.PathPiecePlaced("ann", "cid", "P03", Hex(-2, 1), 0, 0),
        ev.PathPiecePlaced("ann", "ann", "P04", Hex(-3, 1), 0, 0),
    ]
    assert abyss_cell(given(*board)) == Hex(4, -4)
    assert abyss_cell(given(*board, exit="2")) == Hex(-4, 1)
    assert abyss_cell(given(*board, ev.PlanBTaken("ann", "2"))) == Hex(-4, 1)


def test_sub_events_resolve_before_the_main_event_and_the_attack() -> None:
    events = after_reveal(next_turn(radar({1: (0, 0, 1, 0)}), top=(ADVANCE_ONLY_FIRE,)))
    assert isinstance(events[0], ev.GoblinsAdvanced)
    assert all(not isinstance(e, ev.FireDieRolled | ev.AttackDieRolled) for e in events)


def test_radar_helper_matches_the_state_shape() -> None:
    state = given(radar({2: (1, 2, 3, 4)}))
    assert state.radar[1] == SectorGoblins(2, (1, 2, 3, 4))


def test_main_event_abyss_before_any_path_piece_opens_next_to_the_tank() -> None:
    cell = abyss_cell(given())
    assert cell is not None and any(n in CONTENT.tank_cells for n in cell.neighbours())
