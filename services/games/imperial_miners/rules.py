"""The rules' questions about a state: what a card costs, which cards a player can play,
what an effect gives, and how a match is scored."""

from __future__ import annotations

from typing import Final

from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT, Effect, EventCard, effect_text
from services.games.imperial_miners.effects import Context, resolve
from services.games.imperial_miners.mine import (
    CARDS,
    can_place,
    card_cost,
    complete_carts,
    mine_of,
)
from services.games.imperial_miners.state import ImperialMinersState, Mine, PlacedCard

#: the Event cards by id (as ``mine.CARDS``: a constant, not two look-ups at every step)
_EVENTS: Final = CONTENT.events


def event_card(s: ImperialMinersState) -> EventCard | None:
    event = s.event
    return _EVENTS[event] if event is not None else None


def this_round(s: ImperialMinersState) -> EventCard | None:
    card = event_card(s)
    return card if card is not None and card.kind == "this_round" else None


def cost(s: ImperialMinersState, player: str, card: str) -> int:
    event = this_round(s)
    level = CARDS[card].level
    discount = event.discount if event is not None and event.discount_level == level else 0
    return card_cost(card, mine_of(s, player), discount)


def playable(s: ImperialMinersState, player: str) -> tuple[str, ...]:
    """Cards in hand ``player`` can pay for and place (the rest must wait)."""
    mine, coins, event = mine_of(s, player), s.coins[player], this_round(s)
    return tuple(
        card
        for card in dict.fromkeys(s.hands.get(player, ()))
        if _can_play(card, mine, coins, event)
    )


def can_play(s: ImperialMinersState, player: str, card: str) -> bool:
    """``card in playable(s, player)`` for a card in hand, without checking the others."""
    return _can_play(card, mine_of(s, player), s.coins[player], this_round(s))


def any_playable(s: ImperialMinersState, player: str) -> bool:
    """``bool(playable(s, player))``: stops at the first card that can be played."""
    mine, coins, event = mine_of(s, player), s.coins[player], this_round(s)
    return any(_can_play(card, mine, coins, event) for card in s.hands.get(player, ()))


def _can_play(card: str, mine: Mine, coins: int, event: EventCard | None) -> bool:
    # ``cost`` with the round's Event and the seat's Mine and coins read once per hand
    level = CARDS[card].level
    discount = event.discount if event is not None and event.discount_level == level else 0
    return card_cost(card, mine, discount) <= coins and can_place(mine, level)


def effect_event(
    s: ImperialMinersState,
    player: str,
    effect: Effect,
    source: str,
    card: PlacedCard | None = None,
) -> ev.EffectResolved:
    ctx = Context(mine_of(s, player), s.progress[player], s.sides, card)
    res = resolve(effect, ctx)
    draws = res.draws  # (sorted by deck: one or none needs no sort)
    # positional, in the event's field order: keyword arguments are matched to the
    # __init__'s parameters name by name, at every effect of every match
    return ev.EffectResolved(
        player,
        source,
        effect_text(effect),
        res.coins,
        res.vp,
        res.progress,
        tuple(res.rewards),
        res.machinery,
        res.cave_in,
        tuple(ev.MinePos(level, column) for level, column in res.cleared),
        dict(sorted(draws.items())) if len(draws) > 1 else dict(draws),
        card.level if card is not None else 0,  # level
        card.column if card is not None else 0,  # column
    )


def final_scores(s: ImperialMinersState) -> tuple[dict[str, int], dict[str, int]]:
    carts = {p: complete_carts(mine_of(s, p)) for p in s.players}
    return {p: s.vp[p] + CONTENT.cart_vp * carts[p] for p in s.players}, carts


def solo_band(score: int) -> str:
    reached = [name for name, low in CONTENT.solo_bands.items() if score >= low]
    return reached[-1]


def match_ended(s: ImperialMinersState) -> ev.MatchEnded:
    """Most VP wins. House tie-break (labelled; the extract prints none): most coins,
    then furthest on the Progress boards; players still level share a draw. Solo: the
    house bands name the result, winning from ``solo_win_from`` up."""
    scores, carts = final_scores(s)
    if len(s.players) == 1:
        (player,) = s.players
        band = solo_band(scores[player])
        bands = list(CONTENT.solo_bands)
        won = bands.index(band) >= bands.index(CONTENT.solo_win_from)
        reason = f"solo score {scores[player]}: {band} (house bands)"
        return ev.MatchEnded(scores, carts, {player: "won" if won else "lost"}, reason)

    def rank(p: str) -> tuple[int, int, int]:
        return (scores[p], s.coins[p], s.progress[p])

    best = max(rank(p) for p in s.players)
    top = [p for p in s.players if rank(p) == best]
    mark = "won" if len(top) == 1 else "draw"
    results = {p: mark if p in top else "lost" for p in s.players}
    tied = sum(1 for p in s.players if scores[p] == best[0])
    reason = "most VP after 10 rounds"
    if tied > 1:
        reason += " (tie broken by coins, then Progress: house rule)"
    return ev.MatchEnded(scores, carts, results, reason)
