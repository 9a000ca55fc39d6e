"""``tabletop --help`` and every command's ``--help``: each command group adds its commands,
in the order the top-level help lists them, and each prints its own usage."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from services.cli.main import build_parser

COMMANDS = [
    "play",
    "join",
    "undo",
    "talk",
    "watch",
    "replay",
    "export",
    "render",
    "verify",
    "matches",
    "leave",
    "hand-over",
    "standings",
    "simulate",
    "stack",
    "admin",
]


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    (sub,) = (a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_every_command_is_there_in_order() -> None:
    assert list(_commands(build_parser())) == COMMANDS


def test_the_top_level_help_lists_every_command_with_its_summary() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "--help"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert shown.startswith("usage: tabletop ")
    assert "--gateway GATEWAY" in shown
    for command in COMMANDS:
        assert f"\n    {command} " in shown, command


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_prints_its_usage(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit:
        build_parser().parse_args([command, "--help"])
    assert exit.value.code == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"usage: tabletop {command} ")
    assert "-h, --help" in shown


@pytest.mark.parametrize("command", ["replay", "verify"])
def test_replay_and_verify_ask_for_a_match_or_a_file(command: str) -> None:
    args = build_parser().parse_args([command])
    with pytest.raises(SystemExit, match=f"tabletop {command}: give a MATCH_ID or --file"):
        args.func(args)
