"""The matches in play are bounded for the whole stack: with N in play a real gateway
refuses the N+1th CreateMatch (RESOURCE_EXHAUSTED, a retry-after, a reason a player
understands), a restarted gateway counts the same matches from the views topic, and a
new match is admitted once one in play has finished. Matches nobody joins hold no place
and their boards close them within their lobby time: a flood of them leaves an honest
player able to create and play at once."""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from services.board.lobby import EXPIRED_REASON
from services.cli.client import GatewayClient, play_on
from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess
from tabletop.v1 import gateway_pb2, match_pb2
from tests.integration.helpers import eventually, remove

LIMIT = 2
#: the lobby time of the bounded stack (300 s as shipped)
LOBBY_TTL_S = 6


@pytest.fixture
def bounded_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    """A stack of its own: other tests' matches in play must not count here."""
    prefix = f"inplay{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=1)
    stack.kafka = kafka_admin
    stack.extra_env = {
        "TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY": str(LIMIT),
        "TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "0",
        "TABLETOP_QUOTA_CREATE_BURST": "100",
        "TABLETOP_GATEWAY_LOBBY_TTL_S": str(LOBBY_TTL_S),
    }
    try:
        stack.up()
        yield stack
    finally:
        stack.down()
        remove(stack)


def _refused_create(client: GatewayClient) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        client.stub.CreateMatch(gateway_pb2.OpenMatchRequest(game="crashland", players=["solo"]))
    return refused.value


def test_past_the_bound_a_new_match_waits_until_one_in_play_finishes(
    bounded_stack: Stack,
) -> None:
    client = GatewayClient(bounded_stack.addr("gateway"), patience_s=0)
    in_play = []
    for _ in range(LIMIT):
        match_id = client.create("crashland", ["solo"], {}, bots=["solo"])
        client.join(match_id, "solo")
        client.view(match_id, "solo", min_version=1)
        in_play.append(match_id)
    refused = _refused_create(client)
    assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "full" in (refused.details() or "")
    assert int(dict(refused.trailing_metadata() or ())["retry-after-ms"]) > 0

    # Restarted, the gateway reads the views topic again and counts the same matches.
    bounded_stack.stop("gateway")
    bounded_stack.start("gateway")
    bounded_stack.wait_healthy("gateway")
    client = GatewayClient(bounded_stack.addr("gateway"), patience_s=0, store=client.tokens)
    client.view(in_play[-1], "solo", min_version=1)  # the views are read back
    assert _refused_create(client).code() == grpc.StatusCode.RESOURCE_EXHAUSTED

    # One finishes: its place frees.
    rng = random.Random(5)
    _, legal = play_on(
        client, in_play[-1], "solo", lambda _, legal: rng.choice(list(legal.actions))
    )
    assert legal.next.finished
    client.view(in_play[-1], "solo", min_version=legal.version)
    assert client.create("crashland", ["solo"], {})


def test_a_flood_of_matches_nobody_joins_leaves_the_door_open_and_closes_in_minutes(
    bounded_stack: Stack,
) -> None:
    # two players, each with as many matches waiting for players as one may have (5)
    flooders = [GatewayClient(bounded_stack.addr("gateway"), patience_s=0) for _ in range(2)]
    flood = [
        f.create("drillit", ["a", "b"], {"difficulty": "easy"}) for f in flooders for _ in range(5)
    ]
    assert len(flood) > LIMIT  # none of them holds a place in play
    flooder = flooders[0]
    with pytest.raises(grpc.RpcError) as sixth:  # one player alone cannot keep the door shut
        flooder.create("drillit", ["a", "b"], {"difficulty": "easy"})
    assert sixth.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (
        0 < int(dict(sixth.value.trailing_metadata() or ())["retry-after-ms"]) <= LOBBY_TTL_S * 1000
    )

    honest = GatewayClient(bounded_stack.addr("gateway"), patience_s=0)
    match_id = honest.create("crashland", ["solo"], {}, seat="solo")
    rng = random.Random(7)
    actions, _ = play_on(
        honest, match_id, "solo", lambda _, legal: rng.choice(list(legal.actions)), max_actions=5
    )
    assert actions == 5

    # each lobby is closed by its board, a fact every reader sees: over, nobody's result
    def closed(match_id: str) -> bool:
        view = flooder.view(match_id)
        return view.status == match_pb2.MATCH_STATUS_FINISHED

    for lobby in flood:
        eventually(lambda: closed(lobby) or None, timeout=LOBBY_TTL_S + 30)  # noqa: B023
        view = flooder.view(lobby)
        assert view.end_reason == EXPIRED_REASON and not view.results
    # the honest match plays on
    assert honest.view(match_id, "solo").status == match_pb2.MATCH_STATUS_ACTIVE
