"""The Fire main event and the Goblin attack, with the rulebook's dice sequences."""

from __future__ import annotations

from typing import Any

import pytest

from services.games.contract import AwaitingChance, AwaitingPlayers, DiceRolled, RollDice
from services.games.drillit import GAME
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.flow import automatic_events
from services.games.drillit.state import DrillitState, Phase
from tests.unit.games.drillit.drillit_given import card_with, fires, given

FIRE_CARD = card_with(advance="off", intensify="on", main="fire")
ATTACK_234 = next(c.id for c in CONTENT.cards.values() if c.attack == ("2", "3", "4"))


def at(phase_events: list[Any], card: str, *board: Any) -> DrillitState:
    """bob's turn 2 with ``card`` revealed, ``board`` then ``phase_events`` folded."""
    return given(
        *board,
        ev.TurnStarted("bob", 2, 4),
        ev.EventCardRevealed(card, CONTENT.cards[card].main, 17),
        *phase_events,
    )


def roll(state: DrillitState, *values: int) -> tuple[DrillitState, list[list[Any]]]:
    batches = []
    for value in values:
        batch = GAME.resolve(state, DiceRolled((value,)))
        batches.append(batch)
        state = GAME.fold(batch, state)
    return state, batches


def test_fire_event_waits_for_a_d6() -> None:
    state = at([], FIRE_CARD)
    assert state.phase == Phase.FIRE
    assert GAME.next_step(state) == AwaitingChance(RollDice(1, 6, "Fire event: the burning room"))


def test_fire_event_roll_4_one_fire_in_room_4() -> None:
    state, batches = roll(at([], FIRE_CARD), 4)
    assert batches == [[ev.FireDieRolled(4), ev.FireStarted(4, 1)]]
    assert state.fires == {4: 1} and state.phase == Phase.ATTACK


def test_fire_event_roll_6_then_5_two_fires_in_room_5() -> None:
    state, batches = roll(at([], FIRE_CARD), 6, 5)
    assert batches == [[ev.FireDieRolled(6)], [ev.FireDieRolled(5), ev.FireStarted(5, 2)]]
    assert state.fires == {5: 2}


def test_fire_event_two_6s_in_a_row_explode_and_end_the_event() -> None:
    state, batches = roll(at([], FIRE_CARD), 6, 6)
    assert batches == [
        [ev.FireDieRolled(6)],
        [
            ev.FireDieRolled(6),
            ev.CriticalFireExploded(),
            ev.PermanentDamageTaken(1, "critical fire explosion"),
        ],
    ]
    assert state.fires == {} and state.permanent_damage == 1 and state.phase == Phase.ATTACK


def test_fire_event_3_fires_in_a_room_explode_regardless_of_criticals() -> None:
    state, batches = roll(at([], FIRE_CARD, fires(2, 2)), 2)
    assert batches[0] == [
        ev.FireDieRolled(2),
        ev.FireStarted(2, 1),
        ev.RoomExploded(2),
        ev.PermanentDamageTaken(1, "room 2 exploded"),
    ]
    assert state.fires == {}


def attack_state(card: str = ATTACK_234, abysses: int = 0) -> DrillitState:
    found = [ev.AbyssOpened(None) for _ in range(abysses)]
    state = at([], card, *found)
    assert state.phase == Phase.ATTACK or CONTENT.cards[card].main == "fire"
    if state.phase == Phase.FIRE:
        state, _ = roll(state, 1)
    return state


def test_goblin_attack_roll_4_two_goblins_in_sector_4() -> None:
    state, batches = roll(attack_state(), 4)
    assert batches == [[ev.AttackDieRolled(4), ev.GoblinsArrived(4, 2)]]
    assert state.goblins(4) == (0, 0, 0, 3)  # joined the setup Goblin on the blue space
    assert GAME.next_step(state) == AwaitingPlayers(("bob",), "actions")


def test_goblin_attack_roll_6_then_5_three_goblins_in_sector_5() -> None:
    _, batches = roll(attack_state(), 6, 5)
    assert batches == [[ev.AttackDieRolled(6)], [ev.AttackDieRolled(5), ev.GoblinsArrived(5, 3)]]


def test_goblin_attack_roll_6_6_3_four_goblins_in_sector_3() -> None:
    _, batches = roll(attack_state(), 6, 6, 3)
    assert batches[-1] == [ev.AttackDieRolled(3), ev.GoblinsArrived(3, 4)]


def test_goblin_attack_three_6s_bring_a_horde_one_goblin_per_outermost_space() -> None:
    state, batches = roll(attack_state(), 6, 6, 6)
    assert batches[-1] == [ev.AttackDieRolled(6), ev.HordeArrived(5)]
    assert all(state.goblins(s)[-1] == 2 for s in CONTENT.sectors)
    assert state.phase == Phase.ACTIONS


@pytest.mark.parametrize(("abysses", "goblins"), [(2, 2), (3, 3), (4, 3), (5, 4)])
def test_goblin_attack_abysses_raise_the_lightest_box(abysses: int, goblins: int) -> None:
    _, batches = roll(attack_state(abysses=abysses), 1)
    assert batches[0][-1] == ev.GoblinsArrived(1, goblins)


def test_goblin_attack_after_5_abysses_one_6_reaches_the_horde() -> None:
    _, batches = roll(attack_state(abysses=5), 6)
    assert batches[0] == [ev.AttackDieRolled(6), ev.HordeArrived(5)]


def test_goblin_attack_a_horde_box_needs_no_more_dice() -> None:
    card = next(c.id for c in CONTENT.cards.values() if c.attack[2] == "horde")
    _, batches = roll(attack_state(card), 6, 6)
    assert batches[-1] == [ev.AttackDieRolled(6), ev.HordeArrived(5)]


def test_goblin_attack_starting_at_a_horde_box_rolls_no_dice() -> None:
    card = next(
        c.id
        for c in CONTENT.cards.values()
        if c.attack[2] == "horde" and c.main not in ("fire", "blackout")
    )
    state = at([], card, *[ev.AbyssOpened(None) for _ in range(5)])
    assert state.phase == Phase.ATTACK
    assert automatic_events(state) == [ev.HordeArrived(5)]
