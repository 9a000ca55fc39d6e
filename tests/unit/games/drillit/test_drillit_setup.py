"""Setup: options, Path pieces, characters, the Event Deck's construction, start rooms,
who starts, and the first turn."""

from __future__ import annotations

import pytest

from services.games.chance import SeededChance
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    DiceRolled,
    MalformedAction,
    RollDice,
    RuleViolation,
    ShuffleDeck,
)
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.content import CONTENT
from services.games.drillit.state import DrillitState, Phase
from services.games.playout import seeds_for
from tests.unit.games.drillit.drillit_given import given, setup_events


def run_setup(players: tuple[str, ...], seed: int, **options: str) -> DrillitState:
    """Resolve every setup chance node with seeded chance, stopping at a player choice."""
    dice, decks = seeds_for(seed)
    chance = SeededChance(f"setup-{seed}", dice, decks)
    state = GAME.fold(GAME.setup(players, options))
    while True:
        step = GAME.next_step(state)
        if not isinstance(step, AwaitingChance):
            return state
        state = GAME.fold(GAME.resolve(state, chance.resolve(step.request)), state)


def test_options_difficulty_sets_the_crystal_storage_limit() -> None:
    for difficulty, limit in (("easy", 4), ("medium", 3), ("hard", 2)):
        (event,) = GAME.setup(["a", "b"], {"difficulty": difficulty, "distance": "long"})
        assert event.storage_limit == limit and event.distance == "long"


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        ({"difficulty": "nightmare"}, "difficulty must be one of easy, medium, hard"),
        ({"distance": "far"}, "distance must be one of short, medium, long"),
        ({"exit": "3"}, "exit must be one of 1, 2"),
        ({"plan_b": "twice"}, "plan_b must be one of allowed, off"),
        ({"player_count_variant": "any"}, "player_count_variant must be one of box, house"),
        ({"colour": "red"}, "Unknown option"),
    ],
)
def test_options_bad_values_are_malformed(options: dict[str, str], fragment: str) -> None:
    with pytest.raises(MalformedAction) as refused:
        GAME.setup(["a", "b"], options)
    assert fragment in refused.value.message


def test_options_every_option_is_declared_with_its_default_and_choices() -> None:
    declared = {o.name: (o.default, o.choices) for o in GAME.options}
    assert declared == {
        "difficulty": ("easy", ("easy", "medium", "hard")),
        "distance": ("short", ("short", "medium", "long")),
        "exit": ("1", ("1", "2")),
        "plan_b": ("allowed", ("allowed", "off")),
        "player_count_variant": ("box", ("box", "house")),
    }


def test_exit_determined_by_the_players_at_the_start_of_the_game() -> None:
    # given no choice, the Exit piece goes on option 1 and Plan B stays open
    (default,) = GAME.setup(["a", "b"], {})
    assert (default.exit, default.plan_b) == ("1", True)
    # when the players choose option 2 and no Plan B, then the match records it
    (chosen,) = GAME.setup(["a", "b"], {"exit": "2", "plan_b": "off"})
    assert (chosen.exit, chosen.plan_b) == ("2", False)
    state = GAME.fold([chosen])
    assert (state.exit, state.plan_b) == ("2", False)
    assert GAME.view(state, "a").exit_piece == CONTENT.layouts["short"].exits["2"]


def test_players_two_to_four_as_the_box_says() -> None:
    assert (GAME.min_players, GAME.max_players) == (2, 4)
    for count in (2, 3, 4):
        (event,) = GAME.setup([f"p{i}" for i in range(count)], {})
        assert len(event.players) == count
    with pytest.raises(MalformedAction):
        GAME.setup(["a", "a"], {})


@pytest.mark.parametrize("count", [1, 5])
def test_players_one_or_five_refused_without_the_house_variant(count: int) -> None:
    with pytest.raises(MalformedAction) as refused:
        GAME.setup([f"p{i}" for i in range(count)], {})
    assert refused.value.code == "BAD_PLAYERS"
    assert "2 to 4 players" in refused.value.message
    assert "player_count_variant=house" in refused.value.message


@pytest.mark.parametrize("count", [1, 5])
def test_players_house_variant_allows_one_or_five(count: int) -> None:
    options = {"player_count_variant": "house"}
    (event,) = GAME.setup([f"p{i}" for i in range(count)], options)
    assert len(event.players) == count
    assert CONTENT.player_counts["house"] == (1, 5)


def test_players_never_more_than_the_five_characters_even_in_the_house_variant() -> None:
    with pytest.raises(MalformedAction) as refused:
        GAME.setup([f"p{i}" for i in range(6)], {"player_count_variant": "house"})
    assert "1 to 5 players" in refused.value.message


def test_setup_five_goblins_one_on_each_blue_outermost_space() -> None:
    state = GAME.fold(GAME.setup(["a", "b"], {}))
    assert all(s.spaces == (0, 0, 0, 1) for s in state.radar)
    assert state.armor_destroyed == () and state.damage == 0


