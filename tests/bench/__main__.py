"""``python -m tests.bench``: run the benchmarks, write BENCHMARKS.md and bench-results.json."""

from __future__ import annotations

import argparse
from pathlib import Path

from .human.options import add_arguments as add_capacity_arguments
from .human.options import plan_from
from .patched_serve import EXPERIMENTS
from .suite import run_capacity_only, run_peer_only, run_suite


def levels(text: str) -> tuple[int, ...]:
    values = tuple(int(v) for v in text.split(",") if v.strip())
    if not values or any(v < 1 or v > 1000 for v in values):
        raise argparse.ArgumentTypeError("concurrency levels are integers from 1 to 1000")
    return values


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench", description=__doc__)
    parser.add_argument("--quick", action="store_true", help="tiny sizes (a smoke run)")
    parser.add_argument("--out-dir", type=Path, default=Path("."), help="where to write results")
    parser.add_argument("--runs", type=int, default=None, help="repetitions (default 3; quick 1)")
    parser.add_argument("--game", default="crashland", help="game the bots play")
    parser.add_argument(
        "--levels",
        type=levels,
        default=(1, 20, 100),
        help="concurrent matches, comma-separated (default 1,20,100)",
    )
    parser.add_argument(
        "--experiment",
        choices=EXPERIMENTS,
        default="",
        help="run the board with a proposed change applied in memory "
        "(see tests/bench/patched_serve.py); not the shipped code",
    )
    parser.add_argument(
        "--profile",
        type=Path,
        default=None,
        metavar="DIR",
        help="after the runs, profile board/gateway/projector with py-spy "
        "under one extra load run; write the profiles to DIR",
    )
    parser.add_argument(
        "--profile-level",
        type=int,
        default=20,
        help="concurrent matches of the profiled run (default 20)",
    )
    parser.add_argument(
        "--peer",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="run boardgame.io beside Tabletop (default: yes, except with --quick)",
    )
    parser.add_argument(
        "--peer-only",
        action="store_true",
        help="run only boardgame.io (no Tabletop stack); write peer-results.json",
    )
    add_capacity_arguments(parser)
    args = parser.parse_args(argv)
    # the peer runs beside each system's steps unless it was turned off (or --quick)
    capacity = plan_from(args, peer=args.peer if args.peer is not None else not args.quick)
    with_capacity = args.capacity if args.capacity is not None else not args.quick
    if args.capacity_only:
        run_capacity_only(args.out_dir, capacity)
        return
    runs = args.runs if args.runs is not None else (1 if args.quick else 3)
    if not 1 <= runs <= 20:
        parser.error("--runs takes 1 to 20")
    if args.peer_only:
        run_peer_only(args.out_dir, args.quick, args.levels, runs)
        return
    run_suite(
        args.out_dir,
        runs,
        args.quick,
        args.game,
        args.levels,
        experiment=args.experiment,
        profile_dir=args.profile,
        profile_level=args.profile_level,
        peer=args.peer,
        capacity=capacity if with_capacity else None,
    )


if __name__ == "__main__":
    main()
