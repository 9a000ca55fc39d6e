"""Drillit! played by bots through the gateway: every service takes part."""

from __future__ import annotations

import pytest

from services.adapters.folding import fold_board_events
from services.adapters.verify import verify_match
from services.adapters.views import view
from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import gateway_pb2, match_pb2
from tests.integration.helpers import play_bot_match, scored, topic_events

SEATS = ["ana", "bo", "cy"]


@pytest.fixture(scope="module")
def client(stack: Stack) -> GatewayClient:
    """One client for the module: it keeps the seat tokens of the matches it played."""
    return GatewayClient(stack.addr("gateway"))


@pytest.fixture(scope="module")
def matches(client: GatewayClient) -> list[str]:
    options = [
        {"difficulty": "easy", "distance": "short"},
        {"difficulty": "hard", "distance": "long"},
    ]
    return [
        play_bot_match(client, "drillit", SEATS, seed, option)[0]
        for seed, option in enumerate(options)
    ]


def test_bots_play_complete_drillit_matches(client: GatewayClient, matches: list[str]) -> None:
    for match_id in matches:
        view = client.view(match_id, "")
        assert view.status == match_pb2.MATCH_STATUS_FINISHED
        assert set(view.results) == set(SEATS)
        assert len(set(view.results.values())) == 1  # cooperative: all win or all lose


def test_dice_and_decks_record_every_chance_outcome_and_it_verifies(
    stack: Stack, matches: list[str]
) -> None:
    events = topic_events(stack.kafka_bootstrap, stack.topic_prefix)
    for match_id in matches:
        dice = [e.event_type for e in events["dice"][match_id]]
        assert dice.count("tabletop.v1.DiceRolled") >= len(SEATS)  # at least the start rooms
        decks = [e.event_type for e in events["decks"][match_id]]
        assert "tabletop.v1.DeckShuffled" in decks and "tabletop.v1.CardsDrawn" in decks
        log = [e for stream in events.values() for e in stream.get(match_id, [])]
        result = verify_match(log)
        assert result.ok, result.problems


def test_the_live_view_of_each_seat_equals_a_fresh_fold(
    stack: Stack, client: GatewayClient, matches: list[str]
) -> None:
    board = topic_events(stack.kafka_bootstrap, stack.topic_prefix)["board"]
    for match_id in matches:
        folded = fold_board_events(board[match_id])
        for viewer in [*SEATS, ""]:
            live = client.view(match_id, viewer)
            live.ClearField("provenance")
            fresh = view(folded, viewer)
            fresh.ClearField("provenance")
            assert fresh == live


def test_scoring_keeps_drillit_statistics(client: GatewayClient, matches: list[str]) -> None:
    standings = scored(client, "drillit", len(matches))
    assert standings.matches >= len(matches)
    assert standings.mean_statistics, "the engine's statistics reach scoring"
    listed = client.stub.ListMatches(gateway_pb2.ListMatchesRequest(game="drillit")).matches
    assert {m.match_id for m in listed} >= set(matches)


def test_the_cli_seats_greedy_and_random_bots_that_see_only_their_views(stack: Stack) -> None:
    import json
    import subprocess
    import sys
    from pathlib import Path

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli.main",
            "--gateway",
            stack.addr("gateway"),
            "play",
            "drillit",
            "--players",
            "ana,bo",
            "--bot",
            "ana=greedy,bo=random",
            "--option",
            "difficulty=easy",
            "--option",
            "distance=short",
            "--seed",
            "4",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        cwd=Path(__file__).resolve().parents[2],
    )
    result = json.loads(done.stdout)
    assert set(result["results"]) == {"ana", "bo"}
    assert result["actions"] > 0 and result["events"] > result["actions"]
