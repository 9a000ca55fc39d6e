"""Fit Dungeon Drop's ``Outlook`` (the search's evaluation at 3 and 4 seats) to greedy
matches: who won, against what each decision's state showed (``sampling.prospects``).

    python -m tests.bench.dd_outlook --seats 4 --matches 3000

plays the seeded greedy matches (every seat the greedy bot, the real physics), takes the
state at each hero's decisions, and fits the prospects' weights and the temperature by
maximum likelihood of the winner on the even seeds; it prints the fit and the mean
log-likelihood of the winner on the odd seeds, against the fixed temperature of 2 seats
and against no knowledge (a uniform chance). The figures in ``sampling.OUTLOOKS`` come
from this command.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from services.games.contract import ViewPolicy
from services.games.dungeon_drop import GAME, bots
from services.games.dungeon_drop.sampling import MARGIN_SCALE, Outlook, Prospects, prospects
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.playout import Policy, play

#: the phases at which a hero decides: where a search's playout may stop and evaluate
DECIDING = frozenset((Phase.ACT, Phase.ABILITY, Phase.MEEPLES, Phase.LOOT, Phase.TAKE))


@dataclass(frozen=True)
class Sample:
    seed: int
    seen: Prospects
    winner: str


def samples(seats: int, seeds: range) -> Iterator[Sample]:
    """Each decision's state of the seeded greedy matches (one per hero, round and phase),
    with the match's winner; matches ending in a tie are left out."""
    players = [f"player{i + 1}" for i in range(seats)]
    options = {o.name: o.default for o in GAME.options}
    for seed in seeds:
        policies = {
            p: _from_view(bots.greedy_view_policy(seed * 7 + i)) for i, p in enumerate(players)
        }
        match = play(GAME, players, options, policies, seed, match_id=f"outlook-{seed}")
        winners = [p for p, result in match.outcome.results.items() if result == "won"]
        if len(winners) != 1:
            continue
        state: DungeonDropState = GAME.initial_state()
        last = None
        for event in match.events:
            state = GAME.evolve(state, event)
            key = (state.round, state.turn, state.phase)
            if state.phase in DECIDING and key != last:
                last = key
                yield Sample(seed, prospects(state), winners[0])


def _from_view(policy: ViewPolicy) -> Policy:
    return lambda state, player, legal: policy(GAME.view(state, player), player, legal)


class Data:
    """The samples as arrays: per sample, each hero's standing, best room and turns to
    play (heroes in a fixed order), the turns left, and which hero won."""

    def __init__(self, found: Sequence[Sample], seats: int) -> None:
        heroes = [f"player{i + 1}" for i in range(seats)]
        self.standing = np.array([[s.seen.standing[p] for p in heroes] for s in found])
        self.room = np.array([[s.seen.room[p] for p in heroes] for s in found])
        to_play = np.array([[s.seen.turns_to_play[p] for p in heroes] for s in found])
        self.slot = np.eye(5)[to_play + 1]  # one-hot over the five weights
        self.share_left = np.array([s.seen.turns_left for s in found]) / (3 * seats)
        self.winner = np.array([heroes.index(s.winner) for s in found])
        self.seeds = np.array([s.seed for s in found])

    def subset(self, mask: np.ndarray) -> Data:
        other = object.__new__(Data)
        for name, value in vars(self).items():
            setattr(other, name, value[mask])
        return other

    def log_likelihood(self, theta: np.ndarray) -> float:
        """The winner's mean log-chance; ``theta``: the five weights, log scale, slope."""
        value = self.standing + (self.slot @ theta[:5]) * self.room
        z = value / np.exp(theta[5] + theta[6] * self.share_left)[:, None]
        z -= z.max(axis=1, keepdims=True)
        chosen = z[np.arange(len(z)), self.winner]
        return float(np.mean(chosen - np.log(np.exp(z).sum(axis=1))))


def fit(data: Data, theta: np.ndarray, free: Sequence[int], steps: int = 3000) -> np.ndarray:
    """Gradient ascent (numerical gradients, normalised steps, shrinking) on ``free``."""
    theta = theta.astype(float).copy()
    rate = 0.05
    for step in range(steps):
        here = data.log_likelihood(theta)
        grad = np.zeros_like(theta)
        for j in free:
            nudged = theta.copy()
            nudged[j] += 1e-5
            grad[j] = (data.log_likelihood(nudged) - here) / 1e-5
        norm = float(np.sqrt((grad**2).sum()))
        if norm < 1e-9:
            break
        theta += rate * grad / norm * min(1.0, 10 * norm)
        if step % 1000 == 999:
            rate /= 3
    return theta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seats", type=int, default=4, choices=(3, 4))
    parser.add_argument("--matches", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=100_000, help="the first match's seed")
    args = parser.parse_args()
    data = Data(list(samples(args.seats, range(args.seed, args.seed + args.matches))), args.seats)
    train, test = data.subset(data.seeds % 2 == 0), data.subset(data.seeds % 2 == 1)
    fixed = np.array([0, 0, 0, 0, 0, math.log(MARGIN_SCALE), 0.0])
    theta = fit(train, fit(train, fixed, [5, 6]), range(7))
    w0, w1, w2, w3, w4 = (round(float(w), 3) for w in theta[:5])
    outlook = Outlook((w0, w1, w2, w3, w4), round(float(theta[5]), 3), round(float(theta[6]), 3))
    rounded = np.array([*outlook.weights, outlook.log_scale, outlook.slope])
    print(
        json.dumps(
            {
                "seats": args.seats,
                "matches": args.matches,
                "decisions": len(data.winner),
                "outlook": repr(outlook),
                "held_out_log_likelihood": {
                    "uniform": round(-math.log(args.seats), 4),
                    "fixed_scale": round(test.log_likelihood(fixed), 4),
                    "outlook": round(test.log_likelihood(rounded), 4),
                },
                "scale_by_turns_left": {
                    left: round(outlook.scale(left, args.seats), 2)
                    for left in (1, args.seats, 2 * args.seats, 3 * args.seats)
                },
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
