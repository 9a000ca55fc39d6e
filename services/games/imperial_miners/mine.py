"""A player's Mine: staggered rows of cards under the Surface board.

Coordinates (house reading of the half-card offset): a card sits at ``level`` (1 = right
under the Surface board) and ``column``. A card at (L, c) with L ≥ 2 has the two places
(L-1, c) and (L-1, c+1) above it and (L+1, c-1), (L+1, c) below it; (L, c-1) and (L, c+1)
are its row neighbours, so a card touches at most 6 others. Level I cards have the
Surface board above them. Cart halves join along a row: an R half at (L, c) beside an L
half at (L, c+1) is one complete Cart.

Level I may hold any number of cards, also where the Surface board is not right above;
to keep the choice finite a new Level I card goes into a free column at most 2 away from
an existing Level I card (column 0 for the first one).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.games.imperial_miners.content import CONTENT


@dataclass(frozen=True)
class PlacedCard:
    card: str
    level: int
    column: int
    machinery: int = 0
    cave_in: bool = False


Mine = tuple[PlacedCard, ...]


def at(mine: Mine, level: int, column: int) -> PlacedCard | None:
    for placed in mine:
        if placed.level == level and placed.column == column:
            return placed
    return None


def above(level: int, column: int) -> tuple[tuple[int, int], ...]:
    """The places directly above (L, c); none for Level I (the Surface board is above)."""
    if level <= 1:
        return ()
    return ((level - 1, column), (level - 1, column + 1))


def occupied_above(mine: Mine, level: int, column: int) -> tuple[PlacedCard, ...]:
    return tuple(p for lc in above(level, column) if (p := at(mine, *lc)) is not None)


def neighbours(level: int, column: int) -> tuple[tuple[int, int], ...]:
    return (
        *above(level, column),
        (level, column - 1),
        (level, column + 1),
        (level + 1, column - 1),
        (level + 1, column),
    )


def adjacent_cards(mine: Mine, level: int, column: int) -> int:
    return sum(1 for lc in neighbours(level, column) if at(mine, *lc) is not None)


def placements(mine: Mine, level: int) -> tuple[int, ...]:
    """Columns where a card of ``level`` may go."""
    taken = {p.column for p in mine if p.level == level}
    if level == 1:
        if not taken:
            return (0,)
        reach = {c + d for c in taken for d in (-2, -1, 1, 2)}
        return tuple(sorted(reach - taken))
    below_of = {c for p in mine if p.level == level - 1 for c in (p.column - 1, p.column)}
    return tuple(sorted(below_of - taken))


def complete_carts(mine: Mine) -> int:
    carts = 0
    for placed in mine:
        if CONTENT.cards[placed.card].cart_right:
            right = at(mine, placed.level, placed.column + 1)
            if right is not None and CONTENT.cards[right.card].cart_left:
                carts += 1
    return carts


def faction_count(mine: Mine, faction: str) -> int:
    return sum(1 for p in mine if faction in CONTENT.cards[p.card].factions)


def distinct_factions(mine: Mine) -> int:
    return len({f for p in mine for f in CONTENT.cards[p.card].factions})


def card_cost(card_id: str, mine: Mine, event_discount: int = 0) -> int:
    """What ``card_id`` costs to play into ``mine``: never below 0."""
    card = CONTENT.cards[card_id]
    cost = card.cost - event_discount
    if card.discount is not None:
        cost -= faction_count(mine, card.discount)
    return max(0, cost)


def replace(mine: Mine, new: PlacedCard) -> Mine:
    return tuple(new if (p.level, p.column) == (new.level, new.column) else p for p in mine)
