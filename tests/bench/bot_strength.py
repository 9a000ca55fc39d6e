"""The strength of the bot levels, as issue 42 asks it to be measured: ``tabletop
simulate``'s comparisons for every game, seats rotated, seeds fixed, each match appended
to a results file as it ends, so the run may be stopped and started again at will (it
takes CPU-hours: a ``hard`` move is most of a CPU-second).

    python -m tests.bench.bot_strength run [--results DIR] [--games N] [--only GAME,...]
                                           [--seats N,...] [--resume-code C,...]
    python -m tests.bench.bot_strength table [--results DIR] [--code C,...]

``table`` prints what is finished as a Markdown table with 95% intervals, their half-width
against the issue's ±5 points, and the verdict against each target: met when the whole
95% interval is past it (for "15 points more than greedy", the interval of the
difference: ``difference_interval``).

The results are kept in the repository (``RESULTS``), so that the measurement, about a
CPU-day at the issue's precision, goes on across sessions: commit what a run appended,
and the next run resumes after it. Each match records the commit that played it
(``code``): under a CPU budget a bot's strength moves with the engines' speed. After a
change to a bot, ``run --resume-code COMMIT`` counts only that commit's matches (and the
run's own) as played, so the changed bot plays the same seeds again beside the old rows;
``table --code C1,C2`` reports the matches of those commits only, and without it every
match, a seed played twice once (its last match).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from rich.progress import Progress

from services.cli.simulate import Comparison, compare, comparison_report, difference_interval

DRILLIT = {"difficulty": "medium", "distance": "medium"}
#: where the matches played so far are kept (in the repository: see the docstring)
RESULTS = Path(__file__).parent / "results" / "bot-strength"
#: the issue's precision: a 95% interval no wider than ± this
PRECISION = 0.05


@dataclass(frozen=True)
class Target:
    """One row of the issue's table: ``hard`` against ``baseline``."""

    name: str
    game: str
    hard: Comparison
    #: solitaire and cooperative games: the same seats played by greedy bots
    baseline: Comparison | None
    goal: str


def targets(games: int) -> list[Target]:
    def solo(game: str, seats: int, level: str, options: dict[str, str]) -> Comparison:
        return Comparison(game, games, (level,) * seats, options)

    rows = [
        Target(
            "Crashland: hard vs greedy",
            "crashland",
            solo("crashland", 1, "hard", {}),
            solo("crashland", 1, "easy", {}),
            "hard ≥ greedy + 15 points",
        ),
        Target(
            "Drillit! 3 seats medium/medium: hard vs greedy",
            "drillit",
            solo("drillit", 3, "hard", DRILLIT),
            solo("drillit", 3, "easy", DRILLIT),
            "hard ≥ greedy + 15 points",
        ),
    ]
    for game, title in (("imperial_miners", "Imperial Miners"), ("dungeon_drop", "Dungeon Drop")):
        rows.append(
            Target(
                f"{title}, 2 seats: hard vs greedy",
                game,
                Comparison(game, games, ("hard", "easy"), {}),
                None,
                "hard ≥ 60%",
            )
        )
        rows.append(
            Target(
                f"{title}, 4 seats: hard vs 3 greedy",
                game,
                Comparison(game, games, ("hard", "easy", "easy", "easy"), {}),
                None,
                "hard ≥ 2 × 25%",
            )
        )
    return rows


def _file(results: Path, comparison: Comparison) -> Path:
    options = "-".join(f"{k}={v}" for k, v in sorted(comparison.options.items()))
    name = f"{comparison.game}-{'-'.join(comparison.levels)}{'-' + options if options else ''}"
    return results / f"{name}.jsonl"


def code() -> str:
    """The commit this checkout is at, with ``+`` when it has changes not committed."""

    def git(*args: str) -> str:
        return subprocess.run(
            ["git", *args], capture_output=True, text=True, cwd=Path(__file__).parent
        ).stdout.strip()

    commit = git("rev-parse", "--short=12", "HEAD") or "unknown"
    return commit + ("+" if git("status", "--porcelain", "--", "services") else "")


def run(
    results: Path,
    games: int,
    only: set[str],
    chunk: int,
    seats: set[int] | None = None,
    resume_codes: set[str] | None = None,
) -> None:
    """Every comparison ``chunk`` matches at a time, in turn, up to ``games`` each: a run
    stopped early has all of them measured about equally far. ``seats``: only the
    comparisons of these seat counts (two processes may then share a game's rows, each
    writing its own files). ``resume_codes``: only matches played by these commits count
    as played (a changed bot plays the seeds again; None: every match in the files)."""
    results.mkdir(parents=True, exist_ok=True)
    # once, at the start: the code this process imported, whatever is committed meanwhile
    stamp = {"code": code()}
    comparisons = [
        comparison
        for target in targets(games)
        if not only or target.game in only
        for comparison in (target.baseline, target.hard)
        if comparison is not None and (not seats or len(comparison.levels) in seats)
    ]
    for upto in range(chunk, games + chunk, chunk):
        for comparison in comparisons:
            part = replace(comparison, games=min(upto, games))
            try:
                with Progress(transient=True) as bar:
                    task = bar.add_task(f"{part.game} {','.join(part.levels)}", total=part.games)
                    compare(
                        part,
                        lambda done, task=task: bar.update(task, completed=done),  # type: ignore[misc]
                        _file(results, part),
                        stamp,
                        None if resume_codes is None else _resumed(resume_codes, stamp["code"]),
                    )
            except ValueError as unplayable:  # a game without a sampler offers easy only
                print(f"{part.game}: {unplayable}", file=sys.stderr)


