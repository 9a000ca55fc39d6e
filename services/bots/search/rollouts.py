"""Determinized rollout search: which of the seat's actions, followed by the game's own
bots to the end, wins most often over states sampled from what the seat sees.

A round samples one determinization (``determinization``) and one seed for chance and
the bots, and plays every candidate action out from that same state with those same dice
and draws (common random numbers): the candidates are compared on paired outcomes, so
the luck of the draw cancels out of their differences and a few dozen rounds tell them
apart where independent playouts would need thousands. This is the rollout algorithm
(Tesauro and Galperin 1996; Bertsekas's policy improvement) over determinizations
(perfect-information Monte Carlo): it plays at least as well as the bot it rolls out with,
given enough rounds, because that bot's own choice is always a candidate and is only left
for another whose paired advantage is clear.

Rounds go on while the budget lasts. After rounds 2, 4, 8 … the weaker half of the
candidates is dropped (sequential halving), never the bot's own choice.

Other seats act by their bots from their own views of the sampled state; in a
simultaneous step they choose before the seat, so nothing the seat cannot see decides
its choice. Actions with continuous parameters (``ActionTemplate``) are candidates by
samples: each template starts with ``template_samples`` draws, or, where the game proposes
concrete actions (``sampling.proposals``), its best proposals and a few of the rest; the
best of them is kept against fresh draws at each halving.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.bots.search.budget import Allowance, Budget
from services.bots.search.determinization import (
    Determinization,
    Evaluation,
    InconsistentSample,
    Prior,
    Proposals,
    Sampler,
)
from services.bots.search.playout import (
    OutOfTime,
    SearchChance,
    StatePolicy,
    Stopped,
    play_out,
    uniform,
)
from services.games.contract import (
    ActionTemplate,
    Game,
    Outcome,
    RuleViolation,
    ViewPolicy,
    concrete,
)

_RESULT_VALUE = {"won": 1.0, "draw": 0.5, "lost": 0.0}


@dataclass(frozen=True)
class SearchSettings:
    budget: Budget
    #: the game bot (``Game.bots()``) that plays the matches out, for every seat
    rollout: str = "greedy"
    #: the share of a reward that scores give (the rest is the result)
    score_weight: float = 0.1
    #: another candidate replaces the bot's own choice only if its paired advantage is
    #: this many standard errors above zero
    confidence: float = 1.0
    #: concrete samples of each action template to start with
    template_samples: int = 6
    #: with the game's proposals: of the places for template samples, this many go to a
    #: uniform draw of the proposals past the best (what the game's glance misjudges)
    uniform_samples: int = 3
    #: at most this many candidates are played out in a round (the bot's choice and a
    #: draw of the others, see ``rank_candidates``: a placement game may offer hundreds)
    max_candidates: int = 24
    #: a playout still running after this many actions is scored as a draw
    max_playout_actions: int = 5_000
    #: with a game that can evaluate a match under way (``sampling.evaluate``): playouts
    #: stop after this many steps (decisions and chance outcomes) and take its evaluation
    #: (None: play to the end)
    horizon: int | None = None
    #: with an evaluation or a prior: past ``max_candidates``, the actions that look best
    #: at a glance (``Search._glance``) are played out rather than a uniform draw of them
    #: (a Dungeon Drop Loot step offers ~70 rooms, a Drillit! dig ~50 cells and turns, most
    #: of them worth little)
    rank_candidates: bool = True
    #: a playout reaching its horizon goes on while the seat is to act: an action that
    #: takes a few steps to pay (a Dungeon Drop ability's flicks before the Loot) is not
    #: cut off before it does, against one that pays at once
    finish_own_turn: bool = True


def reward(outcome: Outcome | None, player: str, score_weight: float) -> float:
    """The seat's reward in [0, 1]: its result, and a little of its score (its share of
    the seats it outscored, or for a lone seat its score squashed into [0, 1))."""
    if outcome is None:
        return 0.5
    result = _RESULT_VALUE.get(outcome.results.get(player, "lost"), 0.0)
    scores = outcome.scores
    if player not in scores or score_weight <= 0:
        return result
    mine = scores[player]
    others = [s for p, s in scores.items() if p != player]
    if others:
        share = sum(1.0 if mine > s else 0.5 if mine == s else 0.0 for s in others) / len(others)
    else:
        share = mine / (abs(mine) + 1.0) if mine > 0 else 0.0
    return (1.0 - score_weight) * result + score_weight * share


def state_policy(game: Game[Any], view_policy: ViewPolicy) -> StatePolicy:
    """A view-based bot playing from full states: it is shown only the seat's view."""
    view = game.view

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        return view_policy(view(state, player), player, legal)

    return choose


