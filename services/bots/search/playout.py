"""One search playout: the match from a (sampled) state to its end on the engine alone,
with chance drawn inside the search.

Compiled (``make install``): a search spends its budget in this loop, and in a game whose
steps are cheap the loop's own bookkeeping was a tenth of a playout."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.bots.search.budget import Allowance
from services.bots.search.determinization import InconsistentSample
from services.games.contract import (
    ActionTemplate,
    AwaitingChance,
    CardsDrawn,
    ChanceOutcome,
    ChanceRequest,
    DeckShuffled,
    DiceRolled,
    DrawCards,
    Finished,
    Game,
    Outcome,
    RollDice,
    ShuffleDeck,
)
from services.games.uniform import below

#: chooses an action in a (sampled) state: (state, player, legal) -> action
StatePolicy = Callable[[Any, str, Sequence[Any]], Any]


class OutOfTime(Exception):
    """The decision's budget ended in the middle of a playout."""


@dataclass(frozen=True)
class Stopped:
    """A playout stopped before the match ended: at the horizon (``state`` is where), or
    after ``max_actions``."""

    state: Any
    at_horizon: bool


class SearchChance:
    """Chance outcomes inside a search: dice from ``rng``, shuffles by ``rng``, draws from
    the determinization's piles (then from the piles the search's own shuffles made)."""

    def __init__(self, piles: Mapping[str, Sequence[str]], rng: random.Random) -> None:
        self._piles = {deck: list(cards) for deck, cards in piles.items()}
        self._rng = rng
        self._below = below(rng)  # rng.randint's numbers, less 1

    def resolve(self, request: ChanceRequest) -> ChanceOutcome:
        if isinstance(request, DrawCards):
            pile = self._piles.get(request.deck)
            count = request.count
            if pile is None or len(pile) < count:
                raise InconsistentSample(
                    f"draw of {count} from {request.deck!r}, which holds "
                    f"{0 if pile is None else len(pile)}"
                )
            drawn = tuple(pile[:count])
            del pile[:count]
            return CardsDrawn(request.deck, drawn)
        if isinstance(request, RollDice):
            draw, sides = self._below, request.sides
            return DiceRolled(tuple([draw(sides) + 1 for _ in range(request.count)]))
        if isinstance(request, ShuffleDeck):
            cards = list(request.cards)
            # rng.shuffle's Fisher-Yates with its draws, compiled (a Drillit! playout's
            # nine shuffles in Python were 8% of it)
            draw = self._below
            for i in range(len(cards) - 1, 0, -1):
                j = draw(i + 1)
                cards[i], cards[j] = cards[j], cards[i]
            self._piles[request.deck] = cards
            return DeckShuffled(request.deck, len(cards))
        raise TypeError(f"unknown chance request {request!r}")


def uniform(rng: random.Random) -> StatePolicy:
    """Uniform over the legal actions (templates sampled), with ``rng.randrange``'s
    numbers."""
    draw = below(rng)

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        choice = legal[draw(len(legal))]
        return choice.sample(rng) if isinstance(choice, ActionTemplate) else choice

    return choose


def play_out(
    engine: Game[Any],
    state: Any,
    chance: SearchChance,
    policies: Mapping[str, StatePolicy],
    allowance: Allowance,
    seat: str | None = None,
    horizon: int | None = None,
    finish_own_turn: bool = True,
    max_actions: int = 5_000,
) -> Outcome | Stopped:
    """The match from ``state`` to its end on ``engine`` alone (its rules, not the board's
    command handler: nothing a playout decides is recorded), every seat choosing by its
    policy and chance resolved by ``chance``; OutOfTime when the allowance ends first.

    This loop is what search spends its budget on, so it is also what the engine
    benchmark times (``tests.bench.engine.search_playout``). ``horizon``: stop after that
    many steps (while ``seat`` is to act, go on if ``finish_own_turn``)."""
    next_step, legal_choices = engine.next_step, engine.legal_choices
    decide_folded, resolve_folded = engine.decide_folded, engine.resolve_folded
    # The allowance's clock is read here, every fourth step: a thread's CPU clock is a
    # system call (~0.3 µs), and a Drillit! step costs ~10 µs (read at every step through
    # ``expired``, it was 5% of a playout); a budget overruns by three steps at most.
    deadline: float = allowance.deadline
    resolve = chance.resolve
    for done in range(max_actions):
        if not done & 3 and time.thread_time() >= deadline:
            raise OutOfTime
        step = next_step(state)
        if isinstance(step, AwaitingChance):
            state = resolve_folded(state, resolve(step.request))[1]
        elif isinstance(step, Finished):
            outcome: Outcome = step.outcome
            return outcome
        elif (
            horizon is not None
            and done >= horizon
            and (not finish_own_turn or seat not in step.players)
        ):
            return Stopped(state, True)
        else:
            players: Sequence[str] = step.players
            # in a simultaneous step the others choose before the seat
            actor = players[1] if players[0] == seat and len(players) > 1 else players[0]
            legal = legal_choices(state, actor)
            if not legal:  # a sampled state the real match could not have reached
                raise InconsistentSample(f"{actor} must act and has no legal action")
            state = decide_folded(state, actor, policies[actor](state, actor, legal))[1]
    return Stopped(state, False)
