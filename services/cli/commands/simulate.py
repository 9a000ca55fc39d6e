"""``tabletop simulate``: many matches in-process; the simulation itself is
``services.cli.simulate``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from rich.progress import Progress

from services.cli.commands.shared import console, game_name, game_options
from services.games.registry import all_games

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    sim = sub.add_parser("simulate", help="play many matches in-process (no services)")
    sim.add_argument("game", type=game_name, choices=sorted(all_games()))
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--bot", default="random")
    sim.add_argument("--option", action="append", default=[], help="game option KEY=VALUE")
    sim.add_argument("--difficulty", help="shorthand for --option difficulty=…")
    sim.add_argument("--distance", help="shorthand for --option distance=…")
    sim.add_argument("--seats", type=int, default=None)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument(
        "--levels",
        help="bot levels by seat, e.g. hard,easy (easy|medium|hard): matches between them, "
        "seats rotated, win rates with 95%% intervals (--seats and --bot do not apply)",
    )
    sim.add_argument(
        "--results",
        help="with --levels: a JSON-lines file each finished match is appended to; a run "
        "given the same file resumes where it stopped",
    )
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from services.cli.simulate import Simulation, describe, simulate
    from services.games.contract import MalformedAction

    shorthands = {"difficulty": args.difficulty, "distance": args.distance}
    options = {k: v for k, v in shorthands.items() if v is not None} | game_options(args.option)
    if args.levels:
        return _simulate_levels(args, options)
    sim = Simulation(args.game, args.games, args.bot, options, args.seats, args.seed)
    try:
        with Progress(console=console, transient=True, disable=args.json) as bar:
            task = bar.add_task(f"simulating {args.game}", total=args.games)
            report = simulate(sim, lambda done: bar.update(task, completed=done))
    except (MalformedAction, ValueError) as bad:
        console.print(f"[red]{bad}[/]\n{args.game} {describe(all_games()[args.game])}")
        return 2
    print(json.dumps(report) if args.json else _report_text(report))
    return 0


def _simulate_levels(args: argparse.Namespace, options: dict[str, str]) -> int:
    from services.cli.simulate import Comparison, compare, describe
    from services.games.contract import MalformedAction

    comparison = Comparison(
        args.game, args.games, tuple(args.levels.split(",")), options, args.seed
    )
    try:
        with Progress(console=console, transient=True, disable=args.json) as bar:
            task = bar.add_task(f"{args.game}: {args.levels}", total=args.games)
            report = compare(
                comparison, lambda done: bar.update(task, completed=done), args.results
            )
    except (MalformedAction, ValueError) as bad:
        console.print(f"[red]{bad}[/]\n{args.game} {describe(all_games()[args.game])}")
        return 2
    print(json.dumps(report) if args.json else _levels_text(report))
    return 0


def _levels_text(report: dict[str, Any]) -> str:
    lines = [
        f"{report['game']} {','.join(report['levels'])} {report['options']}: "
        f"{report['games_played']} matches (seeds {report['seed']}+, seats rotated)",
        f"{'level':8s} {'won':>5s} {'rate':>6s} {'95% interval':>15s} {'fair':>5s} "
        f"{'score':>6s} {'CPU/move mean':>13s} {'p99':>6s} {'max':>6s}",
    ]
    for name, row in report["by_level"].items():
        low, high = row["win_rate_95"]
        lines.append(
            f"{name:8s} {row['wins']:5d} {row['win_rate']:6.1%} {low:7.1%}-{high:6.1%} "
            f"{row['fair_share']:5.0%} {row['mean_score']:6.2f} {row['move_cpu_mean_s']:12.3f}s "
            f"{row['move_cpu_p99_s']:5.2f}s {row['move_cpu_max_s']:5.2f}s"
        )
    return "\n".join(lines)


def _report_text(report: dict[str, Any]) -> str:
    lines = []
    for key, value in report.items():
        if key.startswith("by_"):
            lines.append(f"{key:>16}:")
            for group, means in value.items():
                figures = "  ".join(f"{k}={v:.3g}" for k, v in means.items())
                lines.append(f"{'':>18}{group}: {figures}")
        else:
            lines.append(f"{key:>16}: {value}")
    return "\n".join(lines)