class _SeatPolicies(dict[str, StatePolicy]):
    """Seat -> policy, each made on the seat's first turn."""

    def __init__(self, make: Callable[[], StatePolicy]) -> None:
        super().__init__()
        self._make = make

    def __missing__(self, seat: str) -> StatePolicy:
        policy = self[seat] = self._make()
        return policy


def random_policies(rng: random.Random) -> Mapping[str, StatePolicy]:
    """Every seat uniform over its legal actions, drawing from ``rng``."""
    choose = uniform(rng)
    return _SeatPolicies(lambda: choose)


class _Candidate:
    __slots__ = ("action", "diffs", "rounds", "squares", "template", "total")

    def __init__(self, action: Any, template: ActionTemplate | None) -> None:
        self.action = action
        self.template = template
        self.rounds = 0
        self.total = 0.0  # rewards
        self.diffs = 0.0  # paired differences with the bot's own choice
        self.squares = 0.0  # their squares

    @property
    def mean(self) -> float:
        return self.total / self.rounds if self.rounds else 0.0

    def advantage(self) -> tuple[float, float]:
        """The mean paired advantage over the bot's choice, and its standard error."""
        n = self.rounds
        if n < 2:
            return 0.0, math.inf
        mean = self.diffs / n
        variance = max(0.0, (self.squares - n * mean * mean) / (n - 1))
        return mean, math.sqrt(variance / n)


