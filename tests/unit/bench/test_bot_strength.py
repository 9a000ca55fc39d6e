"""The strength table: rows filtered by the commit that played them, the interval's
half-width against the issue's ±5 points, and the verdicts."""

from __future__ import annotations

import json
from pathlib import Path

from services.cli.simulate import Comparison, compare
from tests.bench.bot_strength import _file, _played_by, _resumed, table


def _write(results: Path, comparison: Comparison, outcomes: list[tuple[str, str]]) -> None:
    """One row per (result of the seat ``player1``, code) in ``outcomes``; the hard seat
    is always player1 here, so rotation plays no part."""
    with _file(results, comparison).open("a") as out:
        for index, (result, code) in enumerate(outcomes):
            seats = {f"player{i + 1}": lv for i, lv in enumerate(comparison.levels)}
            out.write(
                json.dumps(
                    {
                        **comparison.key(),
                        "index": index,
                        "seed": index,
                        "seats": seats,
                        "results": {s: result if s == "player1" else "lost" for s in seats},
                        "scores": {s: 0 for s in seats},
                        "reason": "",
                        "move_cpu_s": {s: [0.5] for s in seats},
                        "code": code,
                    }
                )
                + "\n"
            )


def _row(text: str, name: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_the_table_reads_only_the_commits_asked_for(tmp_path: Path) -> None:
    hard = Comparison("imperial_miners", 400, ("hard", "easy"), {})
    # 300 won of 400 by "new", 0 of 100 by "old": together 300/500
    _write(
        tmp_path, hard, [("won", "new")] * 300 + [("lost", "new")] * 100 + [("lost", "old")] * 100
    )
    every = _row(table(tmp_path, 400), "Imperial Miners, 2 seats: hard vs greedy")
    assert every[1] == "500"
    new = _row(table(tmp_path, 400, {"new"}), "Imperial Miners, 2 seats: hard vs greedy")
    assert new[1] == "400"
    assert new[2].startswith("300/400 = 75.0%")
    # Wilson at 300/400: 70.5%-79.0%, ±4.2 points: within the issue's ±5
    assert new[4] == "4.2"
    assert new[6] == "yes"
    assert "Played by: new." in table(tmp_path, 400, {"new"})


def test_codes_can_be_scoped_to_a_game_and_a_table_size(tmp_path: Path) -> None:
    """A search changed at 4 seats only: its 2-seat matches stand, its 4-seat ones are
    those of the new commit, and a code scoped to another game counts for none of them."""
    two = Comparison("imperial_miners", 400, ("hard", "easy"), {})
    four = Comparison("imperial_miners", 400, ("hard", "easy", "easy", "easy"), {})
    _write(tmp_path, two, [("won", "a")] * 8 + [("lost", "b")] * 2)
    _write(tmp_path, four, [("lost", "a")] * 10)
    _write(tmp_path, four, [("won", "b")] * 5)  # seeds 0-4 played again
    names = (
        "Imperial Miners, 2 seats: hard vs greedy",
        "Imperial Miners, 4 seats: hard vs 3 greedy",
    )
    text = table(tmp_path, 400, {"imperial_miners@2:a", "imperial_miners@4:b", "crashland:a"})
    assert _row(text, names[0])[2].startswith("8/8")
    assert _row(text, names[1])[2].startswith("5/5")
    assert "Played by: a, b." in text
    unscoped = table(tmp_path, 400, {"a", "b"})
    assert _row(unscoped, names[0])[2].startswith("8/10")
    assert _row(unscoped, names[1])[2].startswith("5/10")
    assert _row(table(tmp_path, 400, {"crashland:a"}), names[0])[1] == "0"


def test_an_interval_wider_than_five_points_is_flagged(tmp_path: Path) -> None:
    hard = Comparison("imperial_miners", 400, ("hard", "easy"), {})
    _write(tmp_path, hard, [("won", "x")] * 7 + [("lost", "x")] * 3)
    row = _row(table(tmp_path, 400), "Imperial Miners, 2 seats: hard vs greedy")
    assert row[4].endswith("(wider)")
    assert row[6] == "open"


def test_a_seed_played_again_by_a_changed_bot_counts_once(tmp_path: Path) -> None:
    hard = Comparison("imperial_miners", 400, ("hard", "easy"), {})
    _write(tmp_path, hard, [("lost", "old")] * 10)
    _write(tmp_path, hard, [("won", "new")] * 10)  # the same seeds 0-9, played again
    name = "Imperial Miners, 2 seats: hard vs greedy"
    assert _row(table(tmp_path, 400), name)[2].startswith("10/10")  # the last of each seed
    assert _row(table(tmp_path, 400, {"old"}), name)[2].startswith("0/10")


def test_a_run_counts_only_the_matches_of_the_commits_it_resumes(tmp_path: Path) -> None:
    solo = Comparison("crashland", 1, ("easy",), {})
    path = _file(tmp_path, solo)
    _write(tmp_path, solo, [("lost", "old")])
    compare(solo, results=path, stamp={"code": "new"})  # every match counts: nothing to play
    assert len(path.read_text().splitlines()) == 1
    compare(solo, results=path, stamp={"code": "new"}, counts=_played_by({"new"}))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["index"], r["code"]) for r in rows] == [(0, "old"), (0, "new")]


def test_a_run_counts_its_own_matches_as_played(tmp_path: Path) -> None:
    """Resuming another commit's matches, a run's next chunk does not play again the seeds
    its own commit has just played (it did, chunk after chunk, before)."""
    solo = Comparison("crashland", 1, ("easy",), {})
    path = _file(tmp_path, solo)
    _write(tmp_path, solo, [("lost", "old")])
    for _ in range(2):
        compare(solo, results=path, stamp={"code": "new"}, counts=_resumed({"bot"}, "new"))
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r["index"], r["code"]) for r in rows] == [(0, "old"), (0, "new")]


def test_the_solo_verdict_is_the_interval_of_the_difference(tmp_path: Path) -> None:
    hard = Comparison("crashland", 400, ("hard",), {})
    greedy = Comparison("crashland", 400, ("easy",), {})
    name = "Crashland: hard vs greedy"
    # 29/52 against 12/60: +36 points, the difference's interval +18 to +51; the two
    # rates' own intervals overlap more (42.3% less 31.8% is only 10.5 points)
    _write(tmp_path, hard, [("won", "x")] * 29 + [("lost", "x")] * 23)
    _write(tmp_path, greedy, [("won", "x")] * 12 + [("lost", "x")] * 48)
    assert _row(table(tmp_path, 400), name)[6] == "yes (+36 points, 95% interval +18 to +51)"


def test_a_difference_that_may_be_under_fifteen_points_is_open(tmp_path: Path) -> None:
    hard = Comparison("crashland", 400, ("hard",), {})
    greedy = Comparison("crashland", 400, ("easy",), {})
    _write(tmp_path, hard, [("won", "x")] * 36 + [("lost", "x")] * 27)
    _write(tmp_path, greedy, [("won", "x")] * 176 + [("lost", "x")] * 224)
    verdict = _row(table(tmp_path, 400), "Crashland: hard vs greedy")[6]
    assert verdict.startswith("open (+13 points")
    _write(tmp_path, hard, [("lost", "y")] * 63)  # the same seeds, all lost: +0 at most
    assert _row(table(tmp_path, 400, {"y", "x"}), "Crashland: hard vs greedy")[6].startswith("no")
