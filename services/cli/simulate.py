"""``tabletop simulate``: many in-process matches with seeded chance (no services), for
every game alike: options from the game's ``OptionSpec``s, bots from ``Game.bots()``
deciding from the player's view like a networked bot, and per-seat rows from
``Game.seat_summaries`` grouped by seat and by each categorical column."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from services.cli.bots import view_policy_for
from services.games.contract import Game
from services.games.playout import Policy, play
from services.games.registry import get_game

Row = dict[str, str | float]


@dataclass(frozen=True)
class Simulation:
    game: str
    games: int
    bot: str = "random"
    options: Mapping[str, str] = field(default_factory=dict)
    seats: int | None = None
    seed: int = 0


def simulate(sim: Simulation, progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Play matches with seeds ``sim.seed`` … ``sim.seed + games - 1``; ``progress`` gets
    the number finished so far. Bad options (MalformedAction) or bots (ValueError) are
    refused before any match is played."""
    game = get_game(sim.game)
    seats = [f"player{i + 1}" for i in range(sim.seats or game.min_players)]
    options = {o.name: o.default for o in game.options} | dict(sim.options)
    game.setup(seats, options)
    view_policy_for(sim.game, sim.bot, 0)

    def policy(seed: int) -> Policy:
        decide = view_policy_for(sim.game, sim.bot, seed)
        return lambda state, player, legal: decide(game.view(state, player), player, legal)

    wins, turns, reasons, rows = 0, 0.0, Counter[str](), list[Row]()
    for i in range(sim.games):
        seed = sim.seed + i
        policies = {s: policy(seed * 31 + n) for n, s in enumerate(seats)}
        result = play(game, seats, options, policies, seed, match_id=f"sim-{seed}")
        wins += "won" in result.outcome.results.values()
        reasons[result.outcome.reason] += 1
        turns += game.statistics(result.state).get("turns", 0.0)
        rows.extend(game.seat_summaries(result.state))
        if progress is not None:
            progress(i + 1)
    n = sim.games
    return {
        "game": sim.game,
        "bot": sim.bot,
        "games": n,
        "seats": len(seats),
        "options": options,
        "wins": wins,
        "win_rate": wins / n if n else 0.0,
        "mean_turns": turns / n if n else 0.0,
        "end_reasons": dict(sorted(reasons.items())),
        **grouped(rows),
    }


def grouped(rows: list[Row]) -> dict[str, dict[str, dict[str, float]]]:
    """Means of the numeric columns by seat (``by_seat``) and by each other text column
    (``by_character`` …), with the number of rows in each group as ``n``."""
    text_columns = sorted({k for r in rows for k, v in r.items() if isinstance(v, str)})
    return {f"by_{column}": _means(rows, column) for column in text_columns}


def _means(rows: list[Row], column: str) -> dict[str, dict[str, float]]:
    groups: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        groups[str(row.get(column, ""))].append(row)
    out = {}
    for key in sorted(groups):
        members = groups[key]
        numeric = sorted({k for r in members for k, v in r.items() if not isinstance(v, str)})
        means = {k: sum(float(r.get(k, 0.0)) for r in members) / len(members) for k in numeric}
        out[key] = {"n": float(len(members)), **means}
    return out


def describe(game: Game[Any]) -> str:
    """The game's options and bots, for ``--help``-like messages."""
    options = ", ".join(
        f"{o.name}={'|'.join(o.choices) or 'TEXT'} (default {o.default})" for o in game.options
    )
    return f"options: {options or 'none'}; bots: {', '.join(sorted(game.bots()))}"
