"""``tabletop simulate`` for every game alike: seeded, deterministic, options from the
game's OptionSpecs, grouped seat summaries, refusals before any match is played."""

from __future__ import annotations

import json

import pytest

from services.cli.main import build_parser
from services.cli.simulate import Simulation, grouped, simulate
from services.games.contract import MalformedAction


def test_greedy_bot_wins_clearly_more_on_easy_than_on_hard() -> None:
    # a fixed seed set: deterministic, not timed
    easy = simulate(Simulation("drillit", 24, "greedy", {"difficulty": "easy"}, 3, 1000))
    hard = simulate(Simulation("drillit", 24, "greedy", {"difficulty": "hard"}, 3, 1000))
    assert easy["wins"] >= hard["wins"] + 4, (easy, hard)


@pytest.mark.parametrize("game", ["crashland", "drillit"])
def test_report_has_win_rate_turns_reasons_groups_and_progress(game: str) -> None:
    seen: list[int] = []
    sim = Simulation(game, 4, "random", seed=3)
    report = simulate(sim, progress=seen.append)
    assert seen == [1, 2, 3, 4]
    assert report["games"] == 4 and sum(report["end_reasons"].values()) == 4
    assert report["win_rate"] == report["wins"] / 4
    assert report["mean_turns"] >= 1
    assert report["by_seat"]["player1"]["n"] == 4
    assert report["by_seat"]["player1"]["won"] == report["win_rate"]
    assert simulate(sim) == report


def test_drillit_defaults_come_from_its_options_and_characters_are_grouped() -> None:
    report = simulate(Simulation("drillit", 3, "random", {"distance": "long"}, 2, 5))
    assert report["options"] == {
        "difficulty": "easy",
        "distance": "long",
        "exit": "1",
        "plan_b": "allowed",
        "player_count_variant": "box",
    }
    assert sum(g["n"] for g in report["by_character"].values()) == 6
    assert set(report["by_distance"]) == {"long"}


def test_grouped_means_by_seat_and_by_each_text_column() -> None:
    rows: list[dict[str, str | float]] = [
        {"seat": "a", "won": 1.0, "score": 4.0, "race": "elf"},
        {"seat": "b", "won": 0.0, "score": 2.0, "race": "elf"},
        {"seat": "a", "won": 0.0, "score": 0.0, "race": "orc"},
    ]
    assert grouped(rows) == {
        "by_race": {
            "elf": {"n": 2.0, "score": 3.0, "won": 0.5},
            "orc": {"n": 1.0, "score": 0.0, "won": 0.0},
        },
        "by_seat": {
            "a": {"n": 2.0, "score": 2.0, "won": 0.5},
            "b": {"n": 1.0, "score": 2.0, "won": 0.0},
        },
    }


def test_unknown_bots_and_options_are_refused() -> None:
    with pytest.raises(ValueError, match="no 'clever' bot"):
        simulate(Simulation("drillit", 1, "clever"))
    with pytest.raises(MalformedAction):
        simulate(Simulation("drillit", 1, "greedy", {"difficulty": "brutal"}))
    with pytest.raises(MalformedAction):
        simulate(Simulation("crashland", 1, "greedy", {"difficulty": "easy"}))


def test_the_command_takes_options_and_the_old_shorthands(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = build_parser().parse_args(
        [
            "simulate",
            "drillit",
            "--games",
            "2",
            "--difficulty",
            "hard",
            "--option",
            "distance=medium",
            "--json",
        ]
    )
    assert args.func(args) == 0
    options = json.loads(capsys.readouterr().out)["options"]
    assert (options["difficulty"], options["distance"]) == ("hard", "medium")
    bad = build_parser().parse_args(["simulate", "crashland", "--option", "speed=9"])
    assert bad.func(bad) == 2
