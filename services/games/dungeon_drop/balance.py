"""Balance by simulation: greedy bots play many matches; win rates by Race, Class and
Quest, each against the fair share (1 / players). Run:
``python -m services.games.dungeon_drop.balance 200``."""

from __future__ import annotations

import sys
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from services.games.dungeon_drop import GAME
from services.games.playout import Policy, play


def _state_policy(bot: str, seed: int) -> Policy:
    choose = GAME.bots()[bot](seed)

    def policy(state: Any, player: str, legal: Sequence[Any]) -> Any:
        return choose(GAME.view(state, player), player, legal)

    return policy


def simulate(matches: int, bot: str = "greedy") -> dict[str, dict[str, tuple[int, float, float]]]:
    """column -> value -> (seats, win rate, win rate / fair share)."""
    seats: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    wins: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    fair: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for seed in range(matches):
        count = 2 + seed % 3
        players = [f"p{i}" for i in range(count)]
        policies = {p: _state_policy(bot, seed * 10 + i) for i, p in enumerate(players)}
        result = play(GAME, players, {}, policies, seed, match_id=f"balance-{seed}")
        for row in GAME.seat_summaries(result.state):
            for column in ("race", "class", "quest"):
                value = str(row[column])
                seats[column][value] += 1
                wins[column][value] += float(row["won"])
                fair[column][value] += 1.0 / count
    return {
        column: {
            value: (n, wins[column][value] / n, wins[column][value] / fair[column][value])
            for value, n in sorted(seats[column].items())
        }
        for column in seats
    }


def report(table: dict[str, dict[str, tuple[int, float, float]]]) -> str:
    lines = []
    for column, rows in table.items():
        lines.append(f"{column:<12} seats  win%  vs fair")
        for value, (n, rate, ratio) in sorted(rows.items(), key=lambda r: -r[1][2]):
            lines.append(f"  {value:<10} {n:>5} {100 * rate:5.1f} {ratio:6.2f}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(simulate(int(sys.argv[1]) if len(sys.argv) > 1 else 200)))