def test_setup_deals_one_path_piece_each_and_a_random_character_each() -> None:
    state = run_setup(("a", "b", "c"), seed=7)
    assert set(state.hands) == {"a", "b", "c"}
    assert state.path_pile == 36 - 3
    assert len(set(state.characters.values())) == 3
    assert set(state.characters.values()) <= set(CONTENT.characters)


@pytest.mark.parametrize("seed", range(12))
def test_event_deck_18_cards_3_on_top_then_trios_with_one_abyss_each(seed: int) -> None:
    state = run_setup(("a", "b"), seed=seed)
    deck = state.event_deck
    assert len(deck) == 18 and sorted(deck) == sorted(CONTENT.cards)
    abyss = [CONTENT.cards[c].main == "abyss" for c in deck]
    assert not any(abyss[:3])
    for start in range(3, 18, 3):
        assert sum(abyss[start : start + 3]) == 1


def test_event_deck_trios_are_actually_shuffled() -> None:
    positions = set()
    for seed in range(20):
        deck = run_setup(("a", "b"), seed=seed).event_deck
        positions.add(next(i for i, c in enumerate(deck) if CONTENT.cards[c].main == "abyss"))
    assert positions == {3, 4, 5}


def test_event_deck_construction_goes_through_the_decks_service() -> None:
    state = GAME.fold(GAME.setup(["a", "b"], {}))
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and isinstance(step.request, ShuffleDeck)
    assert step.request.deck == "paths"


def test_start_room_is_the_d6_value() -> None:
    events = setup_events()[:-7]  # before the start rooms
    state = GAME.fold(events)
    step = GAME.next_step(state)
    assert step == AwaitingChance(RollDice(1, 6, "start room of ann"))
    assert GAME.resolve(state, DiceRolled((4,)))[:2] == [
        ev.StartRoomRolled("ann", 4),
        ev.GnomePlaced("ann", 4),
    ]


def test_start_room_a_6_lets_the_player_choose() -> None:
    state = GAME.fold(setup_events()[:-7])
    state = GAME.fold(GAME.resolve(state, DiceRolled((6,))), state)
    assert GAME.next_step(state) == AwaitingPlayers(("ann",), "choose-start-room")
    assert GAME.legal_actions(state, "ann") == tuple(act.ChooseStartRoom(r) for r in range(1, 6))
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, "bob", act.ChooseStartRoom(2))
    assert refused.value.code == "NOT_YOUR_CHOICE"
    assert GAME.decide(state, "ann", act.ChooseStartRoom(5))[0] == ev.GnomePlaced("ann", 5)


def test_start_room_full_room_is_rolled_again() -> None:
    events = setup_events(players=("a", "b", "c"), rooms={"a": 2, "b": 2, "c": 2})[:-3]
    state = GAME.fold(events)
    assert GAME.resolve(state, DiceRolled((2,))) == [ev.StartRoomRolled("c", 2)]


def test_who_starts_the_player_left_of_the_pilot() -> None:
    events = setup_events(characters={"ann": "soldier", "bob": "pilot", "cid": "robot"})[:-1]
    state = GAME.fold(events)
    produced = GAME.resolve(GAME.fold(events[:-1]), DiceRolled((events[-1].room,)))
    assert ev.StartingPlayerChosen("cid", "left of the Pilot") in produced
    assert ev.TurnStarted("cid", 1, 4) in produced
    assert state.phase == Phase.SETUP


def test_who_starts_left_of_the_pilot_wraps_around_the_table() -> None:
    events = setup_events(characters={"ann": "soldier", "bob": "robot", "cid": "pilot"})[:-1]
    produced = GAME.resolve(GAME.fold(events[:-1]), DiceRolled((events[-1].room,)))
    assert ev.StartingPlayerChosen("ann", "left of the Pilot") in produced


def test_who_starts_without_a_pilot_the_players_decide() -> None:
    events = setup_events(characters={"ann": "soldier", "bob": "robot", "cid": "mechanic"})[:-1]
    state = GAME.fold(events)
    assert GAME.next_step(state) == AwaitingPlayers(("ann",), "choose-starting-player")
    assert len(GAME.legal_actions(state, "ann")) == 3
    assert GAME.decide(state, "ann", act.ChooseStartingPlayer("bob")) == [
        ev.StartingPlayerChosen("bob", "chosen by the players"),
        ev.TurnStarted("bob", 1, 4),
    ]


def test_first_turn_draws_no_event_card_and_has_4_action_points() -> None:
    state = given(ev.TurnStarted("ann", 1, 4))
    assert state.phase == Phase.ACTIONS and state.current_card is None
    assert state.action_points == 4 and len(state.event_deck) == 18
    assert GAME.next_step(state) == AwaitingPlayers(("ann",), "actions")


def test_chance_outcomes_must_answer_the_pending_request() -> None:
    state = GAME.fold(GAME.setup(["a", "b"], {}))
    with pytest.raises(RuleViolation) as refused:
        GAME.resolve(state, DiceRolled((3,)))
    assert refused.value.code == "UNEXPECTED_OUTCOME"
    with pytest.raises(RuleViolation) as idle:
        GAME.resolve(given(ev.TurnStarted("ann", 1, 4)), DiceRolled((3,)))
    assert idle.value.code == "NO_CHANCE_PENDING"