class Search:
    """One seat's search bot for one game; calling it is a ``ViewPolicy``."""

    def __init__(
        self,
        game: Game[Any],
        sampler: Sampler,
        settings: SearchSettings,
        seed: int,
        evaluation: Evaluation | None = None,
        prior: Prior | None = None,
        proposals: Proposals | None = None,
    ) -> None:
        self.game = game
        #: the engine (and its bots) the playouts run on: the game's own, or a coarser
        #: one where the game offers it (``Game.rollout_engine``: Dungeon Drop's physics)
        self.engine = game.rollout_engine()
        self.sampler = sampler
        self.settings = settings
        self._horizon = settings.horizon if evaluation is not None else None
        self._evaluate = evaluation
        self._prior = prior
        self._proposals = proposals
        self._rng = random.Random(seed)
        bots = game.bots()
        if settings.rollout != "random" and settings.rollout not in bots:
            raise ValueError(f"{game.name} has no {settings.rollout!r} bot to play out with")
        make_bot = bots.get(settings.rollout)
        #: the bot the search improves on, deciding for this seat from the real view
        self._own = make_bot(self._rng.getrandbits(32)) if make_bot else None
        #: the same bot for every seat of the playouts (the rollout engine's)
        self._rollout_bot = self.engine.bots().get(settings.rollout)
        #: what the last decision cost: rounds, and determinizations the engine refused
        self.last_rounds = 0
        self.last_inconsistent = 0
        self.last_candidates: list[_Candidate] = []

    def __call__(self, view: Any, player: str, legal: Sequence[Any]) -> Any:
        return self.choose(view, player, legal)

    def choose(self, view: Any, player: str, legal: Sequence[Any]) -> Any:
        rng = random.Random(self._rng.getrandbits(64))
        entries = list(legal)
        if not entries:
            raise ValueError(f"{player} has no legal action to choose from")
        own = (
            self._own(view, player, legal)
            if self._own is not None
            else concrete(entries[rng.randrange(len(entries))], rng)
        )
        if len(entries) == 1 and not isinstance(entries[0], ActionTemplate):
            self.last_rounds = self.last_inconsistent = 0
            self.last_candidates = []
            return own
        allowance = self.settings.budget.start()
        proposed = (
            self._proposals(view, player, legal, rng)
            if self._proposals is not None and any(isinstance(e, ActionTemplate) for e in entries)
            else ()
        )
        candidates = self._candidates(
            entries, own, rng, self._glance(view, player, legal, rng), proposed
        )
        rounds = inconsistent = 0
        next_halving = 2
        while len(candidates) > 1 and allowance.another():
            determinization = self.sampler(view, player, legal, rng)
            seed = rng.getrandbits(64)
            values: list[float] = []
            try:
                for candidate in candidates:
                    values.append(
                        self._play(determinization, player, candidate.action, seed, allowance)
                    )
            except OutOfTime:
                break  # a round half played compares nothing: it is dropped
            except (InconsistentSample, RuleViolation):
                inconsistent += 1
                continue
            base = values[0]
            for candidate, value in zip(candidates, values, strict=True):
                candidate.rounds += 1
                candidate.total += value
                diff = value - base
                candidate.diffs += diff
                candidate.squares += diff * diff
            rounds += 1
            if rounds == next_halving:
                next_halving *= 2
                candidates = self._halved(candidates, entries, rng)
        self.last_rounds, self.last_inconsistent = rounds, inconsistent
        self.last_candidates = candidates
        return self._best(candidates)

    # -- candidates -------------------------------------------------------------------

    def _candidates(
        self,
        entries: Sequence[Any],
        own: Any,
        rng: random.Random,
        value: Callable[[Any], float] | None = None,
        proposed: Sequence[Any] = (),
    ) -> list[_Candidate]:
        """The bot's own choice first, then the other actions (templates sampled). Past
        ``max_candidates``, the others are a uniform draw, or with ``value`` (an action's
        worth at a glance) the exact actions that look best and a draw of the samples.
        With ``proposed`` (the game's proposals for the templates, best first), the exact
        actions come first and the proposals fill the places left."""
        others: list[_Candidate] = []
        samples: list[_Candidate] = []
        own_template = None
        templates = [e for e in entries if isinstance(e, ActionTemplate)]
        for entry in entries:
            if isinstance(entry, ActionTemplate):
                if entry.admits(own):
                    own_template = entry
                if not proposed:
                    for _ in range(self.settings.template_samples):
                        samples.append(_Candidate(entry.sample(rng), entry))
            elif entry != own:
                others.append(_Candidate(entry, None))
        limit = self.settings.max_candidates - 1
        if proposed:
            if len(others) > limit:
                others = self._trimmed(others, limit, rng, value)
            aimed = self._aimed(proposed, templates, limit - len(others), rng)
            return [_Candidate(own, own_template), *others, *aimed]
        if len(others) + len(samples) > limit:
            keep_samples = round(limit * len(samples) / (len(others) + len(samples)))
            samples = rng.sample(samples, keep_samples)
            others = self._trimmed(others, limit - keep_samples, rng, value)
        return [_Candidate(own, own_template), *others, *samples]

    @staticmethod
    def _trimmed(
        others: list[_Candidate],
        count: int,
        rng: random.Random,
        value: Callable[[Any], float] | None,
    ) -> list[_Candidate]:
        """``count`` of the exact actions: those that look best, else a uniform draw."""
        if value is None:
            return rng.sample(others, count)
        return sorted(others, key=lambda c: -value(c.action))[:count]

    def _aimed(
        self,
        proposed: Sequence[Any],
        templates: Sequence[ActionTemplate],
        places: int,
        rng: random.Random,
    ) -> list[_Candidate]:
        """The best proposals, and ``uniform_samples`` of the rest drawn uniformly."""
        best = max(0, places - self.settings.uniform_samples)
        rest = list(proposed[best:])
        chosen = [*proposed[:best], *rng.sample(rest, min(len(rest), places - best))]
        aimed = []
        for action in chosen:
            template = next((t for t in templates if t.admits(action)), None)
            if template is None:
                raise ValueError(f"a proposal fits none of the step's templates: {action!r}")
            aimed.append(_Candidate(action, template))
        return aimed

    def _glance(
        self, view: Any, player: str, legal: Sequence[Any], rng: random.Random
    ) -> Callable[[Any], float] | None:
        """An action's worth at a glance (None without a prior or an evaluation): the
        game's prior, from the view; else the evaluation of the state the action leads to,
        before any chance it meets, in one sampled state."""
        if not self.settings.rank_candidates:
            return None
        if self._prior is not None:
            return self._prior(view, player, legal)
        evaluate = self._evaluate
        if evaluate is None:
            return None
        decide_folded = self.engine.decide_folded
        sampled: list[Any] = []

        def value(action: Any) -> float:
            if not sampled:  # on the first glance: most decisions need none
                sampled.append(self.sampler(view, player, legal, rng).state)
            try:
                return evaluate(decide_folded(sampled[0], player, action)[1], player)
            except (InconsistentSample, RuleViolation):
                return -math.inf

        return value

    def _halved(
        self, candidates: list[_Candidate], entries: Sequence[Any], rng: random.Random
    ) -> list[_Candidate]:
        """The bot's choice and the better half of the others (by mean reward over the
        same rounds); fresh samples of templates whose best sample survived, to try
        against it from now on."""
        own, others = candidates[0], sorted(candidates[1:], key=lambda c: -c.mean)
        kept = others[: max(1, len(others) // 2)] if others else []
        fresh = [
            _Candidate(c.template.sample(rng), c.template)
            for c in kept
            if c.template is not None and c is kept[0]
        ]
        return [own, *kept, *fresh]

    def _best(self, candidates: list[_Candidate]) -> Any:
        """The candidate with the best paired advantage over the bot's choice, if that is
        clear; else the bot's choice."""
        own = candidates[0]
        best, best_mean = own, 0.0
        for candidate in candidates[1:]:
            mean, error = candidate.advantage()
            if mean > best_mean and mean > self.settings.confidence * error:
                best, best_mean = candidate, mean
        return best.action

    # -- one playout ------------------------------------------------------------------

    def _play(
        self,
        determinization: Determinization,
        player: str,
        action: Any,
        seed: int,
        allowance: Allowance,
    ) -> float:
        """The seat's reward for ``action`` in the sampled state, the match played out by
        every seat's bot with chance and bots seeded by ``seed`` (the same for every
        candidate of a round); OutOfTime when the budget ends first."""
        game = self.engine
        rng = random.Random(seed)
        ended = play_out(
            game,
            game.decide_folded(determinization.state, player, action)[1],
            SearchChance(determinization.piles, rng),
            self._policies(rng),
            allowance,
            seat=player,
            horizon=self._horizon,
            finish_own_turn=self.settings.finish_own_turn,
            max_actions=self.settings.max_playout_actions,
        )
        if isinstance(ended, Stopped):
            if not ended.at_horizon:  # too long: a draw
                return reward(None, player, self.settings.score_weight)
            assert self._evaluate is not None
            return self._evaluate(ended.state, player)
        return reward(ended, player, self.settings.score_weight)

    def _policies(self, rng: random.Random) -> Mapping[str, StatePolicy]:
        make = self._rollout_bot
        if make is None:
            return random_policies(rng)
        engine = self.engine
        return _SeatPolicies(lambda: state_policy(engine, make(rng.getrandbits(32))))
