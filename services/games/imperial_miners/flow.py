"""Who acts next, and the steps the rules take on their own.

``next_step`` answers the contract's question; ``automatic`` returns the events the rules
produce without any choice (dealing done, the reveal once every seat has chosen, a chain
climbing when only one card lies above, a caved-in card losing its token, round ends).
``advance`` appends them to a decision's or chance outcome's events until a player or
chance must act again.

Simultaneous play: in the choose phase every seat that can play waits at once; in the Mine
phase every seat with an unfinished chain acts at once, each on its own chain.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    ChanceOutcome,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    Finished,
    Outcome,
    RollDice,
    RuleViolation,
    ShuffleDeck,
    Step,
)
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.evolve import LEVEL_DECKS, evolve
from services.games.imperial_miners.mine import at, mine_of, occupied_above
from services.games.imperial_miners.rules import (
    any_playable,
    cost,
    effect_event,
    event_card,
    match_ended,
    this_round,
)
from services.games.imperial_miners.stages import Phases, Stages
from services.games.imperial_miners.state import ImperialMinersState, PendingDraw

SHUFFLED_AT_SETUP = ("events", *LEVEL_DECKS)
ACTING = (Stages.PLACE, Stages.EFFECT, Stages.CLIMB, Stages.SURFACE)


def setup_cards(deck: str) -> tuple[str, ...]:
    if deck == "events":
        return tuple(CONTENT.events)
    return CONTENT.deck(int(deck[-1]))


#: the cards of each deck shuffled at setup (asked at each of those shuffles)
_SETUP_CARDS = {deck: setup_cards(deck) for deck in SHUFFLED_AT_SETUP}
_SETUP_DECKS: Final = frozenset(SHUFFLED_AT_SETUP)


#: the last state asked about and its step: a command asks for the same state's step
#: several times (the caller, legal actions, decide, the handler), and states never change.
#: One tuple, replaced whole, so concurrent callers never see a state with another's step.
_last_step: tuple[ImperialMinersState | None, Step] = (None, AwaitingPlayers((), "none"))


def next_step(state: ImperialMinersState) -> Step:
    global _last_step
    last, step = _last_step
    if last is state:
        return step
    step = _next_step(state)
    _last_step = (state, step)
    return step


# (the compiled rules read a state's field from its instance dict at every mention: the
# hot functions below read each one once)
def _next_step(s: ImperialMinersState) -> Step:
    phase = s.phase
    if phase is Phases.OVER:
        return Finished(Outcome(dict(s.results), s.end_reason, dict(s.scores)))
    if not s.sides:
        return AwaitingChance(RollDice(len(CONTENT.boards), 2, "Progress board sides"))
    shuffled = s.shuffled
    if not shuffled >= _SETUP_DECKS:  # (one test once all are shuffled, at every step)
        for deck in SHUFFLED_AT_SETUP:
            if deck not in shuffled:
                return AwaitingChance(ShuffleDeck(deck, _SETUP_CARDS[deck], f"shuffle {deck}"))
    draws = s.draws
    if draws:
        draw = draws[0]
        if _drawn_without_chance(s, draw):
            # Only between the events of one command: ``automatic`` resolves it next.
            return AwaitingPlayers((), "draw")
        pile = s.piles.get(draw.deck, 0)
        if pile > 0:
            return _draw_step(draw.deck, min(draw.count, pile))
        return AwaitingChance(ShuffleDeck(draw.deck, s.discards[draw.deck], "reshuffle"))
    if phase is Phases.KEEP:
        kept = s.kept
        return _awaiting(tuple(p for p in s.players if p not in kept), "keep")
    if phase is Phases.EVENT:
        return _EVENT_DRAW
    if phase is Phases.CHOOSE:
        chosen, forced = s.chosen, s.forced
        waiting = tuple(p for p in s.players if p not in chosen and p not in forced)
        return _awaiting(waiting, "choose")
    # Between the events of one command a seat may have no chain yet: it is not acting.
    chains = s.chains
    acting = tuple(p for p in s.players if p in chains and chains[p].stage in ACTING)
    return _awaiting(acting, "mine")


#: steps are values: the same ones are made once, not at every step (the Event card's draw,
#: who acts and why; at most ``_STEPS_KEPT`` of them, as seat names differ between matches)
_EVENT_DRAW = AwaitingChance(DrawCards("events", 1, "Event card"))
_STEPS: dict[tuple[tuple[str, ...], str], AwaitingPlayers] = {}
_STEPS_KEPT = 4096


#: a draw of Mine cards by deck and count (3 decks, a few counts)
_DRAW_STEPS: dict[tuple[str, int], AwaitingChance] = {}


def _draw_step(deck: str, count: int) -> AwaitingChance:
    key = (deck, count)
    step = _DRAW_STEPS.get(key)
    if step is None:
        step = AwaitingChance(DrawCards(deck, count, "Mine cards"))
        if len(_DRAW_STEPS) < _STEPS_KEPT:
            _DRAW_STEPS[key] = step
    return step


def _awaiting(players: tuple[str, ...], kind: str) -> AwaitingPlayers:
    key = (players, kind)
    step = _STEPS.get(key)
    if step is None:
        step = AwaitingPlayers(players, kind)
        if len(_STEPS) < _STEPS_KEPT:
            _STEPS[key] = step
    return step


def automatic(s: ImperialMinersState) -> list[Any]:
    phase = s.phase
    if phase is Phases.OVER:
        return []
    # (the sides are rolled and the decks shuffled before the setup ends)
    if phase is Phases.SETUP:
        if s.piles.get("events", 0) > CONTENT.event_deck:
            # setup 3: "draw 10 of them to form the Event deck; return the rest to the box"
            size = s.piles["events"]
            return [ev.EventDeckFormed(CONTENT.event_deck, size - CONTENT.event_deck)]
        if not s.sides or any(d not in s.shuffled for d in SHUFFLED_AT_SETUP):
            return []
    if s.draws:
        return _draw_without_chance(s)
    players = s.players
    if phase is Phases.SETUP:
        dealt = sum((CONTENT.first_game_deal if s.first_game else CONTENT.deal).values())
        return [ev.DealFinished(dealt, dealt if s.first_game else CONTENT.keep)]
    if phase is Phases.KEEP:
        return [ev.RoundStarted(1)] if len(s.kept) == len(players) else []
    if phase is Phases.EVENT:
        if s.event is None:
            return []
        forced = tuple(p for p in players if not any_playable(s, p))
        return [ev.MinePhaseStarted(s.round, forced)]
    if phase is Phases.CHOOSE:
        # forced players' draws are resolved (draws is empty): a card, or none at all
        chosen, forced = s.chosen, s.forced
        if any(p not in chosen and p not in forced for p in players):
            return []
        costs = {p: cost(s, p, card) for p, card in chosen.items() if p not in forced}
        return [ev.CardsRevealed(dict(chosen), costs)]
    return _mine_phase(s, players)


def _drawn_without_chance(s: ImperialMinersState, draw: PendingDraw) -> bool:
    """Level IV cards are identical and face up; an exhausted deck cuts the draw short."""
    return draw.deck == "level_4" or (
        s.piles.get(draw.deck, 0) == 0 and not s.discards.get(draw.deck)
    )


def _draw_without_chance(s: ImperialMinersState) -> list[Any]:
    draw = s.draws[0]
    if not _drawn_without_chance(s, draw):
        return []
    if draw.deck == "level_4":
        cards = s.level_4[: draw.count]
        if cards:
            return [ev.MineCardsDrawn(draw.player, "level_4", cards, draw.to_play)]
    return [ev.DrawCutShort(draw.player, draw.deck, draw.count)]


def _mine_phase(s: ImperialMinersState, players: tuple[str, ...]) -> list[Any]:
    chains = s.chains
    for p in players:
        chain = chains[p]
        stage = chain.stage
        if stage is Stages.EFFECT:
            level, column = chain.level, chain.column
            placed = at(mine_of(s, p), level, column)
            if placed is not None and placed.cave_in:
                return [ev.CaveInRemoved(p, level, column)]
        elif stage is Stages.CLIMB:
            level = chain.level
            if level == 1:
                return [ev.ChainClimbed(p, 0, 0)]
            options = occupied_above(mine_of(s, p), level, chain.column)
            if len(options) == 1:
                return [ev.ChainClimbed(p, options[0].level, options[0].column)]
        elif stage is Stages.FINISHING:
            event = this_round(s)
            bonus = []
            if event is not None and event.on_surface:
                bonus = [effect_event(s, p, event.on_surface, f"event {event.id}")]
            return [*bonus, ev.ChainFinished(p)]
    if any(chains[p].stage is not Stages.DONE for p in players):
        return []
    card = event_card(s)
    assert card is not None
    if not s.end_resolved:
        out: list[Any] = [ev.EndOfRoundResolved(s.round, card.id)]
        if card.kind == "end_of_round":
            out += [effect_event(s, p, card.effect, f"event {card.id}") for p in s.players]
        return out
    if s.round == CONTENT.rounds:
        return [ev.RoundEnded(s.round), match_ended(s)]
    return [ev.RoundEnded(s.round), ev.RoundStarted(s.round + 1)]


def advance(s: ImperialMinersState, events: Iterable[Any]) -> list[Any]:
    """``events`` followed by every automatic event they lead to."""
    return advance_folded(s, events)[0]


def advance_folded(
    s: ImperialMinersState, events: Iterable[Any]
) -> tuple[list[Any], ImperialMinersState]:
    """``advance``, and the state with all those events folded in (folded on the way)."""
    out = list(events)
    for e in out:
        s = evolve(s, e)
    while more := automatic(s):
        for e in more:
            s = evolve(s, e)
        out += more
    return out, s


def resolve_folded(
    state: ImperialMinersState, outcome: ChanceOutcome
) -> tuple[list[Any], ImperialMinersState]:
    """The events of the chance outcome the step awaits and every automatic one after, and
    the state they lead to (here, compiled: every chance node of every match comes here)."""
    step = next_step(state)
    if not isinstance(step, AwaitingChance):
        raise RuleViolation("NO_CHANCE_PENDING", "No dice or cards are awaited now.")
    return advance_folded(state, _resolved(state, step.request, outcome))


def _resolved(s: ImperialMinersState, request: Any, outcome: ChanceOutcome) -> list[Any]:
    # tests of the outcome's type, not ``match (request, outcome)``: a match builds the
    # pair and tries each case's class patterns in turn, at every chance node
    if isinstance(outcome, CardsDrawn):
        if isinstance(request, DrawCards) and outcome.deck == request.deck:
            deck, cards = request.deck, outcome.cards
            if deck == "events" and len(cards) == 1:
                return _event_revealed(s, cards[0])
            if len(cards) == request.count:
                draw = s.draws[0]
                return [ev.MineCardsDrawn(draw.player, deck, cards, draw.to_play)]
    elif isinstance(outcome, DeckShuffled):
        if isinstance(request, ShuffleDeck) and outcome.deck == request.deck:
            deck = request.deck
            return [ev.PileShuffled(deck, outcome.size, deck in s.shuffled)]
    elif isinstance(outcome, DiceRolled):
        values = outcome.values
        if (
            isinstance(request, RollDice)
            and len(values) == request.count
            and all(v in (1, 2) for v in values)
        ):
            return [ev.ProgressSidesRolled(tuple("ab"[v - 1] for v in values))]
    raise RuleViolation("UNEXPECTED_OUTCOME", f"{outcome!r} does not answer {request!r}.")


def _event_revealed(s: ImperialMinersState, card: str) -> list[Any]:
    event = CONTENT.events[card]
    out: list[Any] = [ev.EventRevealed(s.round, card, event.kind)]
    if event.kind == "immediate":
        out += [effect_event(s, p, event.effect, f"event {card}") for p in s.players]
    return out
