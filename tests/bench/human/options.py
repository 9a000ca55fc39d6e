"""``python -m tests.bench``'s options for the capacity run, and the plan they make."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, replace
from pathlib import Path

from services.games.registry import get_game

from .capacity import CapacitySizes
from .generator import DEFAULT_SEATS, Shape

#: ``make bench``: one idle step and two steps of the ramp (about 4 min per system)
DEFAULT_STEPS = (200, 400)
#: ``--capacity-full``: up to the issue's 5,000 matches and past them (a 60 s hold each)
FULL_STEPS = (250, 500, 1000, 2000, 3000, 4000, 5000, 6000, 8000)
#: ``--quick``: a smoke run
QUICK_STEPS = (4, 8)


@dataclass(frozen=True)
class CapacityPlan:
    shape: Shape
    sizes: CapacitySizes
    #: run boardgame.io with the same steps
    peer: bool
    #: run Tabletop's services with tracemalloc, snapshots into this folder
    traced: Path | None = None


def steps(text: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.split(",") if v.strip())
    if not values or any(v < 1 or v > 50_000 for v in values) or list(values) != sorted(values):
        raise argparse.ArgumentTypeError("steps are rising match counts from 1 to 50000")
    return values


def add_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "capacity at human pace",
        "matches whose seats think between moves, ramped in steps (tests/bench/human)",
    )
    group.add_argument(
        "--capacity",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run the capacity steps after the other benchmarks (default: yes, except with "
        "--quick, where --capacity runs them with short holds)",
    )
    group.add_argument(
        "--capacity-only",
        action="store_true",
        help="run only the capacity steps; write capacity-results.json (BENCHMARKS.md untouched)",
    )
    group.add_argument(
        "--capacity-full",
        action="store_true",
        help=f"the full ramp: {','.join(map(str, FULL_STEPS))} matches, 60 s a step",
    )
    group.add_argument(
        "--capacity-steps",
        type=steps,
        default=None,
        metavar="M,M,...",
        help=f"matches in play at each step (default {','.join(map(str, DEFAULT_STEPS))}; "
        f"quick {','.join(map(str, QUICK_STEPS))})",
    )
    group.add_argument(
        "--capacity-hold",
        type=float,
        default=None,
        metavar="S",
        help="seconds each step is measured (default 60; quick 10)",
    )
    group.add_argument(
        "--capacity-past-failure",
        action="store_true",
        help="keep ramping after a step that did not pass",
    )
    group.add_argument(
        "--capacity-tracemalloc",
        type=Path,
        default=None,
        metavar="DIR",
        help="run Tabletop's services with tracemalloc (several times slower: latency and "
        "CPU figures are then not the shipped code's) and report the lines whose memory grew "
        "from the baseline to the idle step; snapshots go to DIR",
    )
    group.add_argument(
        "--think-mean", type=float, default=None, help="a seat's mean think time, s (default 10)"
    )
    group.add_argument(
        "--think-min", type=float, default=1.0, help="a seat's shortest think time, s (default 1)"
    )
    group.add_argument("--spectators", type=int, default=1, help="spectators per match (default 1)")
    group.add_argument(
        "--tables",
        type=_tables,
        default=None,
        metavar="GAME=SEATS,...",
        help="the games played and their seats (default: "
        + ",".join(f"{g}={n}" for g, n in DEFAULT_SEATS.items())
        + "); boardgame.io's dice tables take the same seats",
    )
    group.add_argument(
        "--persons-per-conn",
        type=int,
        default=1,
        help="people sharing one gRPC connection (default 1: a device each)",
    )


def _tables(text: str) -> dict[str, int]:
    """``crashland=1,drillit=2`` as {game: seats}; refuses unknown games and seat counts
    the game does not take."""
    tables: dict[str, int] = {}
    for part in text.split(","):
        name, _, count = part.partition("=")
        try:
            game, seats = get_game(name.strip()), int(count)
        except (KeyError, ValueError) as bad:
            raise argparse.ArgumentTypeError(f"{part!r}: GAME=SEATS, GAME one of ours") from bad
        if not game.min_players <= seats <= game.max_players:
            raise argparse.ArgumentTypeError(
                f"{game.name} seats {game.min_players}-{game.max_players}, not {seats}"
            )
        tables[game.name] = seats
    return tables


def plan_from(args: argparse.Namespace, peer: bool) -> CapacityPlan:
    quick = bool(args.quick)
    chosen = args.capacity_steps or (
        QUICK_STEPS if quick else FULL_STEPS if args.capacity_full else DEFAULT_STEPS
    )
    hold = args.capacity_hold if args.capacity_hold is not None else (10.0 if quick else 60.0)
    # quick: shorter thinking, so a short hold still sees actions
    think_mean = args.think_mean if args.think_mean is not None else (2.0 if quick else 10.0)
    think_min = min(args.think_min, think_mean)
    if hold <= 0 or think_mean <= 0 or not 0 <= args.spectators <= 50:
        raise SystemExit("capacity: hold and think time above 0, spectators 0 to 50")
    shape = Shape(
        seats=args.tables or dict(DEFAULT_SEATS),
        spectators=args.spectators,
        think_mean_s=think_mean,
        think_min_s=think_min,
        persons_per_conn=max(1, args.persons_per_conn),
    )
    if quick:
        sizes = CapacitySizes(
            steps=chosen,
            hold_s=hold,
            settle_s=3.0,
            idle_matches=chosen[0] * 2,
            idle_s=8.0,
            watch_batch=40,
            warm_s=3.0,
        )
    else:
        sizes = CapacitySizes(
            steps=chosen,
            hold_s=hold,
            settle_s=10.0,
            idle_matches=chosen[0],
            idle_s=20.0,
            watch_batch=500,
            warm_s=5.0,
        )
    traced = args.capacity_tracemalloc.resolve() if args.capacity_tracemalloc else None
    return CapacityPlan(
        shape, replace(sizes, past_failure=args.capacity_past_failure), peer, traced
    )
