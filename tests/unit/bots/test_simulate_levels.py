"""``tabletop simulate --levels``: seats rotated, 95% intervals, and a results file that
lets a stopped run resume without playing a finished match again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.cli.simulate import Comparison, compare, difference_interval, seating, wilson


def test_levels_turn_one_seat_on_per_match() -> None:
    levels = ("hard", "easy", "easy", "easy")
    seen = [seating(levels, i) for i in range(4)]
    assert [s.index("hard") for s in seen] == [0, 3, 2, 1]
    assert seating(levels, 4) == levels


def test_wilson_interval_matches_the_textbook_values() -> None:
    # 50 of 100: 0.404-0.596; 0 of 10: 0-0.278 (Wilson 1927, as tabulated by Newcombe 1998)
    low, high = wilson(50, 100)
    assert (round(low, 3), round(high, 3)) == (0.404, 0.596)
    low, high = wilson(0, 10)
    assert (round(low, 3), round(high, 3)) == (0.0, 0.278)


def test_difference_interval_matches_newcombes_table() -> None:
    # Newcombe 1998, Table II, method 10 (hybrid score): 56/70 - 48/80 and 9/10 - 3/10
    low, high = difference_interval(56, 70, 48, 80)
    assert (round(low, 4), round(high, 4)) == (0.0524, 0.3339)
    low, high = difference_interval(9, 10, 3, 10)
    assert (round(low, 4), round(high, 4)) == (0.1705, 0.8090)


def test_a_run_resumes_from_its_results_file(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    first = compare(Comparison("drillit", 3, ("easy", "easy")), results=results)
    assert first["games_played"] == 3
    assert len(results.read_text().splitlines()) == 3
    played: list[int] = []
    second = compare(
        Comparison("drillit", 5, ("easy", "easy")), progress=played.append, results=results
    )
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [r["index"] for r in rows] == [0, 1, 2, 3, 4]  # only the two new ones appended
    assert played == [3, 4, 5]
    assert second["games_played"] == 5
    assert second["by_level"]["easy"]["matches"] == 5
    assert rows[1]["seats"] == {"player1": "easy", "player2": "easy"}


def test_another_comparison_in_the_same_file_is_not_counted(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    compare(Comparison("drillit", 2, ("easy", "easy")), results=results)
    report = compare(
        Comparison("drillit", 2, ("easy", "easy"), {"difficulty": "hard"}), results=results
    )
    assert report["games_played"] == 2
    assert len(results.read_text().splitlines()) == 4


def test_unknown_levels_and_seat_counts_are_refused_before_any_match() -> None:
    with pytest.raises(ValueError, match="no bot level"):
        compare(Comparison("crashland", 1, ("expert",)))
    with pytest.raises(ValueError, match="seats 1-1"):
        compare(Comparison("crashland", 1, ("easy", "easy")))


def test_each_new_row_records_the_stamp_and_old_rows_keep_theirs(tmp_path: Path) -> None:
    results = tmp_path / "runs.jsonl"
    compare(Comparison("drillit", 1, ("easy", "easy")), results=results, stamp={"code": "a1"})
    compare(Comparison("drillit", 2, ("easy", "easy")), results=results, stamp={"code": "b2"})
    rows = [json.loads(line) for line in results.read_text().splitlines()]
    assert [(r["index"], r["code"]) for r in rows] == [(0, "a1"), (1, "b2")]
