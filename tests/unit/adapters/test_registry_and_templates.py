"""Games are found by scanning services.games (a broken package is an error, not a
missing game), and parametric actions (ActionTemplate) cross the wire and come back."""

from __future__ import annotations

import random
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import services.games
from services.adapters.game_adapter import (
    action_from_game_action,
    chosen_action,
    legal_action_message,
    legal_entry,
)
from services.bots.levels import settings_for
from services.bots.network_bot import NetworkBot
from services.bots.search.rollouts import Search
from services.cli.bots import view_policy_for
from services.games import registry
from services.games.contract import ActionTemplate, ParamRange, random_view_policy
from services.games.drillit import GAME as DRILLIT
from services.games.drillit.actions import Move
from services.games.registry import get_game
from tabletop.v1 import board_pb2, match_pb2
from tests.unit.bots.sampling_kit import decisions

TEMPLATE = ActionTemplate(Move(room=1), (ParamRange("room", 0, 6, "room"),))


def test_the_scan_finds_every_game_folder() -> None:
    assert set(registry.discover()) >= {"crashland", "drillit"}


@pytest.fixture
def extra_games(tmp_path: Path) -> Iterator[Path]:
    path = list(services.games.__path__)
    services.games.__path__.append(str(tmp_path))
    yield tmp_path
    services.games.__path__[:] = path
    for name in [m for m in sys.modules if m.startswith("services.games.zz_")]:
        del sys.modules[name]


def test_a_game_package_that_fails_to_import_stops_discovery(extra_games: Path) -> None:
    (extra_games / "zz_broken").mkdir()
    (extra_games / "zz_broken" / "__init__.py").write_text("import no_such_module_here\n")
    with pytest.raises(ModuleNotFoundError, match="no_such_module_here"):
        registry.discover()


def test_a_package_whose_game_is_not_a_game_is_refused(extra_games: Path) -> None:
    (extra_games / "zz_odd").mkdir()
    (extra_games / "zz_odd" / "__init__.py").write_text("GAME = 'chess'\n")
    with pytest.raises(registry.GamePackageError, match=r"zz_odd\.GAME is not a Game"):
        registry.discover()


def test_a_package_without_game_is_a_helper_not_a_game(extra_games: Path) -> None:
    (extra_games / "zz_helpers").mkdir()
    (extra_games / "zz_helpers" / "__init__.py").write_text("")
    assert "zz_helpers" not in registry.discover()


def test_a_template_travels_as_its_example_with_its_ranges() -> None:
    wire = legal_action_message(DRILLIT, TEMPLATE)
    assert [(p.name, p.low, p.high, p.unit) for p in wire.params] == [("room", 0, 6, "room")]
    assert action_from_game_action("drillit", wire.action) == Move(room=1)
    assert legal_entry("drillit", match_pb2.LegalAction.FromString(wire.SerializeToString())) == (
        TEMPLATE
    )
    plain = legal_action_message(DRILLIT, Move(room=2))
    assert not plain.params and legal_entry("drillit", plain) == Move(room=2)


def test_a_filled_in_template_is_sent_as_a_concrete_action() -> None:
    action = TEMPLATE.instantiate(room=4.4)
    assert action == Move(room=4) and TEMPLATE.admits(action)
    sent = chosen_action(DRILLIT, action)
    assert not sent.params and action_from_game_action("drillit", sent.action) == Move(room=4)


def test_a_network_bot_that_picks_a_template_sends_a_sample_inside_the_ranges() -> None:
    view = match_pb2.MatchView(game="drillit")  # an empty view is enough for a random bot
    legal = board_pb2.GetLegalActionsReply(actions=[legal_action_message(DRILLIT, TEMPLATE)])
    bot = NetworkBot("drillit", "p1", random_view_policy(7))
    sent = bot.choose(view, legal)
    action = action_from_game_action("drillit", sent.action)
    assert TEMPLATE.admits(action)
    rng = random.Random(7)
    rng.randrange(1)  # the random bot first picks the (only) entry, then samples it
    assert action == TEMPLATE.sample(rng)


def test_a_network_bot_refuses_an_action_outside_every_entry() -> None:
    legal = board_pb2.GetLegalActionsReply(actions=[legal_action_message(DRILLIT, TEMPLATE)])
    bot = NetworkBot("drillit", "p1", lambda view, player, entries: Move(room=9))
    with pytest.raises(ValueError, match="not legal"):
        bot.choose(match_pb2.MatchView(game="drillit"), legal)


def test_unknown_bot_names_are_refused_with_the_game_s_bots() -> None:
    with pytest.raises(
        ValueError,
        match="drillit has no 'smart' bot; bots: greedy, random; levels: easy, medium, hard",
    ):
        view_policy_for("drillit", "smart", 0)


def test_a_bot_level_names_a_bot_for_the_cli() -> None:
    hard = view_policy_for("crashland", "hard", 0)
    assert isinstance(hard, Search) and hard.settings == settings_for("crashland", "hard")
    easy, greedy = view_policy_for("drillit", "easy", 3), view_policy_for("drillit", "greedy", 3)
    engine = get_game("drillit")
    for decision in decisions("drillit", 3, 1, {"difficulty": "medium", "distance": "medium"})[:20]:
        view = engine.view(decision.state, decision.player)
        assert easy(view, decision.player, decision.legal) == greedy(
            view, decision.player, decision.legal
        )
