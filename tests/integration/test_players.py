"""A player identity that outlives a match, through the real gateway, board and Kafka: a
device signs up, creates and joins; a second device with the same credential (a new
channel, a new process's view of it) rejoins the player's seat and lists the player's
matches; another player cannot take that seat; limits are per player, so one player's
flood leaves another able to create at once, and each refusal says truthfully when to
come back."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.session import Credential
from services.cli.stack import Stack, free_ports
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc, match_pb2

pytestmark = pytest.mark.integration


def _rejected(call: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as refused:
        call()  # type: ignore[operator]
    return refused.value


def test_a_player_creates_joins_and_rejoins_its_seat_from_a_second_device(
    stack: Stack, tmp_path: Path
) -> None:
    credential = Credential.load(tmp_path / "credentials.json")  # made here, on first use
    laptop = GatewayClient(stack.addr("gateway"), credential=credential)
    stranger = GatewayClient(stack.addr("gateway"))
    try:
        match_id = laptop.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
        joined = laptop.join(match_id, "ann", "Ana")
        laptop.legal(match_id, "ann")  # the seat's token acts
        player = laptop.player_id
        assert player.startswith("p-") and stranger.player_id != player

        # the other device: the same credential, read from its file, a channel of its own
        phone = GatewayClient(
            stack.addr("gateway"), credential=Credential.load(tmp_path / "credentials.json")
        )
        try:
            assert phone.player_id == player
            mine = {m.match_id: m for m in phone.my_matches()}
            assert list(mine[match_id].your_seats) == ["ann"]
            assert mine[match_id].status == match_pb2.MATCH_STATUS_ACTIVE
            again = phone.join(match_id)  # no seat named: the player's own
            assert again.seat == "ann" and again.token != joined.token
            assert again.version > joined.version
            phone.view(match_id, "ann", min_version=again.version)
            phone.legal(match_id, "ann")
            # the first device's token no longer acts for the seat: one holder, one token
            refused = _rejected(lambda: laptop.legal(match_id, "ann"))
            assert refused.code() == grpc.StatusCode.PERMISSION_DENIED
        finally:
            phone.close()

        # another player takes the free seat, never the held one
        taken = _rejected(lambda: stranger.join(match_id, "ann", "Mallory"))
        assert taken.code() == grpc.StatusCode.PERMISSION_DENIED
        assert "only the player who holds it" in (taken.details() or "")
        assert stranger.join(match_id, "", "Bo").seat == "bob"
        assert [m.match_id for m in stranger.my_matches()] == [match_id]
        assert list(stranger.my_matches()[0].your_seats) == ["bob"]
    finally:
        laptop.close()
        stranger.close()


def test_my_matches_lists_the_players_matches_in_play_and_finished_only(stack: Stack) -> None:
    player = GatewayClient(stack.addr("gateway"))
    other = GatewayClient(stack.addr("gateway"))
    try:
        finished = player.create("crashland", ["solo"], {}, seat="solo")
        in_play = player.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
        private = player.create("drillit", ["ann", "bob"], {"difficulty": "easy"}, private=True)
        theirs = other.create("crashland", ["solo"], {})
        # play the crashland match to its end
        for _ in range(500):
            legal = player.legal(finished, "solo")
            if not legal.actions:
                break
            player.submit(finished, "solo", legal.actions[0].action)
        player.view(finished, "solo", min_version=player.legal(finished, "solo").version)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            mine = {m.match_id: m for m in player.my_matches()}
            if mine.get(finished) and mine[finished].status == match_pb2.MATCH_STATUS_FINISHED:
                break
            time.sleep(0.2)
        assert set(mine) == {finished, in_play, private}  # not theirs, the private one too
        assert theirs not in mine
        assert mine[finished].status == match_pb2.MATCH_STATUS_FINISHED
        assert list(mine[finished].your_seats) == ["solo"]
        assert list(mine[in_play].your_seats) == []  # created, no seat taken
        ended = player.my_matches(status=match_pb2.MATCH_STATUS_FINISHED)
        assert [m.match_id for m in ended] == [finished]
        # "mine" without a player's session is refused, with how to get one
        anonymous = _rejected(
            lambda: player.stub.ListMatches(
                gateway_pb2.ListMatchesRequest(mine=True), metadata=player.auth(in_play)
            )
        )
        assert anonymous.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "Authenticate" in (anonymous.details() or "")
    finally:
        player.close()
        other.close()


def test_create_and_join_need_a_player(stack: Stack) -> None:
    with grpc.insecure_channel(stack.addr("gateway")) as channel:
        bare = gateway_pb2_grpc.GatewayStub(channel)
        create = _rejected(
            lambda: bare.CreateMatch(
                gateway_pb2.OpenMatchRequest(game="crashland", players=["solo"])
            )
        )
        assert create.code() == grpc.StatusCode.UNAUTHENTICATED
        assert "sign in first" in (create.details() or "")
        refresh = _rejected(
            lambda: bare.RefreshSession(gateway_pb2.RefreshSessionRequest(refresh_token="x.y.z"))
        )
        assert refresh.code() == grpc.StatusCode.UNAUTHENTICATED


def _limited_gateway(stack: Stack, run_dir: Path) -> Stack:
    """Another gateway in front of the same peers and secrets, with small limits."""
    shutil.copy(stack.run_dir / "secrets.env", run_dir / "secrets.env")
    ports = dict(stack.ports)
    ports["gateway"] = tuple(free_ports(2))  # type: ignore[assignment]
    return Stack(
        run_dir,
        kafka=stack.kafka,
        topic_prefix=stack.topic_prefix,
        partitions=stack.partitions,
        ports=ports,
        extra_env={
            **stack.extra_env,
            "TABLETOP_QUOTA_CREATE_PER_S": "0.01",  # a create a 100 s per player
            "TABLETOP_QUOTA_CREATE_BURST": "3",
            "TABLETOP_GATEWAY_MAX_OPEN_LOBBIES_PER_PLAYER": "2",
            "TABLETOP_GATEWAY_MAX_OPEN_MATCHES_PER_PLAYER": "2",
            "TABLETOP_GATEWAY_LOBBY_TTL_S": "120",
            "TABLETOP_QUOTA_SIGNUP_PER_S": "0.001",
            "TABLETOP_QUOTA_SIGNUP_BURST": "3",
        },
    )


def test_limits_are_per_player_and_tell_the_truth_about_when_to_come_back(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    limited = _limited_gateway(stack, tmp_path_factory.mktemp("limits"))
    limited.start("gateway")
    flooder = honest = None
    try:
        limited.wait_healthy("gateway")
        address = limited.addr("gateway")
        flooder = GatewayClient(address, patience_s=0)
        honest = GatewayClient(address, patience_s=0)
        seats = ["ann", "bob"]
        began = time.time()
        flooder.create("drillit", seats, {"difficulty": "easy"})  # waiting for players
        flooder.create("drillit", seats, {"difficulty": "easy"})
        waiting = _rejected(lambda: flooder.create("drillit", seats, {"difficulty": "easy"}))
        assert waiting.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "2 matches waiting for players" in (waiting.details() or "")
        retry_ms = int(dict(waiting.trailing_metadata() or ())["retry-after-ms"])
        # when the first of them closes: its lobby time after its creation, not a guess
        assert 120_000 - (time.time() - began) * 1000 - 2_000 <= retry_ms <= 120_000
        # the honest player creates and plays at once
        match_id = honest.create("crashland", ["solo"], {}, seat="solo")
        legal = honest.legal(match_id, "solo")
        honest.submit(match_id, "solo", legal.actions[0].action)
        # the flooder's create budget is spent (3 of 3): told when one comes back
        spent = _rejected(lambda: flooder.create("crashland", ["solo"], {}, seat="solo"))
        assert spent.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        wait_ms = int(dict(spent.trailing_metadata() or ())["retry-after-ms"])
        assert 90_000 <= wait_ms <= 100_000  # one create each 100 s
        assert honest.create("crashland", ["solo"], {}, seat="solo")
        # two matches in play: the honest player finishes one before it starts a third
        busy = _rejected(lambda: honest.create("crashland", ["solo"], {}, seat="solo"))
        assert busy.code() == grpc.StatusCode.FAILED_PRECONDITION
        assert "finish one" in (busy.details() or "")
        # sign-ups per address: the third of three, then refused with a retry-after
        third = GatewayClient(address, patience_s=0)
        try:
            assert third.player_id
            fourth = GatewayClient(address, patience_s=0)
            flood = _rejected(lambda: fourth.player_id)
            fourth.close()
            assert flood.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert int(dict(flood.trailing_metadata() or ())["retry-after-ms"]) > 0
        finally:
            third.close()
        # nothing refused reached the board: the flooder's two lobbies only
        listed = flooder.my_matches()
        assert len(listed) == 2 and all(not m.started for m in listed)
    finally:
        for client in (flooder, honest):
            if client is not None:
                client.close()
        limited.stop("gateway")
