"""``tabletop simulate``: many in-process matches with seeded chance (no services)."""

from __future__ import annotations

import argparse
import importlib
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict
from typing import Any

from services.cli.bots import view_policy_for
from services.games.playout import Policy, play, random_policy
from services.games.registry import get_game


def simulate(args: argparse.Namespace, progress: Callable[[int], None]) -> dict[str, Any]:
    if args.game == "drillit":
        module = importlib.import_module("services.games.drillit.simulate")
        report = module.simulate(
            games=args.games,
            difficulty=args.difficulty,
            distance=args.distance,
            bot=args.bot,
            players=args.seats or 3,
            seed=args.seed,
            progress=progress,
        )
        return dict(asdict(report))
    game = get_game(args.game)
    seats = [f"player{i + 1}" for i in range(args.seats or game.min_players)]

    def policy(seed: int) -> Policy:
        if args.bot == "random":
            return random_policy(seed)
        # The same bot a networked player gets: it decides from the player's view.
        decide = view_policy_for(args.game, args.bot, seed)
        return lambda state, player, legal: decide(game.view(state, player), player, legal)

    wins = 0
    turns: list[float] = []
    reasons: Counter[str] = Counter()
    for i in range(args.games):
        seed = args.seed + i
        outcome = play(
            game, seats, {}, {s: policy(seed * 31 + n) for n, s in enumerate(seats)}, seed
        )
        wins += "won" in outcome.outcome.results.values()
        reasons[outcome.outcome.reason] += 1
        turns.append(game.statistics(outcome.state).get("turns", 0.0))
        progress(i + 1)
    return {
        "game": args.game,
        "bot": args.bot,
        "games": args.games,
        "wins": wins,
        "win_rate": wins / args.games if args.games else 0.0,
        "mean_turns": sum(turns) / len(turns) if turns else 0.0,
        "end_reasons": dict(reasons),
    }
