"""Folding events into the state. Never refuses: events are facts."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import at, mine_of
from services.games.imperial_miners.mine import replace as replace_card
from services.games.imperial_miners.stages import Phases, Stages
from services.games.imperial_miners.state import (
    Chain,
    ImperialMinersState,
    PendingDraw,
    PlacedCard,
    Stage,
)


def changed(state: ImperialMinersState, **changes: Any) -> ImperialMinersState:
    """``dataclasses.replace`` for the state, which every event goes through: the instance
    dict merged with ``changes``, without running ``__init__`` with every field again (a
    tenth of the cost; the state has no ``__post_init__`` to honour). Here, compiled with
    the folds that call it, not beside the state (a Python function's call costs more).
    mypy cannot check the names in ``changes``: a test folds every event of many matches
    and checks each state has exactly the state's fields (test_im_folded.py), so a misspelt
    one cannot pass."""
    new = object.__new__(ImperialMinersState)
    object.__setattr__(new, "__dict__", state.__dict__ | changes)  # past the frozen setattr
    return new


LEVEL_DECKS = ("level_1", "level_2", "level_3")
#: the face-up Level IV cards every match begins with (listed from the content once)
_LEVEL_4: Final = CONTENT.deck(4)


Fold = Callable[[ImperialMinersState, Any], ImperialMinersState]


def evolve(s: ImperialMinersState, e: Any) -> ImperialMinersState:
    # a table by the event's class, not ``match``: its class patterns test the cases one by
    # one, and every event of every match comes here
    fold = _FOLDS.get(type(e))
    if fold is None:
        raise TypeError(f"unknown event {e!r}")
    return fold(s, e)


def _sides_rolled(s: ImperialMinersState, e: ev.ProgressSidesRolled) -> ImperialMinersState:
    return changed(s, sides=e.sides)


def _pile_shuffled(s: ImperialMinersState, e: ev.PileShuffled) -> ImperialMinersState:
    discards = {**s.discards, e.deck: ()} if e.from_discard else s.discards
    return changed(
        s,
        shuffled=s.shuffled | {e.deck},
        piles={**s.piles, e.deck: e.size},
        discards=discards,
    )


def _draw_cut_short(s: ImperialMinersState, e: ev.DrawCutShort) -> ImperialMinersState:
    return changed(s, draws=s.draws[1:])


def _kept(s: ImperialMinersState, e: ev.CardsKept) -> ImperialMinersState:
    p = e.player
    discards = dict(s.discards)
    for card in e.discarded:
        deck = _deck_of(card)
        discards[deck] = (*discards.get(deck, ()), card)
    return changed(s, hands={**s.hands, p: e.kept}, discards=discards, kept=s.kept | {p})


def _dealt(s: ImperialMinersState, e: ev.DealFinished | ev.HandsDealt) -> ImperialMinersState:
    everyone = frozenset(s.players) if s.first_game else frozenset()
    return changed(s, phase=Phases.KEEP, kept=everyone)


def _round_started(s: ImperialMinersState, e: ev.RoundStarted) -> ImperialMinersState:
    return changed(
        s,
        phase=Phases.EVENT,
        round=e.round,
        event=None,
        forced=(),
        chosen={},
        revealed=False,
        chains={},
        end_resolved=False,
    )


def _event_deck_formed(s: ImperialMinersState, e: ev.EventDeckFormed) -> ImperialMinersState:
    return changed(s, piles={**s.piles, "events": e.cards})


def _event_revealed(s: ImperialMinersState, e: ev.EventRevealed) -> ImperialMinersState:
    return changed(
        s,
        event=e.card,
        events_revealed=s.events_revealed + 1,
        piles={**s.piles, "events": s.piles["events"] - 1},
    )


def _mine_phase_started(s: ImperialMinersState, e: ev.MinePhaseStarted) -> ImperialMinersState:
    draws = tuple(PendingDraw(p, "level_1", 1, True) for p in e.forced)  # to play
    return changed(s, phase=Phases.CHOOSE, forced=e.forced, draws=s.draws + draws)


def _chosen(s: ImperialMinersState, e: ev.CardChosen) -> ImperialMinersState:
    return changed(s, chosen={**s.chosen, e.player: e.card})


def _revealed(s: ImperialMinersState, e: ev.CardsRevealed) -> ImperialMinersState:
    cards, costs = e.cards, e.costs
    hands = {p: tuple(c for c in hand if c != cards.get(p)) for p, hand in s.hands.items()}
    coins = {p: n - costs.get(p, 0) for p, n in s.coins.items()}
    # a forced player whose Level I draw was cut short plays nothing this round
    chains = {
        p: Chain(cards[p], Stages.PLACE) if p in cards else Chain("", Stages.DONE)
        for p in s.players
    }
    return changed(s, phase=Phases.MINE, revealed=True, hands=hands, coins=coins, chains=chains)


def _placed(s: ImperialMinersState, e: ev.CardPlaced) -> ImperialMinersState:
    p = e.player
    mine = (*mine_of(s, p), PlacedCard(e.card, e.level, e.column))
    chain = _chain(e.card, Stages.EFFECT, e.level, e.column)
    return changed(s, mines={**s.mines, p: mine}, chains={**s.chains, p: chain})


def _skipped(s: ImperialMinersState, e: ev.EffectSkipped) -> ImperialMinersState:
    return changed(s, chains=_activated(s, e.player))


def _cave_in_removed(s: ImperialMinersState, e: ev.CaveInRemoved) -> ImperialMinersState:
    p = e.player
    placed = at(mine_of(s, p), e.level, e.column)
    assert placed is not None
    mine = replace_card(mine_of(s, p), _cleared(placed))
    return changed(s, mines={**s.mines, p: mine}, chains=_activated(s, p))


def _climbed(s: ImperialMinersState, e: ev.ChainClimbed) -> ImperialMinersState:
    p, level = e.player, e.level
    chain = s.chains[p]
    stage = Stages.SURFACE if level == 0 else Stages.EFFECT
    return changed(s, chains={**s.chains, p: _chain(chain.card, stage, level, e.column)})


def _chain_finished(s: ImperialMinersState, e: ev.ChainFinished) -> ImperialMinersState:
    p = e.player
    return changed(s, chains={**s.chains, p: _at_stage(s.chains[p], Stages.DONE)})


def _end_of_round(s: ImperialMinersState, e: ev.EndOfRoundResolved) -> ImperialMinersState:
    return changed(s, end_resolved=True)


def _round_ended(s: ImperialMinersState, e: ev.RoundEnded) -> ImperialMinersState:
    return s


def _match_ended(s: ImperialMinersState, e: ev.MatchEnded) -> ImperialMinersState:
    return changed(s, phase=Phases.OVER, scores=e.scores, results=e.results, end_reason=e.reason)


def _deck_of(card: str) -> str:
    return f"level_{CONTENT.cards[card].level}"


def _set_up(s: ImperialMinersState, e: ev.MatchSetUp) -> ImperialMinersState:
    deal = CONTENT.first_game_deal if e.first_game else CONTENT.deal
    draws = tuple(
        PendingDraw(p, f"level_{level}", n) for p in e.players for level, n in deal.items()
    )
    zero = dict.fromkeys(e.players, 0)
    return ImperialMinersState(
        players=e.players,
        first_game=e.first_game,
        level_4=_LEVEL_4,
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
    draws = s.draws[1:]
    if rest > 0:
        draws = (PendingDraw(pending.player, pending.deck, rest, pending.to_play), *draws)
    # one new state for the whole draw (each ``changed`` copies every field), named
    # keywords (a call with ``**`` goes through the Python function)
    level_4, piles, chosen, hands = s.level_4, s.piles, s.chosen, s.hands
    if e.deck == "level_4":
        level_4 = level_4[len(e.cards) :]
    else:
        piles = {**piles, e.deck: piles[e.deck] - len(e.cards)}
    if e.to_play:
        chosen = {**chosen, e.player: e.cards[0]}
    else:
        hands = {**hands, e.player: (*hands[e.player], *e.cards)}
    return changed(s, draws=draws, level_4=level_4, piles=piles, chosen=chosen, hands=hands)


def _effect(s: ImperialMinersState, e: ev.EffectResolved) -> ImperialMinersState:
    p, level = e.player, e.level
    mines = s.mines
    mine = mines.get(p, ())
    # only what the effect changes is made anew (most effects gain one or two things)
    if level and (e.machinery or e.cave_in):
        placed = at(mine, level, e.column)
        assert placed is not None
        boosted = PlacedCard(
            placed.card,
            placed.level,
            placed.column,
            placed.machinery + e.machinery,
            placed.cave_in or e.cave_in,
        )
        mine = replace_card(mine, boosted)
    for pos in e.cleared:
        blocked = at(mine, pos.level, pos.column)
        assert blocked is not None
        mine = replace_card(mine, _cleared(blocked))
    if mine is not mines.get(p):
        mines = {**mines, p: mine}
    draws = s.draws
    if e.draws:
        draws += tuple(PendingDraw(p, deck, n) for deck, n in e.draws.items() if n > 0)
    coins, vp, progress = s.coins, s.vp, s.progress
    if e.coins:
        coins = {**coins, p: coins[p] + e.coins}
    if e.vp:
        vp = {**vp, p: vp[p] + e.vp}
    if e.progress:
        progress = {**progress, p: progress[p] + e.progress}
    # the chain moves on when the effect was its card's or its Surface board's
    chains = s.chains
    chain = chains.get(p)
    if chain is not None and (
        (chain.stage is Stages.EFFECT and e.source.startswith("card"))
        or (chain.stage is Stages.SURFACE and e.source == "surface")
    ):
        chains = _activated(s, p)
    return changed(
        s, coins=coins, vp=vp, progress=progress, mines=mines, draws=draws, chains=chains
    )


def _activated(s: ImperialMinersState, p: str) -> dict[str, Chain]:
    """The chains once ``p``'s current card or Surface board is done with."""
    chain = s.chains[p]
    stage = Stages.FINISHING if chain.stage is Stages.SURFACE else Stages.CLIMB
    return {**s.chains, p: _at_stage(chain, stage)}


def _at_stage(chain: Chain, stage: Stage) -> Chain:
    return _chain(chain.card, stage, chain.level, chain.column)


def _chain(card: str, stage: Stage, level: int, column: int) -> Chain:
    """``Chain(card, stage, level, column)`` without calling its ``__init__`` (a Python
    function): the instance dict stored at once, as ``changed`` does. A chain's every step
    makes one."""
    new = object.__new__(Chain)
    fields = {"card": card, "stage": stage, "level": level, "column": column}
    object.__setattr__(new, "__dict__", fields)  # past the frozen setattr
    return new


def _cleared(placed: PlacedCard) -> PlacedCard:
    """The card without its Cave-in token."""
    return PlacedCard(placed.card, placed.level, placed.column, placed.machinery, False)


_FOLDS: dict[type, Fold] = {
    ev.MatchSetUp: _set_up,
    ev.ProgressSidesRolled: _sides_rolled,
    ev.PileShuffled: _pile_shuffled,
    ev.MineCardsDrawn: _drawn,
    ev.DrawCutShort: _draw_cut_short,
    ev.CardsKept: _kept,
    ev.DealFinished: _dealt,
    ev.HandsDealt: _dealt,
    ev.RoundStarted: _round_started,
    ev.EventDeckFormed: _event_deck_formed,
    ev.EventRevealed: _event_revealed,
    ev.EffectResolved: _effect,
    ev.MinePhaseStarted: _mine_phase_started,
    ev.CardChosen: _chosen,
    ev.CardsRevealed: _revealed,
    ev.CardPlaced: _placed,
    ev.EffectSkipped: _skipped,
    ev.CaveInRemoved: _cave_in_removed,
    ev.ChainClimbed: _climbed,
    ev.ChainFinished: _chain_finished,
    ev.EndOfRoundResolved: _end_of_round,
    ev.RoundEnded: _round_ended,
    ev.MatchEnded: _match_ended,
}
assert set(_FOLDS) == set(ev.EVENT_TYPES), "every event has its fold"
