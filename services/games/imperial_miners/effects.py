"""The effect language: one interpreter for every card, Event, Progress space and the
Surface board (content/imperial_miners.yaml lists the atoms).

Effects resolve "as far as possible": Machinery stops at 3 per card, the Progress marker
stops at the end of the last board, clearing stops when no Cave-in is left, and draws are
cut short when a deck and its discard pile are both empty (flow.py). Each Machinery token
on a card adds 1 to the first gain of coins, VP, Progress or cards of the effect chosen on
it (house reading of "boosts its effect").
"""

from __future__ import annotations

from typing import Final

from services.games.imperial_miners.content import CONTENT, GAINS, Atom, Effect
from services.games.imperial_miners.mine import (
    adjacent_cards,
    at,
    complete_carts,
    distinct_factions,
    faction_count,
)
from services.games.imperial_miners.state import Mine, PlacedCard

SPACES_PER_BOARD = 4
#: what a Machinery token boosts (not more Machinery)
BOOSTED = tuple(g for g in GAINS if g != "machinery")


def track_length() -> int:
    return SPACES_PER_BOARD * len(CONTENT.boards)


# Plain classes, not dataclasses: a compiled dataclass keeps the __init__ ``@dataclass``
# writes in Python, and every effect resolved makes one of each.
class Context:
    """What an effect reads: the player's Mine and marker, the boards' sides, the card."""

    def __init__(
        self,
        mine: Mine,
        progress: int,
        sides: tuple[str, ...],
        card: PlacedCard | None = None,
    ) -> None:
        self.mine: Final = mine
        self.progress: Final = progress
        self.sides: Final = sides
        self.card: Final = card


class Resolution:
    """What an effect gives, added up atom by atom."""

    def __init__(self) -> None:
        self.coins = 0
        self.vp = 0
        self.progress = 0
        self.machinery = 0
        self.cave_in = False
        self.cleared: list[tuple[int, int]] = []
        self.draws: dict[str, int] = {}
        self.rewards: list[str] = []


def count(per: str, ctx: Context, res: Resolution) -> int:
    card = ctx.card
    if per.startswith("faction:"):
        return faction_count(ctx.mine, per.split(":", 1)[1])
    if per == "factions":
        return distinct_factions(ctx.mine)
    if per == "carts":
        return complete_carts(ctx.mine)
    if per == "mine_machinery":
        return sum(p.machinery for p in ctx.mine) + res.machinery
    if per == "cave_ins":
        return sum(1 for p in ctx.mine if p.cave_in)
    if card is None:
        return 0
    if per == "machinery":
        return card.machinery + res.machinery
    return adjacent_cards(ctx.mine, card.level, card.column)  # "adjacent"


def amount(atom: Atom, ctx: Context, res: Resolution, boost: int) -> int:
    n = atom.n * count(atom.per, ctx, res) if atom.per else atom.n
    n += boost
    return min(n, atom.cap + boost) if atom.cap is not None else n


def resolve(effect: Effect, ctx: Context) -> Resolution:
    res = Resolution()
    boost = ctx.card.machinery if ctx.card is not None else 0
    for atom in effect:
        gain = atom.do in BOOSTED
        n = amount(atom, ctx, res, boost if gain else 0)
        if gain:
            boost = 0
        _apply(atom.do, n, ctx, res)
    return res


def _apply(do: str, n: int, ctx: Context, res: Resolution) -> None:
    if do == "coins":
        res.coins += n
    elif do == "vp":
        res.vp += n
    elif do.startswith("draw_"):
        deck = f"level_{do[-1]}"
        res.draws[deck] = res.draws.get(deck, 0) + n
    elif do == "advance":
        _advance(n, ctx, res)
    elif do == "machinery" and ctx.card is not None:
        room = CONTENT.machinery_cap - ctx.card.machinery - res.machinery
        res.machinery += max(0, min(n, room))
    elif do == "cave_in" and ctx.card is not None:
        res.cave_in = True
    elif do == "clear_cave_in":
        blocked = sorted((p.level, p.column) for p in ctx.mine if p.cave_in)
        res.cleared.extend(lc for lc in blocked[:n] if lc not in res.cleared)


def _advance(steps: int, ctx: Context, res: Resolution) -> None:
    start = ctx.progress + res.progress
    end = min(start + steps, track_length())
    if end <= start:
        return
    res.progress += end - start
    board, space = divmod(end - 1, SPACES_PER_BOARD)
    rewards = [space_reward(board, space, ctx.sides)]
    for b in range(len(CONTENT.boards)):
        last = SPACES_PER_BOARD * (b + 1)
        if start < last <= end:
            rewards.append(CONTENT.boards[b][ctx.sides[b]].final)
    for reward in rewards:
        res.rewards.append(", ".join(a.text for a in reward))
        for atom in reward:
            _apply(atom.do, amount(atom, ctx, res, 0), ctx, res)


def space_reward(board: int, space: int, sides: tuple[str, ...]) -> Effect:
    return CONTENT.boards[board][sides[board]].spaces[space]


def card_at(mine: Mine, level: int, column: int) -> PlacedCard:
    placed = at(mine, level, column)
    if placed is None:
        raise LookupError(f"no card at level {level}, column {column}")
    return placed
