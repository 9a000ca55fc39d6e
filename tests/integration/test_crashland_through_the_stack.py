"""Crashland played through the gateway against the real Kafka and real gRPC servers."""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.adapters.views import view
from services.cli.client import GatewayClient, game_action, play_on
from services.cli.stack import Stack
from services.games.crashland.actions import EndTurn, Move
from services.games.crashland.model import Direction, Payment
from tabletop.v1 import board_pb2, games_pb2, gateway_pb2, match_pb2, scoring_pb2
from tests.integration.helpers import open_match, play_bot_match, scored, topic_events

PLAYER = "astronaut"


ROOT = Path(__file__).resolve().parents[2]
STANDINGS = ("standings", "crashland")


@pytest.fixture(scope="module")
def client(stack: Stack) -> GatewayClient:
    return GatewayClient(stack.addr("gateway"))


@pytest.fixture(scope="module")
def finished_matches(client: GatewayClient) -> list[str]:
    return [play_bot_match(client, "crashland", [PLAYER], seed)[0] for seed in range(3)]


def comparable(view: match_pb2.MatchView) -> bytes:
    copy = match_pb2.MatchView()
    copy.CopyFrom(view)
    copy.ClearField("provenance")
    return copy.SerializeToString(deterministic=True)


def test_a_bot_plays_complete_matches_to_a_win_or_a_loss(
    client: GatewayClient, finished_matches: list[str]
) -> None:
    for match_id in finished_matches:
        view = client.view(match_id, PLAYER)
        assert view.status == match_pb2.MATCH_STATUS_FINISHED
        assert view.results[PLAYER] in ("won", "lost")
        assert view.end_reason


def test_every_stream_has_gapless_sequences_in_its_own_topic(
    stack: Stack, finished_matches: list[str]
) -> None:
    events = topic_events(stack)
    for match_id in finished_matches:
        for stream in ("board", "decks", "scoring"):
            envelopes = events[stream].get(match_id, [])
            assert envelopes, f"no {stream} events for {match_id}"
            assert {e.stream for e in envelopes} == {stream}
            assert [e.sequence for e in envelopes] == list(range(1, len(envelopes) + 1))
        decks = [e.event_type.rsplit(".", 1)[-1] for e in events["decks"][match_id]]
        assert decks[0] == "DecksCommitted" and decks[-1] == "DecksSeedRevealed"
        # Crashland rolls no dice: it commits no dice seed, and dice records nothing.
        assert match_id not in events["dice"]


def test_the_projected_view_equals_a_fresh_fold_of_the_events(
    stack: Stack, client: GatewayClient, finished_matches: list[str]
) -> None:
    board = topic_events(stack)["board"]
    for match_id in finished_matches:
        folded = fold_board_events(board[match_id])
        for viewer in (PLAYER, ""):
            live = client.view(match_id, viewer)
            assert comparable(view(folded, viewer)) == comparable(live)


def test_a_duplicate_command_id_appends_nothing(client: GatewayClient, stack: Stack) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    first = client.submit(match_id, PLAYER, legal.actions[0].action, command_id="same-command")
    again = client.submit(match_id, PLAYER, legal.actions[0].action, command_id="same-command")
    assert not first.duplicate and again.duplicate
    assert again.version == first.version
    after = topic_events(stack)["board"][match_id]
    assert len(after) == first.version


def test_an_illegal_move_is_refused_with_a_reason_and_nothing_is_appended(
    client: GatewayClient, stack: Stack
) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    before = client.legal(match_id, PLAYER).version
    with pytest.raises(grpc.RpcError) as refused:
        # Phase 1: the systems check cannot be run before moving.
        client.submit(match_id, PLAYER, game_action("crashland", EndTurn()))
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert refused.value.details()
    assert client.legal(match_id, PLAYER).version == before
    assert len(topic_events(stack)["board"][match_id]) == before


