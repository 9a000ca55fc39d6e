"""Deciding players' actions and listing the legal ones."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import combinations
from typing import Any, TypeVar, overload

from services.games.contract import AwaitingPlayers, MalformedAction, RuleViolation
from services.games.imperial_miners import actions as act
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.flow import advance_folded, next_step
from services.games.imperial_miners.mine import (
    CARDS,
    at,
    mine_of,
    occupied_above,
    placeable,
    placements,
)
from services.games.imperial_miners.rules import can_play, effect_event, playable, this_round
from services.games.imperial_miners.stages import Phases, Stages
from services.games.imperial_miners.state import ImperialMinersState, Stage


def decide_folded(
    state: ImperialMinersState, player: str, action: Any
) -> tuple[list[Any], ImperialMinersState]:
    """The events of ``action`` and every automatic one after, and the state they lead to."""
    return advance_folded(state, decide_action(state, player, action))


def decide_action(s: ImperialMinersState, player: str, action: Any) -> list[Any]:
    step = next_step(s)
    if not isinstance(step, AwaitingPlayers) or player not in step.players:
        if s.phase is Phases.CHOOSE and player in s.chosen:
            raise RuleViolation("ALREADY_CHOSEN", "You have chosen your card this round.")
        raise RuleViolation("NOT_YOUR_TURN", "You have nothing to do now; others are acting.")
    # the cases tried in turn, the most frequent first (a chain's effects, then its cards)
    match action:
        case act.UseEffect(effect=index):
            return _use(s, player, index)
        case act.PlaceCard(column=column):
            return _place(s, player, column)
        case act.ChooseCard(card=card):
            return _choose(s, player, card)
        case act.KeepCards(cards=cards):
            return _keep(s, player, cards)
        case act.SkipEffect():
            chain = s.chains.get(player) if s.phase is Phases.MINE else None
            if chain is not None and chain.stage is Stages.SURFACE:
                # Mine phase 3c: "the player chooses one of the 3 available effects and
                # resolves it"; only Mine cards' effects are optional
                raise RuleViolation(
                    "SURFACE_EFFECT",
                    "The chain has reached your Surface board: choose one of its 3 effects.",
                )
            _stage(s, player, (Stages.EFFECT,), "activate a card")
            chain = s.chains[player]
            return [ev.EffectSkipped(player, chain.level, chain.column)]
        case act.ClimbTo(column=column):
            _stage(s, player, (Stages.CLIMB,), "choose the card above")
            chain = s.chains[player]
            options = [
                p.column for p in occupied_above(mine_of(s, player), chain.level, chain.column)
            ]
            if column not in options:
                raise RuleViolation(
                    "NOT_ABOVE",
                    f"Activate a card directly above: column {options[0]} or "
                    f"{options[-1]} of level {chain.level - 1}.",
                )
            return [ev.ChainClimbed(player, chain.level - 1, column)]
    raise MalformedAction("UNKNOWN_ACTION", f"{action!r} is not an Imperial Miners action.")


def _stage(s: ImperialMinersState, player: str, stages: tuple[Stage, ...], what: str) -> Stage:
    chain = s.chains.get(player) if s.phase is Phases.MINE else None
    if chain is None or chain.stage not in stages:
        raise RuleViolation("NOT_NOW", f"You cannot {what} now.")
    return chain.stage


def _keep(s: ImperialMinersState, player: str, cards: tuple[str, ...]) -> list[Any]:
    if s.phase is not Phases.KEEP:
        raise RuleViolation("NOT_NOW", "Cards are kept only at setup.")
    hand = list(s.hands[player])
    if len(cards) != CONTENT.keep or len(set(cards)) != len(cards):
        raise MalformedAction("KEEP_FOUR", f"Keep exactly {CONTENT.keep} different cards.")
    if any(card not in hand for card in cards):
        raise RuleViolation("NOT_IN_HAND", "Keep only cards you drew.")
    kept = tuple(c for c in hand if c in cards)
    return [ev.CardsKept(player, kept, tuple(c for c in hand if c not in cards))]


def _choose(s: ImperialMinersState, player: str, card: str) -> list[Any]:
    if s.phase is not Phases.CHOOSE:
        raise RuleViolation("NOT_NOW", "Cards are chosen at the start of the Mine phase.")
    if card not in s.hands[player]:
        raise RuleViolation("NOT_IN_HAND", "Choose a card from your hand.")
    if not can_play(s, player, card):
        raise RuleViolation(
            "CANNOT_PLAY", f"You cannot pay for {CONTENT.cards[card].name} or place it."
        )
    return [ev.CardChosen(player, card)]


def _place(s: ImperialMinersState, player: str, column: int) -> list[Any]:
    _stage(s, player, (Stages.PLACE,), "place a card")
    card = s.chains[player].card
    level = CARDS[card].level
    if not placeable(mine_of(s, player), level, column):
        free = placements(mine_of(s, player), level)
        if at(mine_of(s, player), level, column) is not None:
            reason = f"Column {column} of level {level} already holds a card."
        elif level == 1:
            reason = (
                f"Level I has room anywhere, and a card farther out plays as one at the edge: "
                f"choose a free column from {free[0]} to {free[-1]}."
            )
        else:
            reason = f"Level {level} has no place at column {column} with a card directly above."
        raise RuleViolation("BAD_PLACE", reason)
    out: list[Any] = [ev.CardPlaced(player, card, level, column)]
    event = this_round(s)
    if event is not None and event.on_place and event.on_place_level in (0, level):
        out.append(effect_event(s, player, event.on_place, f"event {event.id}"))
    return out


def _use(s: ImperialMinersState, player: str, index: int) -> list[Any]:
    stage = _stage(s, player, (Stages.EFFECT, Stages.SURFACE), "resolve an effect")
    chain = s.chains[player]
    if stage is Stages.SURFACE:
        if not 0 <= index < len(CONTENT.surface):
            raise MalformedAction("BAD_EFFECT", "The Surface board has effects 0, 1 and 2.")
        return [effect_event(s, player, CONTENT.surface[index], "surface")]
    placed = at(mine_of(s, player), chain.level, chain.column)
    assert placed is not None
    effects = CARDS[placed.card].effects
    if not 0 <= index < len(effects):
        raise MalformedAction("BAD_EFFECT", f"This card has {len(effects)} effect(s).")
    return [effect_event(s, player, effects[index], f"card {placed.card}", placed)]


def legal(s: ImperialMinersState, player: str) -> tuple[Any, ...]:
    choices = legal_choices(s, player)
    return choices if isinstance(choices, tuple) else tuple(choices)


def legal_choices(state: ImperialMinersState, player: str) -> Sequence[Any]:
    """``legal``'s actions in its order, the many built only when read (a random policy
    reads one): a hand's keeps (70 of 8 cards) and Level I's free columns (~24)."""
    step = next_step(state)
    if not isinstance(step, AwaitingPlayers) or player not in step.players:
        return ()
    phase = state.phase
    if phase is Phases.KEEP:
        return Built(act.KeepCards, tuple(combinations(state.hands[player], CONTENT.keep)))
    if phase is Phases.CHOOSE:
        return Built(act.ChooseCard, playable(state, player))
    chain = state.chains[player]
    stage = chain.stage
    if stage is Stages.PLACE:
        level = CARDS[chain.card].level
        return Built(act.PlaceCard, placements(mine_of(state, player), level))
    if stage is Stages.CLIMB:
        options = occupied_above(mine_of(state, player), chain.level, chain.column)
        return tuple(act.ClimbTo(p.column) for p in options)
    if stage is Stages.SURFACE:  # chosen and resolved, never skipped
        return _USE_EFFECTS[: len(CONTENT.surface)]
    placed = at(mine_of(state, player), chain.level, chain.column)
    assert placed is not None
    return _CARD_CHOICES[len(CARDS[placed.card].effects)]


#: the effect choices, made once (actions are values): a chain offers them at every card
_USE_EFFECTS = tuple(
    act.UseEffect(i)
    for i in range(max(len(CONTENT.surface), *(len(c.effects) for c in CONTENT.cards.values())))
)
_SKIP_EFFECT = act.SkipEffect()
#: a Mine card's choices by its number of effects: each effect, or skipping them
_CARD_CHOICES = tuple((*_USE_EFFECTS[:n], _SKIP_EFFECT) for n in range(len(_USE_EFFECTS) + 1))

T = TypeVar("T")


class Built(Sequence[T]):
    """The actions ``make(arg)`` for each of ``args``, in order, each built when read."""

    __slots__ = ("_args", "_make")

    def __init__(self, make: Callable[[Any], T], args: tuple[Any, ...]) -> None:
        self._make = make
        self._args = args

    def __len__(self) -> int:
        return len(self._args)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return tuple(map(self._make, self._args[index]))
        return self._make(self._args[index])

    def __iter__(self) -> Iterator[T]:
        return map(self._make, self._args)

    def __repr__(self) -> str:
        return f"Built({tuple(self)!r})"
