"""A gateway keeps a match's state only while it is used (services/gateway/viewstore.py),
the projector a match decoded only while it folds it (services/projector/folder.py), the
board a started match only while it is played (services/board/service.py):
against real services, a finished match it evicted still shows every seat the same view
(its seeds' reveals included) and replays, and an unfinished match evicted while idle
plays on to its end, watched and viewed as before, its state fetched again from the
board's events."""

from __future__ import annotations

import random
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.client import GatewayClient, play_on
from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess
from tabletop.v1 import gateway_pb2, match_pb2
from tests.integration.helpers import eventually, open_match, play_bot_match, remove

#: the gateway's holding times in this stack (300 s and 1800 s as shipped)
FINISHED_HELD_S, IDLE_HELD_S = 1, 2
PLAYERS = ["ann", "bob"]


@pytest.fixture
def forgetful_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    prefix = f"evict{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka = kafka_admin
    stack.extra_env = {
        "TABLETOP_GATEWAY_FINISHED_HELD_S": str(FINISHED_HELD_S),
        "TABLETOP_GATEWAY_IDLE_HELD_S": str(IDLE_HELD_S),
        # the projector evicts too: the match's next events fold from its table record
        "TABLETOP_PROJECTOR_IDLE_HELD_S": str(IDLE_HELD_S),
        # and the board: the match's next command reloads it from board.events
        "TABLETOP_BOARD_IDLE_HELD_S": str(IDLE_HELD_S),
        "TABLETOP_QUOTA_CREATE_BURST": "100",
    }
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        remove(stack)


def metric(stack: Stack, name: str, service: str = "gateway") -> float:
    url = f"http://{stack.metrics_addr(service)}/metrics"
    with urllib.request.urlopen(url, timeout=5) as reply:
        for line in reply.read().decode().splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
    raise AssertionError(f"{name} not exported")


def all_evicted(stack: Stack) -> bool | None:
    return metric(stack, "tabletop_gateway_matches_held") == 0 or None


def views(client: GatewayClient, match_id: str) -> dict[str, bytes]:
    return {
        viewer: client.view(match_id, viewer).SerializeToString(deterministic=True)
        for viewer in ["", *PLAYERS]
    }


def replay(client: GatewayClient, match_id: str) -> list[bytes]:
    request = gateway_pb2.ReplayMatchRequest(match_id=match_id, viewer="ann")
    return [
        step.SerializeToString(deterministic=True)
        for step in client.stub.ReplayMatch(request, metadata=client.auth(match_id, "ann"))
    ]


def test_a_finished_match_evicted_from_the_gateway_shows_the_same_views_and_replay(
    forgetful_stack: Stack,
) -> None:
    client = GatewayClient(forgetful_stack.addr("gateway"))
    # Drillit rolls and draws: its view shows both seeds revealed once it is over
    match_id, _ = play_bot_match(client, "drillit", PLAYERS, seed=3, options={"difficulty": "easy"})
    eventually(lambda: client.view(match_id).provenance.decks_seed or None)
    eventually(lambda: client.view(match_id).provenance.dice_seed or None)
    before, replayed = views(client, match_id), replay(client, match_id)
    fetched = metric(forgetful_stack, "tabletop_gateway_matches_fetched_total")

    eventually(lambda: all_evicted(forgetful_stack), timeout=30)
    listed = client.stub.ListMatches(gateway_pb2.ListMatchesRequest())
    assert match_id in [s.match_id for s in listed.matches]  # its summary stays
    assert views(client, match_id) == before
    assert replay(client, match_id) == replayed
    assert metric(forgetful_stack, "tabletop_gateway_matches_fetched_total") == fetched + 1


def test_an_idle_match_evicted_from_the_gateway_plays_on_to_its_end(
    forgetful_stack: Stack,
) -> None:
    client = GatewayClient(forgetful_stack.addr("gateway"))
    rng = random.Random(11)

    def choose(_: str, legal: object) -> object:
        actions = legal.actions  # type: ignore[attr-defined]
        return actions[rng.randrange(len(actions))]

    # The match's dice and draws are the services' (a random seed each match), and some
    # end within six random actions (1 of 3,000 seeds in-process); a finished match is
    # not evicted as idle. Another is opened then: this test is about an unfinished one.
    for _ in range(3):
        match_id = open_match(client, "drillit", PLAYERS, {"difficulty": "easy"})
        played, legal = play_on(client, match_id, "ann", choose, max_actions=6)
        if not legal.next.finished:
            break
    assert played == 6 and not legal.next.finished
    seen = client.view(match_id, "ann", min_version=legal.version)
    eventually(lambda: all_evicted(forgetful_stack), timeout=30)
    evicted = "tabletop_board_matches_evicted_total"
    eventually(lambda: metric(forgetful_stack, evicted, "board") >= 1 or None, timeout=30)
    # the board restarts from the snapshot it writes as it stops, which holds the evicted
    # match only as its place in the log
    forgetful_stack.stop("board")
    forgetful_stack.start("board")
    forgetful_stack.wait_healthy("board")
    assert client.view(match_id, "ann") == seen  # fetched again: the same view

    # evicted again, then watched: the watch starts from the fetched state and follows
    eventually(lambda: all_evicted(forgetful_stack), timeout=30)
    watch = client.stub.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id=match_id, viewer="bob"),
        metadata=client.auth(match_id, "bob"),
        timeout=600,
    )
    first = next(watch)
    assert first.version == legal.version
    _, legal = play_on(client, match_id, legal.next.players[0], choose)
    assert legal.next.finished
    shown: list[match_pb2.MatchView] = [first, *iter(watch)]  # it ends with the match
    last = shown[-1]
    assert last.status == match_pb2.MATCH_STATUS_FINISHED and last.version == legal.version
    assert client.view(match_id, "bob") == last
