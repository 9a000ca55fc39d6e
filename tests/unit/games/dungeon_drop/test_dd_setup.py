"""Setup clauses: players, hero cards, initiative order, the dungeon drop, the box."""

from __future__ import annotations

import pytest

from services.games.contract import (
    AwaitingChance,
    CardsDrawn,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    MalformedAction,
    RollDice,
    ShuffleDeck,
)
from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.table import REAL_SIDES, drop_reals
from tests.unit.games.dungeon_drop.dd_given import given


def answer(state: DungeonDropState, outcome: object) -> DungeonDropState:
    return GAME.fold(GAME.resolve(state, outcome), state)  # type: ignore[arg-type]


def dealt(players: tuple[str, ...], races: tuple[str, ...]) -> DungeonDropState:
    """A match set up to the point where the heroes are dealt (races in ``races`` order)."""
    state = GAME.fold(GAME.setup(players, {}))
    state = answer(state, DeckShuffled("races", 15))
    state = answer(state, CardsDrawn("races", races))
    state = answer(state, DeckShuffled("classes", 10))
    state = answer(state, CardsDrawn("classes", tuple(CONTENT.classes)[: len(players)]))
    state = answer(state, DeckShuffled("quests", 10))
    return answer(state, CardsDrawn("quests", tuple(CONTENT.quests)[: len(players)]))


@pytest.mark.parametrize("count", [1, 2, 3, 4])
def test_one_to_four_players(count: int) -> None:
    players = [f"p{i}" for i in range(count)]
    assert isinstance(GAME.setup(players, {})[0], ev.MatchSetUp)


@pytest.mark.parametrize("count", [0, 5])
def test_more_than_four_or_no_players_refused(count: int) -> None:
    with pytest.raises(MalformedAction) as refusal:
        GAME.setup([f"p{i}" for i in range(count)], {})
    assert refusal.value.code == "PLAYER_COUNT"


def test_solo_is_for_exactly_one_player() -> None:
    with pytest.raises(MalformedAction):
        GAME.setup(["a", "b"], {"variant": "solo"})
    with pytest.raises(MalformedAction):
        GAME.setup(["a"], {"variant": "teamwork"})
    assert GAME.setup(["a"], {})[0].variant == "solo"


def test_unknown_variant_refused() -> None:
    with pytest.raises(MalformedAction) as refusal:
        GAME.setup(["a", "b"], {"variant": "chaos"})
    assert refusal.value.code == "BAD_VARIANT"


def test_race_class_and_quest_are_dealt_from_shuffled_decks() -> None:
    state = GAME.fold(GAME.setup(["ann", "bob"], {}))
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and step.request == ShuffleDeck(
        "races", tuple(CONTENT.races), "shuffle the races"
    )
    state = answer(state, DeckShuffled("races", 15))
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and isinstance(step.request, DrawCards)
    assert step.request.count == 2


def test_race_and_class_face_up_quest_face_down() -> None:
    state = dealt(("ann", "bob"), ("orc", "gnome"))
    bobs_view = GAME.view(state, "bob")
    ann = next(s for s in bobs_view.seats if s.player == "ann")
    bob = next(s for s in bobs_view.seats if s.player == "bob")
    assert (ann.race, ann.hero_class) == ("orc", state.classes["ann"])
    assert ann.quest is None  # secret: only its owner sees it
    assert bob.quest == state.quests["bob"]
    assert all(s.quest is None for s in GAME.view(state, None).seats)


def test_initiative_order_from_race_lowest_first() -> None:
    state = dealt(("ann", "bob", "cid"), ("goliath", "gnome", "orc"))  # 15, 1, 9
    assert state.order == ("bob", "cid", "ann")


def test_health_from_race() -> None:
    state = dealt(("ann", "bob"), ("dwarf", "fairy"))
    assert state.health == {"ann": 5, "bob": 2}


