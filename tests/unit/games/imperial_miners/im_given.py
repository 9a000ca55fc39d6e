"""Given-events helpers for the Imperial Miners tests: matches built from events only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from services.games.contract import RuleViolation
from services.games.imperial_miners import GAME
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.state import ImperialMinersState
from services.games.playout import Policy

PLAYERS = ("ann", "bob", "cid")
NO_EVENT = "EV16"  # Jubilee: end of round, +2 VP; changes nothing during the Mine phase


def named(name: str) -> list[str]:
    """Every copy of the card design ``name`` (ids in pack order)."""
    ids = [c.id for c in CONTENT.cards.values() if c.name == name]
    if not ids:
        raise LookupError(name)
    return ids


def card(name: str, copy: int = 0) -> str:
    return named(name)[copy]


def setup_events(
    players: Sequence[str] = PLAYERS,
    hands: dict[str, tuple[str, ...]] | None = None,
    sides: tuple[str, ...] = ("a", "a", "a"),
    first_game: bool = False,
) -> list[Any]:
    """A finished setup: each player was dealt cards including ``hands[p]`` and kept it."""
    players = tuple(players)
    hands = hands or {}
    deal = CONTENT.first_game_deal if first_game else CONTENT.deal
    wanted = {c for hand in hands.values() for c in hand}
    spare = {lv: [c for c in CONTENT.deck(lv) if c not in wanted] for lv in (1, 2, 3)}
    out: list[Any] = [
        ev.MatchSetUp(players, first_game, CONTENT.rules_version),
        ev.ProgressSidesRolled(sides),
        ev.PileShuffled("events", len(CONTENT.events), False),
        ev.EventDeckFormed(CONTENT.event_deck, len(CONTENT.events) - CONTENT.event_deck),
        *(ev.PileShuffled(f"level_{lv}", len(CONTENT.deck(lv)), False) for lv in (1, 2, 3)),
    ]
    kept: dict[str, tuple[str, ...]] = {}
    for p in players:
        hand = hands.get(p)
        dealt: list[str] = []
        for level, n in deal.items():
            mine = [c for c in hand or () if CONTENT.cards[c].level == level]
            assert len(mine) <= n, f"{p}: at most {n} Level {level} cards are dealt"
            cards = mine + [spare[level].pop(0) for _ in range(n - len(mine))]
            out.append(ev.MineCardsDrawn(p, f"level_{level}", tuple(cards), False))
            dealt += cards
        kept[p] = hand if hand is not None else tuple(dealt[: CONTENT.keep])
    each = sum(deal.values())
    out.append(ev.DealFinished(each, each if first_game else CONTENT.keep))
    if not first_game:
        for p in players:
            discarded = tuple(c for c in _dealt(out, p) if c not in kept[p])
            out.append(ev.CardsKept(p, kept[p], discarded))
    return out


def _dealt(events: list[Any], player: str) -> list[str]:
    return [
        c
        for e in events
        if isinstance(e, ev.MineCardsDrawn) and e.player == player
        for c in e.cards
    ]


def gain(player: str, coins: int = 0, vp: int = 0) -> ev.EffectResolved:
    return ev.EffectResolved(player, "test", "", coins, vp, 0, (), 0, False, (), {}, 0, 0)


def placed(player: str, name_or_id: str, level: int, column: int) -> ev.CardPlaced:
    card_id = name_or_id if name_or_id in CONTENT.cards else card(name_or_id)
    return ev.CardPlaced(player, card_id, level, column)


def mine_phase(round_no: int = 1, event: str = NO_EVENT, forced: tuple[str, ...] = ()) -> list[Any]:
    """Round ``round_no`` with ``event`` revealed, at the start of its Mine phase."""
    return [
        ev.RoundStarted(round_no),
        ev.EventRevealed(round_no, event, CONTENT.events[event].kind),
        ev.MinePhaseStarted(round_no, forced),
    ]


def given(*events: Any, **setup: Any) -> ImperialMinersState:
    return GAME.fold([*setup_events(**setup), *events])


def refusal(state: ImperialMinersState, player: str, action: Any) -> RuleViolation:
    with pytest.raises(RuleViolation) as refused:
        GAME.decide(state, player, action)
    return refused.value


def play(
    state: ImperialMinersState, player: str, action: Any
) -> tuple[ImperialMinersState, list[Any]]:
    """``player`` does ``action``: the new state and the events it produced."""
    events = GAME.decide(state, player, action)
    return GAME.fold(events, state), events


def of_type(events: list[Any], kind: type) -> list[Any]:
    return [e for e in events if isinstance(e, kind)]


def greedy_policy(seed: int) -> Policy:
    """The greedy bot (``GAME.bots()``) for an in-process playout: it sees only its seat's
    view of the state, as a networked bot does."""
    choose = GAME.bots()["greedy"](seed)

    def policy(state: Any, player: str, legal: Sequence[Any]) -> Any:
        return choose(GAME.view(state, player), player, legal)

    return policy
