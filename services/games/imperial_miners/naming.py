"""Imperial Miners' legal actions as the player names them and picks them on the picture
(``Game.describe``): the card in hand to keep or play, then the free place in the Mine,
then the effect of the card the chain is on (or the Surface board's) and the card above
to climb to. Ids are the picture's own (``picture.py``)."""

from __future__ import annotations

from typing import Any

from services.games.contract import Described
from services.games.imperial_miners import actions as act
from services.games.imperial_miners.content import CONTENT, ROMAN
from services.games.imperial_miners.mine import at, card_cost
from services.games.imperial_miners.picture import (
    effect_id,
    effect_words,
    hand_id,
    mine_id,
    slot_id,
    slots_of,
    surface_effect_id,
)
from services.games.imperial_miners.view import ImperialMinersSeatView, ImperialMinersView


def _me(view: ImperialMinersView) -> tuple[int, ImperialMinersSeatView | None]:
    for i, seat in enumerate(view.seats):
        if seat.player == view.viewer:
            return i, seat
    return -1, None


def _name(card: str) -> str:
    return CONTENT.cards[card].name


def _hand_ids(view: ImperialMinersView, cards: tuple[str, ...]) -> tuple[str, ...]:
    """The hand's cards, each card id picked once (a hand may hold two of a design)."""
    free = list(enumerate(view.hand))
    ids = []
    for card in cards:
        found = next((k for k, (_, held) in enumerate(free) if held == card), None)
        if found is not None:
            ids.append(hand_id(free.pop(found)[0]))
    return tuple(ids)


def _cost(view: ImperialMinersView, seat: ImperialMinersSeatView, card: str) -> int:
    event = CONTENT.events[view.event] if view.event is not None else None
    level = CONTENT.cards[card].level
    discount = 0
    if event is not None and event.kind == "this_round" and event.discount_level == level:
        discount = event.discount
    return card_cost(card, seat.mine, discount)


def _place(view: ImperialMinersView, seat: ImperialMinersSeatView, column: int) -> str:
    """Where a card placed in ``column`` of its level goes, as the Mine shows it."""
    assert view.chain is not None
    level = CONTENT.cards[view.chain.card].level
    mine = seat.mine
    if level > 1:
        above = [p for c in (column, column + 1) if (p := at(mine, level - 1, c)) is not None]
        return f"on Level {ROMAN[level]} under " + " and ".join(_name(p.card) for p in above)
    row = sorted(p.column for p in mine if p.level == 1)
    if not row:
        return "on Level I"
    left, right = at(mine, 1, column - 1), at(mine, 1, column + 1)
    if left is not None and right is not None:
        return f"on Level I between {_name(left.card)} and {_name(right.card)}"
    if right is not None:
        return f"on Level I left of {_name(right.card)}"
    if left is not None:
        return f"on Level I right of {_name(left.card)}"
    # No neighbour: named by the nearest card of the row (it may have gaps), left first.
    nearest = min(row, key=lambda c: (abs(c - column), c))
    card = _name(at(mine, 1, nearest).card)  # type: ignore[union-attr]
    side = "left" if column < nearest else "right"
    return f"on Level I, {abs(column - nearest)} places {side} of {card}"


#: the last view's slots (its place step describes a move per free column)
_last_slots: tuple[ImperialMinersView | None, frozenset[tuple[int, int]]] = (None, frozenset())


def _slots(view: ImperialMinersView, seat: ImperialMinersSeatView) -> frozenset[tuple[int, int]]:
    global _last_slots
    if _last_slots[0] is not view:
        _last_slots = (view, frozenset(slots_of(view, seat)))
    return _last_slots[1]


def describe(view: ImperialMinersView, action: Any) -> Described:
    index, seat = _me(view)
    chain = view.chain
    match action:
        case act.KeepCards(cards=cards):
            names = ", ".join(_name(c) for c in cards)
            return Described(f"keep {names}", _hand_ids(view, cards))
        case act.ChooseCard(card=card):
            cost = f", costs {_cost(view, seat, card)}" if seat is not None else ""
            roman = ROMAN[CONTENT.cards[card].level]
            return Described(f"play {_name(card)} (Level {roman}{cost})", _hand_ids(view, (card,)))
        case act.PlaceCard(column=column) if seat is not None and chain is not None:
            level = CONTENT.cards[chain.card].level
            shown = (level, column) in _slots(view, seat)
            targets = (slot_id(index, level, column),) if shown else ()
            return Described(f"place {_name(chain.card)} {_place(view, seat, column)}", targets)
        case act.UseEffect(effect=i) if chain is not None:
            if chain.level == 0:
                words = effect_words(CONTENT.surface[i])
                return Described(f"Surface board: {words}", (surface_effect_id(index, i),))
            placed = at(seat.mine, chain.level, chain.column) if seat is not None else None
            if placed is None:
                return Described(f"use effect {i + 1}")
            words = effect_words(CONTENT.cards[placed.card].effects[i])
            return Described(
                f"{_name(placed.card)}: {words}",
                (effect_id(index, chain.level, chain.column, i),),
            )
        case act.SkipEffect():
            where = ""
            if chain is not None and seat is not None:
                placed = at(seat.mine, chain.level, chain.column)
                where = f" of {_name(placed.card)}" if placed is not None else ""
            return Described(f"skip the effect{where}")
        case act.ClimbTo(column=column) if chain is not None and seat is not None:
            above = at(seat.mine, chain.level - 1, column)
            side = "left" if column == chain.column else "right"
            name = _name(above.card) if above is not None else f"column {column}"
            return Described(
                f"go up to {name} (above, {side})",
                (mine_id(index, chain.level - 1, column),),
            )
    return Described(repr(action))
