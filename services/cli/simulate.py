"""``tabletop simulate``: many in-process matches with seeded chance (no services), for
every game alike: options from the game's ``OptionSpec``s, bots from ``Game.bots()``
deciding from the player's view like a networked bot, and per-seat rows from
``Game.seat_summaries`` grouped by seat and by each categorical column."""

from __future__ import annotations

import json
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from services.bots.levels import level, level_policy, levels_for
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


# -- bot levels against each other -------------------------------------------------------


@dataclass(frozen=True)
class Comparison:
    """Matches between bot levels (``services.bots.levels``): ``levels[i]`` sits at seat
    ``i`` of the first match, and each match turns the levels one seat further, so every
    level plays every seat equally often. Seeds ``seed`` … ``seed + games - 1``."""

    game: str
    games: int
    levels: tuple[str, ...]
    options: Mapping[str, str] = field(default_factory=dict)
    seed: int = 0

    def key(self) -> dict[str, Any]:
        """What a results file's line must match to count for this comparison."""
        return {"game": self.game, "levels": list(self.levels), "options": dict(self.options)}


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a proportion (sound near 0 and 1, unlike p±2se)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def difference_interval(
    wins: float, n: int, other_wins: float, other_n: int, z: float = 1.96
) -> tuple[float, float]:
    """The 95% interval of the difference of two independent proportions, ``wins / n``
    less ``other_wins / other_n``: Newcombe's hybrid score interval (his method 10), built
    from the two Wilson intervals. Narrower than the lower bound of one less the upper
    bound of the other, which would need both to err at once."""
    p, q = wins / n, other_wins / other_n
    low, high = wilson(wins, n, z)
    other_low, other_high = wilson(other_wins, other_n, z)
    diff = p - q
    return (
        diff - ((p - low) ** 2 + (other_high - q) ** 2) ** 0.5,
        diff + ((high - p) ** 2 + (q - other_low) ** 2) ** 0.5,
    )


def seating(levels: tuple[str, ...], index: int) -> tuple[str, ...]:
    """The levels of match ``index``'s seats: turned ``index`` seats on."""
    k = index % len(levels)
    return levels[k:] + levels[:k]


def compare_match(comparison: Comparison, index: int) -> dict[str, Any]:
    """One match of the comparison: its seats' levels, results, scores and the CPU seconds
    each of its bots' decisions took."""
    game = get_game(comparison.game)
    levels = seating(comparison.levels, index)
    seats = [f"player{i + 1}" for i in range(len(levels))]
    options = {o.name: o.default for o in game.options} | dict(comparison.options)
    seed = comparison.seed + index
    cpu: dict[str, list[float]] = {s: [] for s in seats}

    def policy(seat: str, level: str, bot_seed: int) -> Policy:
        decide = level_policy(comparison.game, level, bot_seed)

        def choose(state: Any, player: str, legal: Any) -> Any:
            view = game.view(state, player)
            began = time.thread_time()
            action = decide(view, player, legal)
            cpu[seat].append(time.thread_time() - began)
            return action

        return choose

    policies = {
        s: policy(s, lv, seed * 31 + n) for n, (s, lv) in enumerate(zip(seats, levels, strict=True))
    }
    result = play(game, seats, options, policies, seed, match_id=f"sim-{seed}")
    return {
        **comparison.key(),
        "index": index,
        "seed": seed,
        "seats": dict(zip(seats, levels, strict=True)),
        "results": result.outcome.results,
        "scores": result.outcome.scores,
        "reason": result.outcome.reason,
        "move_cpu_s": {s: [round(t, 4) for t in times] for s, times in cpu.items()},
    }


def compare(
    comparison: Comparison,
    progress: Callable[[int], None] | None = None,
    results: Any = None,
    stamp: Mapping[str, Any] | None = None,
    counts: Callable[[Mapping[str, Any]], bool] | None = None,
) -> dict[str, Any]:
    """Play the comparison's matches, skipping those already in ``results`` (a path to a
    JSON-lines file, appended to after every match: a run stopped at any point resumes
    where it was), and report per level: matches won with a 95% interval, mean score,
    CPU seconds per decision. ``stamp`` is written into each new row (what code played
    it: a bot's strength under a CPU budget depends on the engine's speed); ``counts``
    says which rows already in ``results`` are played (None: all; a changed bot plays the
    same seeds again)."""
    game = get_game(comparison.game)
    if not game.min_players <= len(comparison.levels) <= game.max_players:
        raise ValueError(
            f"{comparison.game} seats {game.min_players}-{game.max_players} players, "
            f"not {len(comparison.levels)}"
        )
    for name in comparison.levels:
        level(name)
        if name not in levels_for(comparison.game):
            raise ValueError(
                f"{comparison.game} offers bot levels {', '.join(levels_for(comparison.game))}"
            )
    options = {o.name: o.default for o in game.options} | dict(comparison.options)
    game.setup([f"player{i + 1}" for i in range(len(comparison.levels))], options)
    path = Path(results) if results is not None else None
    done: dict[int, dict[str, Any]] = {}
    if path is not None and path.exists():
        for line in path.read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if (
                row
                and all(row.get(k) == v for k, v in comparison.key().items())
                and comparison.seed <= row["seed"] < comparison.seed + comparison.games
                and (counts is None or counts(row))
            ):
                done[row["index"]] = row
    if progress is not None:
        progress(len(done))
    for index in range(comparison.games):
        if index in done:
            continue
        row = compare_match(comparison, index) | dict(stamp or {})
        done[index] = row
        if path is not None:
            with path.open("a") as out:
                out.write(json.dumps(row) + "\n")
        if progress is not None:
            progress(len(done))
    return comparison_report(comparison, [done[i] for i in sorted(done)])


def comparison_report(comparison: Comparison, rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Per level: matches won by one of its seats (each match once, so the 95% Wilson
    interval is of independent trials; cooperative seats win or lose together) against
    its fair share (its seats over all seats), mean score, and CPU seconds per decision
    (mean, 99th percentile, most)."""
    by_level: dict[str, dict[str, Any]] = {}
    seats_total = len(comparison.levels)
    for name in dict.fromkeys(comparison.levels):
        n = len(rows)
        wins = sum(
            1
            for row in rows
            if any(row["results"].get(s) == "won" for s, lv in row["seats"].items() if lv == name)
        )
        scores = [
            row["scores"].get(s, 0) for row in rows for s, lv in row["seats"].items() if lv == name
        ]
        times = sorted(
            t
            for row in rows
            for s, lv in row["seats"].items()
            if lv == name
            for t in row["move_cpu_s"][s]
        )
        low, high = wilson(wins, n)
        by_level[name] = {
            "matches": n,
            "wins": wins,
            "win_rate": wins / n if n else 0.0,
            "win_rate_95": [round(low, 4), round(high, 4)],
            "fair_share": comparison.levels.count(name) / seats_total,
            "mean_score": sum(scores) / len(scores) if scores else 0.0,
            "decisions": len(times),
            "move_cpu_mean_s": sum(times) / len(times) if times else 0.0,
            "move_cpu_p99_s": times[int(0.99 * (len(times) - 1))] if times else 0.0,
            "move_cpu_max_s": times[-1] if times else 0.0,
        }
    return {
        "game": comparison.game,
        "levels": list(comparison.levels),
        "options": dict(comparison.options),
        "games_played": len(rows),
        "games_asked": comparison.games,
        "seed": comparison.seed,
        "by_level": by_level,
    }