def test_larger_cubes_go_to_the_box_then_small_cubes_and_dragon_are_dropped() -> None:
    state = dealt(("ann", "bob"), ("orc", "gnome"))
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance)
    assert step.request == ShuffleDeck("box", CONTENT.box_cubes(), step.request.purpose)
    assert all(CONTENT.kind(c).size == "large" for c in CONTENT.box_cubes())
    assert sum(CONTENT.kind(c).die for c in CONTENT.box_cubes()) == 6  # the dice are Chests
    state = answer(state, DeckShuffled("box", 36))
    step = GAME.next_step(state)
    small = CONTENT.setup_cubes(solo=False)
    assert "dragon01" in small and not any(CONTENT.kind(c).size == "large" for c in small)
    assert step == AwaitingChance(RollDice(drop_reals(len(small)), REAL_SIDES, "drop the dungeon"))
    values = tuple(range(1, drop_reals(len(small)) + 1))
    events = GAME.resolve(state, DiceRolled(values))
    drop = events[0]
    assert isinstance(drop, ev.CubesDropped)
    assert drop.player == "bob"  # the first player in initiative order drops
    assert 6.0 <= drop.height <= 12.0  # "from a height of 6 to 12 inches"
    assert {p.cube for p in drop.placements} | set(drop.off_table) == set(small)
    assert isinstance(events[1], ev.TurnStarted) and events[1].player == "bob"


def test_the_dragon_is_the_largest_cube() -> None:
    sizes = CONTENT.table.sizes
    assert all(sizes[CONTENT.kind(c).size] <= sizes["huge"] for c in CONTENT.cubes)
    assert CONTENT.kind("dragon01").size == "huge"


def test_content_counts() -> None:
    real = [c for c in CONTENT.cubes if CONTENT.cubes[c] not in CONTENT.solo_kinds]
    assert len(real) == 87
    assert (len(CONTENT.races), len(CONTENT.classes), len(CONTENT.quests)) == (15, 10, 10)
    named = {r.name for r in CONTENT.races.values()}
    assert {
        "Human",
        "Boblin",
        "High Elf",
        "Wood Elf",
        "Dwarf",
        "Draglinkin",
        "Gnome",
        "Orc",
    } <= named
    classes = {c.name for c in CONTENT.classes.values()}
    assert {"Mage", "Cleric", "Bard", "Beastmaster", "Ranger", "Rogue", "Warrior"} <= classes


@pytest.mark.parametrize(("players", "cubes"), [(2, 6), (3, 4), (4, 3)])
def test_explore_draws_by_player_count(players: int, cubes: int) -> None:
    names = ("ann", "bob", "cid", "dee")[:players]
    state = given(players=names)
    start = next(e for e in _advance(state) if isinstance(e, ev.TurnStarted))
    assert start.explore == cubes
    after = GAME.fold([start], state)
    step = GAME.next_step(after)
    assert isinstance(step, AwaitingChance)
    assert step.request == DrawCards("box", cubes, step.request.purpose)


def _advance(state: DungeonDropState) -> list[object]:
    from services.games.dungeon_drop.flow import automatic_events

    return automatic_events(state)


def test_explore_draws_blind_from_the_box_then_drops_them() -> None:
    state = GAME.fold([ev.TurnStarted("ann", 1, 6)], given())
    drawn = ("bullion01", "troll02", "chest03", "shield01", "crystal02", "bullion05")
    state = GAME.fold(GAME.resolve(state, CardsDrawn("box", drawn)), state)
    assert state.box_left == 30
    view = GAME.view(state, "ann")
    assert view.cubes_in_hand == 6
    assert not {c.cube for c in view.table} & set(drawn)  # not seen before they land
    step = GAME.next_step(state)
    assert isinstance(step, AwaitingChance) and step.request.count == drop_reals(6)  # type: ignore[union-attr]
    values = tuple(500_000 + i for i in range(drop_reals(6)))
    state = GAME.fold(GAME.resolve(state, DiceRolled(values)), state)
    assert set(drawn) <= set(state.table) | set(state.aside)
    assert state.phase == Phase.ACT


def test_solo_adds_the_translucent_phantoms() -> None:
    solo = CONTENT.setup_cubes(solo=True)
    assert {c for c in solo if CONTENT.kind(c).translucent} == set(CONTENT.cubes_of("phantom"))
    assert not set(CONTENT.cubes_of("phantom")) & set(CONTENT.setup_cubes(solo=False))
