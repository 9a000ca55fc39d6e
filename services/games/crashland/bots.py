"""Crashland bots: a greedy player for playouts, balance measurements and networked play,
and the view-based greedy bot ``Crashland.bots()`` offers beside the contract's random one.

The greedy player decides from the player's view only (no peeking at face-down cards):
walk to the nearest located tank, else back to the ship once all tanks are aboard, else to
the nearest unexplored card. It explores with the free cards only (measured: paying to
explore loses more often) and pays on the way to a tank or home; it keeps pairs and spends
them when a system runs low.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from services.games.crashland import actions as act
from services.games.crashland.model import Boost, Payment, Position
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CardView, CrashlandView, view
from services.games.playout import Policy

#: extra cards are paid for only on the way to a tank or home, down to this level
RESERVE = 2


def _distance(a: Position, b: Position) -> int:
    return abs(a.row - b.row) + abs(a.column - b.column)


def _target(v: CrashlandView) -> tuple[Position | None, bool]:
    """Where to go and whether it is worth paying for."""
    assert v.astronaut is not None
    here = v.astronaut
    tanks = [t.position for t in v.tanks if t.position is not None and not t.collected]
    if tanks:
        return min(tanks, key=lambda p: _distance(here, p)), True
    if all(t.collected for t in v.tanks):
        return v.spaceship, True
    hidden = [c.position for c in v.cells if not c.explored]
    if not hidden:
        return None, False
    return min(hidden, key=lambda p: (_distance(here, p), p)), False


def _kinds(hand: tuple[CardView, ...]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for card in hand:
        counts[card.kind] = counts.get(card.kind, 0) + 1
    return counts


def _pick(legal: Sequence[Any], wanted: object) -> Any | None:
    return wanted if wanted in legal else None


def _spend(v: CrashlandView, legal: Sequence[Any]) -> Any | None:
    low = min(v.oxygen, v.battery)
    if v.battery <= v.max_level - 2 and (choice := _pick(legal, act.SpendSolarRecharge())):
        return choice
    if low <= v.max_level - 4:
        boost = Boost.OXYGEN if v.oxygen < v.battery - 1 else Boost.BATTERY
        if abs(v.oxygen - v.battery) <= 1:
            boost = Boost.BOTH
        if choice := _pick(legal, act.SpendDomeShelter(boost)):
            return choice
    target, _ = _target(v)
    if target is not None and v.astronaut is not None and _distance(v.astronaut, target) > 3:
        cells = {c.position: c for c in v.cells}
        if cells[target].explored and (choice := _pick(legal, act.SpendJetpack(target))):
            return choice
    return _pick(legal, act.SpendSatelliteUplink())


def _step(v: CrashlandView, legal: Sequence[Any]) -> Any:
    target, urgent = _target(v)
    here = v.astronaut
    assert here is not None
    moves = [a for a in legal if isinstance(a, act.Move)]
    if target is not None and target != here:
        toward = [
            a for a in moves if _distance(here.step(a.direction), target) < _distance(here, target)
        ]
    else:
        toward = moves
    free = [a for a in toward if a.pay is Payment.FREE]
    if free:
        return free[0]
    paying = sorted(
        (a for a in toward if a.pay is not Payment.FREE),
        key=lambda a: -(v.oxygen if a.pay is Payment.OXYGEN else v.battery),
    )
    if paying:
        best = paying[0]
        level = v.oxygen if best.pay is Payment.OXYGEN else v.battery
        if urgent and level > RESERVE:
            return best
    if act.EndMovement() in legal:
        return act.EndMovement()
    return moves[0]


#: chooses an action for the player from the player's view and legal actions
ViewPolicy = Callable[[CrashlandView, str, Sequence[Any]], Any]


def greedy_view_policy(seed: int) -> ViewPolicy:
    """The greedy bot for networked play: it decides from the player's view alone."""
    rng = random.Random(seed)

    def choose(v: CrashlandView, player: str, legal: Sequence[Any]) -> Any:
        first = legal[0]
        if isinstance(first, act.ArrangeUplink):
            # cluster the events so fewer of them apply: events first, equipment after
            cards = {c.card: c for c in v.uplink_cards}
            order = sorted(first.order, key=lambda c: (cards[c].kind != "event", c))
            return act.ArrangeUplink(tuple(order))
        if act.KeepHand() in legal:
            return act.KeepHand()  # it discards only what the hand limit forces
        if any(isinstance(a, act.DiscardEquipment) for a in legal):
            counts = _kinds(v.hand)
            worst = min(v.hand, key=lambda c: (counts[c.kind], rng.random()))
            return act.DiscardEquipment(worst.card)
        if (spend := _spend(v, legal)) is not None:
            return spend
        if act.EndTurn() in legal:
            return act.EndTurn()
        return _step(v, legal)

    return choose


def greedy_policy(seed: int) -> Policy:
    """The greedy bot for in-process playouts: it decides from ``view(state, player)``."""
    decide = greedy_view_policy(seed)

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        assert isinstance(state, CrashlandState)
        return decide(view(state, player), player, legal)

    return choose