def test_a_paid_move_before_the_free_ones_is_refused(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    free = [a for a in legal.actions if a.action.crashland.WhichOneof("action") == "move"]
    direction = Direction(free[0].action.crashland.move.direction)
    with pytest.raises(grpc.RpcError) as refused:
        client.submit(match_id, PLAYER, game_action("crashland", Move(direction, Payment.OXYGEN)))
    assert refused.value.code() in (
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
    )
    assert client.legal(match_id, PLAYER).version == legal.version


def test_malformed_actions_are_invalid_arguments(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    with pytest.raises(grpc.RpcError) as empty:
        client.submit(match_id, PLAYER, games_pb2.GameAction())
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(grpc.RpcError) as unknown_game:
        client.create("chess", ["a", "b"], {})
    assert unknown_game.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_a_stale_expected_version_is_aborted(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    with pytest.raises(grpc.RpcError) as stale:
        client.submit(match_id, PLAYER, legal.actions[0].action, expected_version=legal.version - 1)
    assert stale.value.code() == grpc.StatusCode.ABORTED
    assert str(legal.version) in (stale.value.details() or "")


def test_someone_outside_the_match_cannot_act(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    intrusion = board_pb2.SubmitActionRequest(
        match_id=match_id, player="intruder", action=legal.actions[0].action
    )
    with pytest.raises(grpc.RpcError) as anonymous:  # no token at all
        client.bare.SubmitAction(intrusion)
    assert anonymous.value.code() == grpc.StatusCode.UNAUTHENTICATED
    with pytest.raises(grpc.RpcError) as session:  # a player's session: no seat's token
        client.stub.SubmitAction(intrusion)
    assert session.value.code() == grpc.StatusCode.PERMISSION_DENIED
    with pytest.raises(grpc.RpcError) as denied:  # a seat token, naming another seat
        client.stub.SubmitAction(
            board_pb2.SubmitActionRequest(
                match_id=match_id, player="intruder", action=legal.actions[0].action
            ),
            metadata=client.auth(match_id, PLAYER),
        )
    assert denied.value.code() == grpc.StatusCode.PERMISSION_DENIED


def test_watch_match_pushes_the_view_of_each_new_version(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    client.view(match_id, PLAYER, min_version=legal.version)  # the join is projected too
    stream = client.stub.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id=match_id, viewer=PLAYER),
        metadata=client.auth(match_id, PLAYER),
    )
    first = next(stream)
    reply = client.submit(match_id, PLAYER, legal.actions[0].action)
    seen = first.version
    while seen < reply.version:
        seen = next(stream).version
    stream.cancel()
    assert first.version == legal.version and seen == reply.version


def test_views_wait_for_a_version_read_your_writes(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    reply = client.submit(match_id, PLAYER, legal.actions[0].action)
    assert client.view(match_id, PLAYER, min_version=reply.version).version >= reply.version


def test_scoring_records_results_and_statistics(
    client: GatewayClient, finished_matches: list[str], stack: Stack, tmp_path: Path
) -> None:
    # and one played by the signed-in player at its seat, not as a bot
    rng = random.Random(11)
    match_id = open_match(client, "crashland", [PLAYER])
    _, end = play_on(client, match_id, PLAYER, lambda _, legal: rng.choice(list(legal.actions)))
    assert end.next.finished
    standings = scored(client, "crashland", len(finished_matches) + 1)
    assert standings.matches >= len(finished_matches) + 1
    assert {"turns", "oxygen", "battery"} <= set(standings.mean_statistics)
    rows = {p.player: p for p in standings.players}
    bots, mine = rows["bot"], rows[client.player_id]  # a player by identity, not seat name
    assert bots.kind == scoring_pb2.PLAYER_KIND_BOT
    assert bots.played == bots.won + bots.lost >= len(finished_matches)
    assert mine.kind == scoring_pb2.PLAYER_KIND_PLAYER and mine.display_name == PLAYER
    assert mine.played == mine.won + mine.lost >= 1
    # the CLI's table names the rows as people read them
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *STANDINGS],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
        cwd=ROOT,
        env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path)},
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"crashland: {standings.matches} matches scored")
    assert any(line.split()[1:3] == [PLAYER, str(mine.played)] for line in lines[2:])
    assert any(line.split()[1:3] == ["bot", str(bots.played)] for line in lines[2:])


def test_the_board_rebuilds_its_matches_after_a_restart(
    client: GatewayClient, stack: Stack
) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    client.submit(match_id, PLAYER, legal.actions[0].action)
    before = client.legal(match_id, PLAYER)
    stack.stop("board")
    stack.start("board")
    stack.wait_healthy("board")
    after = client.legal(match_id, PLAYER)
    assert after.version == before.version
    assert [a.label for a in after.actions] == [a.label for a in before.actions]
    client.submit(match_id, PLAYER, after.actions[0].action, expected_version=after.version)


def test_creating_a_match_with_bad_players_is_refused(client: GatewayClient) -> None:
    with pytest.raises(grpc.RpcError) as refused:
        client.stub.CreateMatch(
            gateway_pb2.OpenMatchRequest(game="crashland", players=["a", "b"], command_id="x")
        )
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