def _played_by(codes: set[str]) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: row.get("code", "unknown") in codes


def _resumed(codes: set[str], own: str) -> Callable[[Mapping[str, Any]], bool]:
    """The matches of the commits resumed count as played, and those this run plays: its
    next chunk goes on to new seeds even when its commit is not among ``codes`` (one
    committed after the bot changed, with result rows only)."""
    return _played_by(codes | {own})


def scoped(codes: set[str] | None, comparison: Comparison) -> set[str] | None:
    """The commits whose matches count for ``comparison``: of ``codes``, each ``CODE``,
    each ``GAME:CODE`` of its game and each ``GAME@SEATS:CODE`` of its game at its table
    size (a search changed for one table size leaves the other's matches standing)."""
    if codes is None:
        return None
    chosen = set()
    for entry in codes:
        scope, _, code = entry.rpartition(":")
        game, _, seats = scope.partition("@")
        if game in ("", comparison.game) and seats in ("", str(len(comparison.levels))):
            chosen.add(code)
    return chosen


def table(results: Path, games: int, codes: set[str] | None = None) -> str:
    """``codes``: only the matches played by these commits (None: all; see ``scoped``)."""
    lines = [
        "| comparison | matches | hard won (95% interval) | greedy won (95% interval) "
        "| ± points (issue: ≤ 5) | target | met? |",
        "|---|---:|---|---|---:|---|---|",
    ]
    played_by: set[str] = set()
    for target in targets(games):
        for comparison in (target.hard, target.baseline):
            if comparison is not None:
                rows = _rows(_file(results, comparison), scoped(codes, comparison))
                played_by.update(row.get("code", "unknown") for row in rows)
        hard = _report(results, target.hard, codes)
        if hard is None:
            lines.append(f"| {target.name} | 0 | — | — | — | {target.goal} | not measured |")
            continue
        h = hard["by_level"]["hard"]
        base_text, verdict = "—", ""
        spread = _half_width(h)
        if target.baseline is not None:
            base = _report(results, target.baseline, codes)
            b = base["by_level"]["easy"] if base is not None else None
            if b is not None:
                base_text = _rate(b)
                spread = max(spread, _half_width(b))
                diff = h["win_rate"] - b["win_rate"]
                low, high = difference_interval(h["wins"], h["matches"], b["wins"], b["matches"])
                verdict = "yes" if low >= 0.15 else "no" if high < 0.15 else "open"
                interval = f"95% interval {_points(low)} to {_points(high)}"
                verdict += f" ({_points(diff)} points, {interval})"
        else:
            need = 0.6 if len(target.hard.levels) == 2 else 2 * h["fair_share"]
            verdict = (
                "yes"
                if h["win_rate_95"][0] >= need
                else "no"
                if h["win_rate_95"][1] < need
                else "open"
            )
        lines.append(
            f"| {target.name} | {hard['games_played']} | {_rate(h)} | {base_text} "
            f"| {spread * 100:.1f}{'' if spread <= PRECISION else ' (wider)'} "
            f"| {target.goal} | {verdict} |"
        )
    lines.append("")
    lines.append(f"Played by: {', '.join(sorted(played_by)) or 'nothing yet'}.")
    return "\n".join(lines)


def _points(share: float) -> str:
    return f"{round(share * 100):+d}"


def _half_width(row: dict[str, Any]) -> float:
    low, high = row["win_rate_95"]
    return float(high - low) / 2


def _rate(row: dict[str, Any]) -> str:
    low, high = row["win_rate_95"]
    return f"{row['wins']}/{row['matches']} = {row['win_rate']:.1%} ({low:.1%}–{high:.1%})"


def _rows(path: Path, codes: set[str] | None) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    chosen = [r for r in rows if codes is None or r.get("code", "unknown") in codes]
    # a seed played again by a changed bot counts once: its last match
    return list({r["index"]: r for r in chosen}.values())


def _report(results: Path, comparison: Comparison, codes: set[str] | None) -> dict[str, Any] | None:
    rows = _rows(_file(results, comparison), scoped(codes, comparison))
    if not rows:
        return None
    return comparison_report(comparison, sorted(rows, key=lambda r: r["index"]))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bot_strength")
    parser.add_argument("action", choices=["run", "table"])
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument("--games", type=int, default=400, help="matches per comparison")
    parser.add_argument("--only", default="", help="games to run, comma-separated")
    parser.add_argument("--chunk", type=int, default=20, help="matches per comparison in turn")
    parser.add_argument("--seats", default="", help="run: only these seat counts, comma-separated")
    parser.add_argument(
        "--resume-code",
        default="",
        help="run: only matches played by these commits count as played (default: all)",
    )
    parser.add_argument(
        "--code",
        default="",
        help="table: only matches played by these commits, comma-separated; "
        "GAME:CODE or GAME@SEATS:CODE for one game's comparisons or one table size's",
    )
    args = parser.parse_args()
    if args.action == "run":
        seats = {int(n) for n in args.seats.split(",") if n}
        resume = {c for c in args.resume_code.split(",") if c} or None
        only = {g for g in args.only.split(",") if g}
        run(args.results, args.games, only, args.chunk, seats, resume)
    codes = {c for c in args.code.split(",") if c} or None
    print(table(args.results, args.games, codes))


if __name__ == "__main__":
    main()
