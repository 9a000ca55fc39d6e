"""Every registered game played to its end by bots through the gateway, against the real
Kafka and real gRPC servers: written once, so a new game gets it by being discovered.

Per game: the match ends; each seat's and the spectator's live view equals a fresh fold of
the board events; every roll and shuffle verifies from the revealed seeds; scoring records
the result. Imperial Miners' simultaneous phases are also played with one client thread
per seat, each acting as soon as it may (no seat waits on another's chain)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import threading
from pathlib import Path

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.adapters.verify import verify_match
from services.adapters.views import view
from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.games.contract import Game
from services.games.registry import all_games
from tabletop.v1 import envelope_pb2, gateway_pb2, match_pb2, scoring_pb2
from tests.integration.helpers import eventually, open_match, play_bot_match, topic_events

GAMES = sorted(all_games())
ROOT = Path(__file__).resolve().parents[2]


def seats_for(game: Game[object]) -> list[str]:
    count = max(game.min_players, min(3, game.max_players))
    return [f"p{i + 1}" for i in range(count)]


@pytest.fixture(scope="module")
def client(stack: Stack) -> GatewayClient:
    return GatewayClient(stack.addr("gateway"))


@pytest.fixture(scope="module")
def played(client: GatewayClient) -> dict[str, str]:
    """game → the id of a match its bots played to the end."""
    return {
        name: play_bot_match(client, name, seats_for(all_games()[name]), seed=7)[0]
        for name in GAMES
    }


def comparable(view: match_pb2.MatchView) -> bytes:
    copy = match_pb2.MatchView()
    copy.CopyFrom(view)
    copy.ClearField("provenance")
    return copy.SerializeToString(deterministic=True)


@pytest.mark.parametrize("game", GAMES)
def test_bots_play_a_whole_match(game: str, client: GatewayClient, played: dict[str, str]) -> None:
    view = client.view(played[game], "")
    assert view.status == match_pb2.MATCH_STATUS_FINISHED
    assert set(view.results) == set(seats_for(all_games()[game]))
    assert view.end_reason


@pytest.mark.parametrize("game", GAMES)
def test_every_live_view_equals_a_fresh_fold(
    game: str, stack: Stack, client: GatewayClient, played: dict[str, str]
) -> None:
    match_id = played[game]
    board = topic_events(stack.kafka_bootstrap, stack.topic_prefix)["board"][match_id]
    folded = fold_board_events(board)
    for viewer in [*seats_for(all_games()[game]), ""]:
        live = client.view(match_id, viewer)
        assert comparable(view(folded, viewer)) == comparable(live), viewer


@pytest.mark.parametrize("game", GAMES)
def test_replay_batches_carry_replay_match_steps_byte_for_byte(
    game: str, stack: Stack, client: GatewayClient, played: dict[str, str]
) -> None:
    match_id = played[game]
    board = topic_events(stack.kafka_bootstrap, stack.topic_prefix)["board"][match_id]
    for viewer in (seats_for(all_games()[game])[0], ""):
        metadata = client.auth(match_id, viewer)
        one_by_one = [
            s.SerializeToString(deterministic=True)
            for s in client.stub.ReplayMatch(
                gateway_pb2.ReplayMatchRequest(match_id=match_id, viewer=viewer),
                metadata=metadata,
            )
        ]
        assert len(one_by_one) == len(board)
        for max_steps, max_bytes in ((0, 0), (7, 0), (0, 4096)):
            request = gateway_pb2.ReplayMatchBatchesRequest(
                match_id=match_id, viewer=viewer, max_steps=max_steps, max_bytes=max_bytes
            )
            batches = list(client.stub.ReplayMatchBatches(request, metadata=metadata))
            batched = [s.SerializeToString(deterministic=True) for b in batches for s in b.steps]
            assert batched == one_by_one, (viewer, max_steps, max_bytes)
            assert all(b.steps for b in batches)
            assert max(len(b.steps) for b in batches) <= (max_steps or 64)
        if len(board) > 64:
            assert len(batches) > 1


@pytest.mark.parametrize("game", GAMES)
def test_the_randomness_verifies_and_scoring_records_the_result(
    game: str, stack: Stack, client: GatewayClient, played: dict[str, str]
) -> None:
    match_id = played[game]

    def scored() -> dict[str, dict[str, list[envelope_pb2.EventEnvelope]]] | None:
        events = topic_events(stack.kafka_bootstrap, stack.topic_prefix)
        return events if match_id in events["scoring"] else None

    events = eventually(scored)  # scoring follows board.events a little behind
    log = [e for stream in events.values() for e in stream.get(match_id, [])]
    result = verify_match(log)
    assert result.ok, result.problems
    assert [e.event_type for e in events["scoring"][match_id]][-1].endswith("MatchScored")
    standings = client.stub.GetStandings(scoring_pb2.GetStandingsRequest(game=game))
    assert standings.matches >= 1


def test_imperial_miners_seats_act_at_the_same_time(client: GatewayClient) -> None:
    """One thread per seat, no expected version: each seat chooses, places and climbs its
    own chain whenever the board lists it, while the others do the same."""
    seats = ["ann", "bob", "cyd", "dee"]
    match_id = open_match(client, "imperial_miners", seats, {"first_game": "true"})
    acted: dict[str, int] = dict.fromkeys(seats, 0)
    overlapped = threading.Event()
    in_flight: set[str] = set()
    lock = threading.Lock()
    failures: list[BaseException] = []

    def play(seat: str, seed: int) -> None:
        rng = random.Random(seed)
        try:
            while True:
                legal = client.legal(match_id, seat)
                if legal.next.finished:
                    return
                if not legal.actions:  # another seat's turn: wait for the match to move
                    try:
                        client.view(match_id, seat, min_version=legal.version + 1, wait_ms=500)
                    except grpc.RpcError as error:
                        if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                            raise
                    continue
                with lock:
                    in_flight.add(seat)
                    if len(in_flight) > 1:
                        overlapped.set()
                try:
                    choice = legal.actions[rng.randrange(len(legal.actions))]
                    client.submit(match_id, seat, choice.action)
                    acted[seat] += 1
                finally:
                    with lock:
                        in_flight.discard(seat)
        except BaseException as error:
            failures.append(error)

    threads = [threading.Thread(target=play, args=(s, i)) for i, s in enumerate(seats)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    assert not failures, failures
    final = client.view(match_id, "")
    assert final.status == match_pb2.MATCH_STATUS_FINISHED
    assert all(acted[s] >= 10 for s in seats), acted  # ten rounds: a card each at least
    assert overlapped.is_set(), "no two seats ever had a command in flight together"


@pytest.mark.parametrize("game", GAMES)
def test_the_cli_plays_it_with_greedy_bots_that_see_only_their_views(
    game: str, stack: Stack
) -> None:
    seats = len(seats_for(all_games()[game]))
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli.main",
            "--gateway",
            stack.addr("gateway"),
            "play",
            game.replace("_", "-"),  # the name people type
            "--seats",
            str(seats),
            "--bot",
            "greedy",
            "--seed",
            "3",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        cwd=ROOT,
    )
    result = json.loads(done.stdout)
    assert len(result["results"]) == seats
    assert result["actions"] > 0 and result["events"] > result["actions"]
