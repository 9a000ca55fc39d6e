"""A player's Mine: staggered rows of cards under the Surface board.

Coordinates (house reading of the half-card offset): a card sits at ``level`` (1 = right
under the Surface board) and ``column``. A card at (L, c) with L ≥ 2 has the two places
(L-1, c) and (L-1, c+1) above it and (L+1, c-1), (L+1, c) below it; (L, c-1) and (L, c+1)
are its row neighbours, so a card touches at most 6 others. Level I cards have the
Surface board above them. Cart halves join along a row: an R half at (L, c) beside an L
half at (L, c+1) is one complete Cart.

Mine phase 2b: "On Level I a player may have any number of cards, even where the Surface
board is not physically right above them": a Level I card may go into any free column,
touching other Level I cards or not. Only where it lies relative to the Mine's other cards
matters (adjacency and Carts are relative), so the offered columns are every free one
from ``LEVEL_I_REACH`` left of the leftmost Level I card to as far right of the rightmost
(column 0 for the first card). A card farther out can never be joined to the others,
since a gap of n columns takes n more Level I cards and a player places one card a
round, so every farther column plays exactly as the farthest one offered.
"""

from __future__ import annotations

from typing import Final

from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.state import ImperialMinersState, Mine, PlacedCard

#: one more than the cards a player can place after the current one in 10 rounds
LEVEL_I_REACH = CONTENT.rounds + 1
#: the Mine cards by id, a constant of the compiled rules (``CONTENT.cards`` is a look-up of
#: ``CONTENT`` in the module's globals and of its attribute, at every card asked about)
CARDS: Final = CONTENT.cards


def mine_of(s: ImperialMinersState, player: str) -> Mine:
    """``s.mine(player)``, for the compiled rules: a call of a compiled function, not of a
    Python method."""
    return s.mines.get(player, ())


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
    # the places of ``above`` named, not unpacked (a call with ``*`` is a Python call)
    if level <= 1:
        return ()
    left, right = at(mine, level - 1, column), at(mine, level - 1, column + 1)
    if left is None:
        return () if right is None else (right,)
    return (left,) if right is None else (left, right)


def neighbours(level: int, column: int) -> tuple[tuple[int, int], ...]:
    return (
        *above(level, column),
        (level, column - 1),
        (level, column + 1),
        (level + 1, column - 1),
        (level + 1, column),
    )


def adjacent_cards(mine: Mine, level: int, column: int) -> int:
    return sum(1 for lv, c in neighbours(level, column) if at(mine, lv, c) is not None)


def placements(mine: Mine, level: int) -> tuple[int, ...]:
    """Columns where a card of ``level`` may go."""
    taken = {p.column for p in mine if p.level == level}
    if level == 1:
        if not taken:
            return (0,)
        # the free runs between and beside the taken columns, a range at a time (a random
        # playout lists them at every Level I card placed)
        columns: list[int] = []
        start = min(taken) - LEVEL_I_REACH
        for c in sorted(taken):
            columns.extend(range(start, c))
            start = c + 1
        columns.extend(range(start, start + LEVEL_I_REACH))
        return tuple(columns)
    below_of = {c for p in mine if p.level == level - 1 for c in (p.column - 1, p.column)}
    return tuple(sorted(below_of - taken))


def can_place(mine: Mine, level: int) -> bool:
    """``bool(placements(mine, level))`` without listing them: Level I always has room (the
    column beside the leftmost card is free)."""
    if level == 1:
        return True
    taken = {p.column for p in mine if p.level == level}
    for p in mine:
        if p.level == level - 1 and (p.column - 1 not in taken or p.column not in taken):
            return True
    return False


def placeable(mine: Mine, level: int, column: int) -> bool:
    """``column in placements(mine, level)`` without listing them."""
    taken = {p.column for p in mine if p.level == level}
    if column in taken:
        return False
    if level == 1:
        if not taken:
            return column == 0
        return min(taken) - LEVEL_I_REACH <= column <= max(taken) + LEVEL_I_REACH
    # a card directly above: at (level - 1, column) or (level - 1, column + 1)
    return any(p.level == level - 1 and column <= p.column <= column + 1 for p in mine)


def complete_carts(mine: Mine) -> int:
    carts = 0
    for placed in mine:
        if CARDS[placed.card].cart_right:
            right = at(mine, placed.level, placed.column + 1)
            if right is not None and CARDS[right.card].cart_left:
                carts += 1
    return carts


def faction_count(mine: Mine, faction: str) -> int:
    return sum(1 for p in mine if faction in CARDS[p.card].factions)


def distinct_factions(mine: Mine) -> int:
    return len({f for p in mine for f in CARDS[p.card].factions})


def card_cost(card_id: str, mine: Mine, event_discount: int = 0) -> int:
    """What ``card_id`` costs to play into ``mine``: never below 0."""
    card = CARDS[card_id]
    cost = card.cost - event_discount
    if card.discount is not None:
        cost -= faction_count(mine, card.discount)
    return max(0, cost)


def replace(mine: Mine, new: PlacedCard) -> Mine:
    level, column = new.level, new.column
    return tuple(new if p.level == level and p.column == column else p for p in mine)
