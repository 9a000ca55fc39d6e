"""The content pack keeps every printed count; the house cards follow the public faction
identities; the effect language reads every effect."""

from __future__ import annotations

from collections import Counter

import pytest

from services.games.house import house_choices
from services.games.imperial_miners.content import CONTENT, parse_atom


def test_136_mine_cards_36_43_43_14() -> None:
    assert len(CONTENT.cards) == 136
    assert Counter(c.level for c in CONTENT.cards.values()) == {1: 36, 2: 43, 3: 43, 4: 14}


def test_costs_level_one_and_four_free_level_two_two_level_three_zero_to_thirteen() -> None:
    costs = {lv: {c.cost for c in CONTENT.cards.values() if c.level == lv} for lv in (1, 2, 3, 4)}
    assert costs[1] == costs[4] == {0}
    assert costs[2] == {2}
    assert min(costs[3]) == 0 and max(costs[3]) == 13


def test_level_four_cards_are_identical() -> None:
    fours = [c for c in CONTENT.cards.values() if c.level == 4]
    assert len({(c.name, c.effects, c.factions) for c in fours}) == 1


def test_six_factions_some_cards_in_two_some_in_none() -> None:
    assert CONTENT.factions == (
        "scots",
        "atlanteans",
        "egyptians",
        "japanese",
        "barbarians",
        "romans",
    )
    sizes = Counter(len(c.factions) for c in CONTENT.cards.values())
    assert sizes[0] > 0 and sizes[2] > 0 and sizes[1] > sizes[0] + sizes[2]


def test_mostly_two_effects_and_cart_halves() -> None:
    counts = Counter(len(c.effects) for c in CONTENT.cards.values())
    assert set(counts) == {1, 2} and counts[2] > counts[1]
    assert sum(c.cart_left for c in CONTENT.cards.values()) > 20
    assert sum(c.cart_right for c in CONTENT.cards.values()) > 20


def test_faction_identities() -> None:
    by = {f: [c for c in CONTENT.cards.values() if f in c.factions] for f in CONTENT.factions}
    assert all(c.discount == "scots" for c in by["scots"] if c.level > 1)
    atoms = {f: [a for c in cards for e in c.effects for a in e] for f, cards in by.items()}
    assert any(a.do == "machinery" for a in atoms["atlanteans"])
    assert any(a.per == "machinery" for a in atoms["atlanteans"])
    assert sum(a.do == "advance" for a in atoms["egyptians"]) >= 5
    assert any(a.per == "factions" for a in atoms["japanese"])
    assert sum(a.do == "cave_in" for a in atoms["barbarians"]) >= 5
    assert any(a.per in ("carts", "adjacent") for a in atoms["romans"])
    assert all(c.cart_left or c.cart_right for c in by["romans"])


def test_three_double_sided_progress_boards() -> None:
    assert len(CONTENT.boards) == 3
    assert all(set(b) == {"a", "b"} for b in CONTENT.boards)
    assert all(len(side.spaces) == 4 and side.final for b in CONTENT.boards for side in b.values())


def test_eighteen_events_of_three_kinds() -> None:
    assert len(CONTENT.events) == 18
    assert Counter(e.kind for e in CONTENT.events.values()) == {
        "immediate": 6,
        "this_round": 6,
        "end_of_round": 6,
    }
    assert CONTENT.event_deck == 10


def test_the_surface_board_has_three_effects() -> None:
    assert len(CONTENT.surface) == 3


@pytest.mark.parametrize("text", ["dig 2", "vp 1 per nothing", "coins 1 upto 3"])
def test_the_effect_language_refuses_what_it_cannot_read(text: str) -> None:
    with pytest.raises(ValueError):
        parse_atom(text)


def test_the_house_choices_name_the_clauses_they_fill() -> None:
    """The pack lists where the rulebook leaves a choice open, with the clause each fills,
    among them the two named in review: a forced Level I play with the deck and its
    discard pile empty, and the deal's event (HandsDealt's `keep` held the number dealt)."""
    choices = CONTENT.house_choices
    assert len(choices) >= 15
    assert all(c.kind in ("house", "reading") for c in choices)
    forced = [c for c in choices if "top card of the Level I deck" in c.clause]
    assert forced and "plays no card that round" in forced[0].choice
    deal = [c for c in choices if c.clause.startswith("Setup 6")]
    assert deal and "DealFinished(dealt=8, keep=4)" in deal[0].choice
    assert "HandsDealt" in deal[0].choice


def test_a_house_choice_without_its_clause_is_refused() -> None:
    with pytest.raises(ValueError):
        house_choices([{"clause": " ", "kind": "house", "choice": "something"}])
    with pytest.raises(ValueError):
        house_choices([{"clause": "Setup 1", "kind": "whim", "choice": "something"}])
