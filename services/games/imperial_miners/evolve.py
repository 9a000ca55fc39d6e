"""Folding events into the state. Never refuses: events are facts."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import PlacedCard, at
from services.games.imperial_miners.mine import replace as replace_card
from services.games.imperial_miners.state import (
    Chain,
    ImperialMinersState,
    PendingDraw,
    Phase,
    Stage,
)

LEVEL_DECKS = ("level_1", "level_2", "level_3")


def evolve(s: ImperialMinersState, e: Any) -> ImperialMinersState:
    match e:
        case ev.MatchSetUp():
            return _set_up(e)
        case ev.ProgressSidesRolled(sides=sides):
            return replace(s, sides=sides)
        case ev.PileShuffled():
            discards = {**s.discards, e.deck: ()} if e.from_discard else s.discards
            return replace(
                s,
                shuffled=s.shuffled | {e.deck},
                piles={**s.piles, e.deck: e.size},
                discards=discards,
            )
        case ev.MineCardsDrawn():
            return _drawn(s, e)
        case ev.DrawCutShort():
            return replace(s, draws=s.draws[1:])
        case ev.CardsKept(player=p, kept=kept, discarded=discarded):
            discards = dict(s.discards)
            for card in discarded:
                deck = _deck_of(card)
                discards[deck] = (*discards.get(deck, ()), card)
            return replace(s, hands={**s.hands, p: kept}, discards=discards, kept=s.kept | {p})
        case ev.DealFinished() | ev.HandsDealt():
            everyone = frozenset(s.players) if s.first_game else frozenset()
            return replace(s, phase=Phase.KEEP, kept=everyone)
        case ev.RoundStarted(round=n):
            return replace(
                s,
                phase=Phase.EVENT,
                round=n,
                event=None,
                forced=(),
                chosen={},
                revealed=False,
                chains={},
                end_resolved=False,
            )
        case ev.EventDeckFormed(cards=cards):
            return replace(s, piles={**s.piles, "events": cards})
        case ev.EventRevealed(card=card):
            return replace(
                s,
                event=card,
                events_revealed=s.events_revealed + 1,
                piles={**s.piles, "events": s.piles["events"] - 1},
            )
        case ev.EffectResolved():
            return _effect(s, e)
        case ev.MinePhaseStarted(forced=forced):
            draws = tuple(PendingDraw(p, "level_1", 1, to_play=True) for p in forced)
            return replace(s, phase=Phase.CHOOSE, forced=forced, draws=s.draws + draws)
        case ev.CardChosen(player=p, card=card):
            return replace(s, chosen={**s.chosen, p: card})
        case ev.CardsRevealed(cards=cards, costs=costs):
            hands = {p: tuple(c for c in hand if c != cards.get(p)) for p, hand in s.hands.items()}
            coins = {p: n - costs.get(p, 0) for p, n in s.coins.items()}
            # a forced player whose Level I draw was cut short plays nothing this round
            chains = {
                p: Chain(cards[p], Stage.PLACE) if p in cards else Chain("", Stage.DONE)
                for p in s.players
            }
            return replace(
                s, phase=Phase.MINE, revealed=True, hands=hands, coins=coins, chains=chains
            )
        case ev.CardPlaced(player=p, card=card, level=level, column=column):
            mine = (*s.mine(p), PlacedCard(card, level, column))
            chain = Chain(card, Stage.EFFECT, level, column)
            return replace(s, mines={**s.mines, p: mine}, chains={**s.chains, p: chain})
        case ev.EffectSkipped(player=p):
            return _after_activation(s, p)
        case ev.CaveInRemoved(player=p, level=level, column=column):
            placed = at(s.mine(p), level, column)
            assert placed is not None
            mine = replace_card(s.mine(p), replace(placed, cave_in=False))
            return _after_activation(replace(s, mines={**s.mines, p: mine}), p)
        case ev.ChainClimbed(player=p, level=level, column=column):
            chain = s.chains[p]
            stage = Stage.SURFACE if level == 0 else Stage.EFFECT
            return replace(s, chains={**s.chains, p: Chain(chain.card, stage, level, column)})
        case ev.ChainFinished(player=p):
            chain = s.chains[p]
            return replace(s, chains={**s.chains, p: replace(chain, stage=Stage.DONE)})
        case ev.EndOfRoundResolved():
            return replace(s, end_resolved=True)
        case ev.RoundEnded():
            return s
        case ev.MatchEnded(scores=scores, results=results, reason=reason):
            return replace(s, phase=Phase.OVER, scores=scores, results=results, end_reason=reason)
    raise TypeError(f"unknown event {e!r}")


def _deck_of(card: str) -> str:
    return f"level_{CONTENT.cards[card].level}"


def _set_up(e: ev.MatchSetUp) -> ImperialMinersState:
    deal = CONTENT.first_game_deal if e.first_game else CONTENT.deal
    draws = tuple(
        PendingDraw(p, f"level_{level}", n) for p in e.players for level, n in deal.items()
    )
    zero = dict.fromkeys(e.players, 0)
    return ImperialMinersState(
        players=e.players,
        first_game=e.first_game,
        level_4=CONTENT.deck(4),
        discards=dict.fromkeys(LEVEL_DECKS, ()),
        draws=draws,
        hands={p: () for p in e.players},
        coins=dict(zero),
        vp=dict(zero),
        progress=dict(zero),
        mines={p: () for p in e.players},
    )


def _drawn(s: ImperialMinersState, e: ev.MineCardsDrawn) -> ImperialMinersState:
    pending = s.draws[0]
    rest = pending.count - len(e.cards)
    draws = ((replace(pending, count=rest),) if rest > 0 else ()) + s.draws[1:]
    if e.deck == "level_4":
        s = replace(s, level_4=s.level_4[len(e.cards) :])
    else:
        s = replace(s, piles={**s.piles, e.deck: s.piles[e.deck] - len(e.cards)})
    if e.to_play:
        return replace(s, draws=draws, chosen={**s.chosen, e.player: e.cards[0]})
    hand = (*s.hands[e.player], *e.cards)
    return replace(s, draws=draws, hands={**s.hands, e.player: hand})


def _effect(s: ImperialMinersState, e: ev.EffectResolved) -> ImperialMinersState:
    p = e.player
    mine = s.mine(p)
    if e.level:
        placed = at(mine, e.level, e.column)
        assert placed is not None
        changed = replace(
            placed, machinery=placed.machinery + e.machinery, cave_in=placed.cave_in or e.cave_in
        )
        mine = replace_card(mine, changed)
    for pos in e.cleared:
        blocked = at(mine, pos.level, pos.column)
        assert blocked is not None
        mine = replace_card(mine, replace(blocked, cave_in=False))
    draws = tuple(PendingDraw(p, deck, n) for deck, n in e.draws.items() if n > 0)
    s = replace(
        s,
        coins={**s.coins, p: s.coins[p] + e.coins},
        vp={**s.vp, p: s.vp[p] + e.vp},
        progress={**s.progress, p: s.progress[p] + e.progress},
        mines={**s.mines, p: mine},
        draws=s.draws + draws,
    )
    chain = s.chains.get(p)
    if chain is None:
        return s
    if chain.stage == Stage.EFFECT and e.source.startswith("card"):
        return _after_activation(s, p)
    if chain.stage == Stage.SURFACE and e.source == "surface":
        return replace(s, chains={**s.chains, p: replace(chain, stage=Stage.FINISHING)})
    return s


def _after_activation(s: ImperialMinersState, p: str) -> ImperialMinersState:
    chain = s.chains[p]
    if chain.stage == Stage.SURFACE:
        return replace(s, chains={**s.chains, p: replace(chain, stage=Stage.FINISHING)})
    return replace(s, chains={**s.chains, p: replace(chain, stage=Stage.CLIMB)})
