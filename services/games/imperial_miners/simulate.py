"""Balance by simulation: greedy bots play whole matches with seeded chance, and each
seat's final VP is grouped by the faction most represented in its Mine.

    python -m services.games.imperial_miners.simulate [games] [players ...]
"""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.games.imperial_miners.bots import greedy_view_policy
from services.games.imperial_miners.game import ImperialMiners
from services.games.playout import Policy, play

_GAME = ImperialMiners()


@dataclass(frozen=True)
class BalanceReport:
    games: int
    players: int
    mean_vp: float
    #: faction → (seats whose Mine it dominated, their mean final VP)
    factions: dict[str, tuple[int, float]]

    def spread(self) -> dict[str, float]:
        """Each faction's mean VP relative to the overall mean (0.10 = 10% above)."""
        return {f: mean / self.mean_vp - 1 for f, (_, mean) in self.factions.items()}

    def lines(self) -> list[str]:
        out = [f"{self.players} players, {self.games} games: mean {self.mean_vp:.1f} VP"]
        for faction, (seats, mean) in sorted(self.factions.items()):
            out.append(
                f"  {faction:<11} {seats:>4} seats  {mean:5.1f} VP  "
                f"{100 * (mean / self.mean_vp - 1):+4.0f}%"
            )
        return out


def greedy_policy(seed: int) -> Policy:
    """The view-based greedy bot, fed its own seat's view of the state."""
    choose = greedy_view_policy(seed)

    def policy(state: Any, player: str, legal: Sequence[Any]) -> Any:
        return choose(_GAME.view(state, player), player, legal)

    return policy


def balance(games: int, players: int, seed: int = 0) -> BalanceReport:
    seats = [f"p{i + 1}" for i in range(players)]
    by_faction: dict[str, list[float]] = defaultdict(list)
    for n in range(games):
        policies = {p: greedy_policy(seed + n) for p in seats}
        result = play(_GAME, seats, {}, policies, seed + n, match_id=f"balance-{seed + n}")
        for row in _GAME.seat_summaries(result.state):
            by_faction[str(row["faction"])].append(float(row["score"]))
    scores = [v for values in by_faction.values() for v in values]
    return BalanceReport(
        games=games,
        players=players,
        mean_vp=sum(scores) / len(scores),
        factions={f: (len(v), sum(v) / len(v)) for f, v in by_faction.items()},
    )


def main(argv: Sequence[str]) -> None:
    games = int(argv[0]) if argv else 200
    for players in [int(a) for a in argv[1:]] or [3, 4]:
        print("\n".join(balance(games, players).lines()))


if __name__ == "__main__":
    main(sys.argv[1:])
