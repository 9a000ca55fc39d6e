"""The greedy bot: decides from its own seat's view only (hand, public Mines, markers).

It values an effect by resolving it against its own Mine as the view shows it (VP 1,
coins less as the end nears, cards drawn by level, Machinery by the rounds it can still
boost, a Cave-in as a lost activation), places a card where the chain reaction above it
is worth most, climbs toward the better branch, and plays the card whose best placement
is worth most after its cost.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.games.contract import ViewPolicy
from services.games.imperial_miners import actions as act
from services.games.imperial_miners.content import CONTENT, Effect
from services.games.imperial_miners.effects import Context, Resolution, resolve
from services.games.imperial_miners.mine import (
    adjacent_cards,
    at,
    card_cost,
    complete_carts,
    occupied_above,
    placements,
)
from services.games.imperial_miners.state import Mine, PlacedCard
from services.games.imperial_miners.view import ImperialMinersSeatView, ImperialMinersView

DRAW_VALUE = {"level_1": 0.6, "level_2": 1.2, "level_3": 2.0, "level_4": 2.5}


class _Judge:
    """Values from one view: the seat's Mine, marker, coins and the rounds left."""

    def __init__(self, view: ImperialMinersView, player: str) -> None:
        self.view = view
        self.seat: ImperialMinersSeatView = next(s for s in view.seats if s.player == player)
        self.left = view.rounds_left

    def coin(self) -> float:
        return 0.5 if self.left > 2 else (0.25 if self.left == 2 else 0.02)

    def value(self, res: Resolution) -> float:
        later = max(0, self.left - 1)
        total = res.vp + res.coins * self.coin()
        total += sum(DRAW_VALUE[d] * n for d, n in res.draws.items()) * min(1.0, later / 2)
        total += res.machinery * 0.6 * min(later, 4)
        total += len(res.cleared) * 1.2 * min(1.0, later)
        total -= 1.5 * min(1.0, later) if res.cave_in else 0.0
        return total

    def effect(self, effect: Effect, mine: Mine, card: PlacedCard | None) -> float:
        ctx = Context(mine, self.seat.progress, self.view.progress_sides, card)
        return self.value(resolve(effect, ctx))

    def best_effect(self, mine: Mine, card: PlacedCard | None) -> tuple[float, int | None]:
        """The best effect of ``card`` (or of the Surface board) and its index; None: skip."""
        if card is not None and card.cave_in:
            return 0.0, None
        effects = CONTENT.cards[card.card].effects if card is not None else CONTENT.surface
        scored = [(self.effect(e, mine, card), i) for i, e in enumerate(effects)]
        best = max(scored)
        return best if best[0] > 0 else (0.0, None)

    def path(self, mine: Mine, card: PlacedCard) -> float:
        """The chain from ``card`` up to the Surface board, taking the better branch."""
        here = self.best_effect(mine, card)[0]
        if card.level == 1:
            return here + self.best_effect(mine, None)[0]
        return here + max(
            self.path(mine, up) for up in occupied_above(mine, card.level, card.column)
        )

    def placement(self, card: str, column: int) -> float:
        mine = self.seat.mine
        placed = PlacedCard(card, CONTENT.cards[card].level, column)
        new = (*mine, placed)
        carts = complete_carts(new) - complete_carts(mine)
        touching = adjacent_cards(new, placed.level, placed.column)
        return self.path(new, placed) + carts * 1.0 + 0.1 * touching

    def cost(self, card: str) -> int:
        event = CONTENT.events.get(self.view.event or "")
        level = CONTENT.cards[card].level
        discount = (
            event.discount
            if event is not None and event.kind == "this_round" and event.discount_level == level
            else 0
        )
        return card_cost(card, self.seat.mine, discount)

    def play(self, card: str) -> float:
        level = CONTENT.cards[card].level
        columns = placements(self.seat.mine, level)
        best = max((self.placement(card, c) for c in columns), default=0.0)
        return best - self.cost(card) * self.coin() + 0.4 * level * min(1.0, self.left / 3)

    def keep_value(self, card: str) -> float:
        c = CONTENT.cards[card]
        base = max(self.effect(e, (), None) for e in c.effects)
        return base + c.level * 0.8 - c.cost * 0.3


def _choose(view: ImperialMinersView, player: str, legal: Sequence[Any]) -> Any:
    judge = _Judge(view, player)
    first = legal[0]
    if isinstance(first, act.KeepCards):
        ranked = sorted(view.hand, key=judge.keep_value, reverse=True)
        # a ladder first: the best Level I and Level II card, then the best of the rest
        ladder = [
            card
            for lv in (1, 2)
            for card in [c for c in ranked if CONTENT.cards[c].level == lv][:1]
        ]
        rest = [c for c in ranked if c not in ladder]
        keep = set([*ladder, *rest][: CONTENT.keep])
        return next(a for a in legal if set(a.cards) == keep)
    if isinstance(first, act.ChooseCard):
        return max(legal, key=lambda a: judge.play(a.card))
    if isinstance(first, act.PlaceCard):
        assert view.chain is not None
        placing = view.chain.card
        return max(legal, key=lambda a: judge.placement(placing, a.column))
    if isinstance(first, act.ClimbTo):
        assert view.chain is not None
        mine = judge.seat.mine
        up = view.chain.level - 1

        def branch(a: act.ClimbTo) -> float:
            card = at(mine, up, a.column)
            return judge.path(mine, card) if card is not None else 0.0

        return max(legal, key=branch)
    assert view.chain is not None
    chain = view.chain
    card = at(judge.seat.mine, chain.level, chain.column) if chain.stage == "effect" else None
    _, index = judge.best_effect(judge.seat.mine, card)
    if index is None:
        # a Mine card's effect may be skipped, the Surface board's may not
        return act.SkipEffect() if chain.stage == "effect" else act.UseEffect(0)
    return act.UseEffect(index)


def greedy_view_policy(seed: int) -> ViewPolicy:
    """The greedy bot. It is deterministic: ``seed`` is accepted for the bots() signature."""
    return _choose
