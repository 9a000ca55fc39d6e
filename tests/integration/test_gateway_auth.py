"""Who may do what, through the real gateway: every RPC × every kind of caller.

Callers: no token, a token of another match, the other seat's token, a spectator token,
the seat's own token, an expired token, a tampered one (signed for one seat, edited to
name another), and another player's session (a player who holds no seat of the match).
Every refusal must leave every topic as it was.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack, free_ports
from services.gateway.auth import Role, Tokens
from tabletop.v1 import (
    board_pb2,
    dice_pb2,
    dice_pb2_grpc,
    envelope_pb2,
    envelope_pb2_grpc,
    gateway_pb2,
    scoring_pb2,
)
from tests.integration.helpers import open_match, open_play, topic_events

OK = grpc.StatusCode.OK
UNAUTH = grpc.StatusCode.UNAUTHENTICATED
DENIED = grpc.StatusCode.PERMISSION_DENIED
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
CALLERS = (
    "none",
    "wrong_match",
    "other_seat",
    "spectator",
    "own_seat",
    "expired",
    "tampered",
    "player",
)
SEATS = ["ana", "bo"]
ROOT = Path(__file__).resolve().parents[2]


def _tamper(token: str, seat: str) -> str:
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims["s"] = seat
    edited = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{header}.{edited}.{signature}"


class Matrix:
    """A private drillit match in play, a second match, and a token for each caller."""

    def __init__(self, stack: Stack) -> None:
        self.client = GatewayClient(stack.addr("gateway"))
        self.stranger = GatewayClient(stack.addr("gateway"))  # another player
        self.stack = stack
        self.match = open_match(self.client, "drillit", SEATS, {"difficulty": "easy"}, private=True)
        self.other_match = open_match(self.client, "drillit", SEATS, {"difficulty": "easy"})
        self.client.join(self.match, spectate=True)
        legal = self.client.legal(self.match, SEATS[0])
        self.mover = legal.next.players[0]
        self.other = next(s for s in SEATS if s != self.mover)
        key = stack.secrets()["TABLETOP_TOKEN_KEY"].encode()
        own = self.client.token(self.match, self.mover)
        assert own is not None
        expired, _ = Tokens(key, 60).issue(
            self.match, Role.SEAT, "someone", self.mover, now=time.time() - 3600
        )
        self.tokens: dict[str, str | None] = {
            "none": None,
            "wrong_match": self.client.token(self.other_match, self.mover),
            "other_seat": self.client.token(self.match, self.other),
            "spectator": self.client.token(self.match, "@spectator"),
            "own_seat": own,
            "expired": expired,
            "tampered": _tamper(self.client.token(self.match, self.other) or "", self.mover),
            "player": self.stranger.credential.access_token(
                self.stranger.bare_channel, stack.addr("gateway")
            ),
        }

    def metadata(self, caller: str) -> tuple[tuple[str, str], ...]:
        token = self.tokens[caller]
        return (("authorization", f"Bearer {token}"),) if token else ()

    def keep(self, caller: str, joined: gateway_pb2.JoinMatchReply) -> None:
        """A seat joined again: its older token no longer works, the caller uses the new."""
        self.tokens[caller] = joined.token

    def legal_action(self) -> Any:
        return self.client.legal(self.match, self.mover).actions[0].action


def _status(call: Callable[[], Any]) -> grpc.StatusCode:
    try:
        result = call()
        if hasattr(result, "__next__"):  # a stream: its first message (or its refusal)
            next(result)
            result.cancel()
        return OK
    except grpc.RpcError as error:
        code: grpc.StatusCode = error.code()
        return code


#: RPC → the status each caller gets (columns in CALLERS order)
EXPECTED: dict[str, tuple[grpc.StatusCode, ...]] = {
    # a match is created by a player (its session), with no other token
    "CreateMatch": (UNAUTH, UNAUTH, UNAUTH, UNAUTH, UNAUTH, UNAUTH, UNAUTH, OK),
    "JoinMatch(spectate)": (DENIED, DENIED, OK, OK, OK, UNAUTH, UNAUTH, DENIED),
    "ListMatches": (OK, OK, OK, OK, OK, UNAUTH, UNAUTH, OK),
    "GetView(seat)": (UNAUTH, DENIED, DENIED, DENIED, OK, UNAUTH, UNAUTH, DENIED),
    "GetView(default)": (UNAUTH, DENIED, OK, OK, OK, UNAUTH, UNAUTH, DENIED),
    "GetLegalActions": (UNAUTH, DENIED, DENIED, DENIED, OK, UNAUTH, UNAUTH, DENIED),
    "WatchMatch(seat)": (UNAUTH, DENIED, DENIED, DENIED, OK, UNAUTH, UNAUTH, DENIED),
    "PlayMatch(seat)": (UNAUTH, DENIED, DENIED, DENIED, OK, UNAUTH, UNAUTH, DENIED),
    "ReplayMatch": (UNAUTH, DENIED, OK, OK, OK, UNAUTH, UNAUTH, DENIED),
    "ReplayMatchBatches": (UNAUTH, DENIED, OK, OK, OK, UNAUTH, UNAUTH, DENIED),
    "ExportMatch(in play)": (
        UNAUTH,
        DENIED,
        PRECONDITION,
        PRECONDITION,
        PRECONDITION,
        UNAUTH,
        UNAUTH,
        DENIED,
    ),
    "GetStandings": (OK, OK, OK, OK, OK, UNAUTH, UNAUTH, OK),
    # a seat is handed over by a player of the match, and only once its holder left it: the
    # match's tokens are no player's, the stranger is not at the table (the board says so)
    "HandOverSeat(held seat)": (UNAUTH, DENIED, DENIED, DENIED, DENIED, UNAUTH, UNAUTH, DENIED),
    # last: the own seat's submit changes the match, its re-join supersedes its token
    "SubmitAction": (UNAUTH, DENIED, DENIED, DENIED, OK, UNAUTH, UNAUTH, DENIED),
    # a held seat: its own token (its holder) joins it again; another player is refused by
    # the board; no player's claim at all (no token, a token passed on) is asked to sign in
    "JoinMatch(taken seat)": (UNAUTH, UNAUTH, UNAUTH, UNAUTH, OK, UNAUTH, UNAUTH, DENIED),
}


def _calls(m: Matrix, caller: str) -> dict[str, Callable[[], Any]]:
    # the client's calls carry its player's session unless given a token: "none" has none
    stub = m.client.bare if caller == "none" else m.client.stub
    md, match = m.metadata(caller), m.match
    return {
        "CreateMatch": lambda: stub.CreateMatch(
            gateway_pb2.OpenMatchRequest(game="crashland", players=["solo"]), metadata=md
        ),
        "JoinMatch(spectate)": lambda: stub.JoinMatch(
            gateway_pb2.JoinMatchRequest(match_id=match, spectate=True), metadata=md
        ),
        "JoinMatch(taken seat)": lambda: m.keep(
            caller,
            stub.JoinMatch(gateway_pb2.JoinMatchRequest(match_id=match, seat=m.mover), metadata=md),
        ),
        "ListMatches": lambda: stub.ListMatches(gateway_pb2.ListMatchesRequest(), metadata=md),
        "HandOverSeat(held seat)": lambda: stub.HandOverSeat(
            gateway_pb2.HandOverSeatRequest(match_id=match, seat=m.mover, open=True), metadata=md
        ),
        "GetView(seat)": lambda: stub.GetView(
            gateway_pb2.GetViewRequest(match_id=match, viewer=m.mover), metadata=md
        ),
        "GetView(default)": lambda: stub.GetView(
            gateway_pb2.GetViewRequest(match_id=match), metadata=md
        ),
        "GetLegalActions": lambda: stub.GetLegalActions(
            board_pb2.GetLegalActionsRequest(match_id=match, player=m.mover), metadata=md
        ),
        "WatchMatch(seat)": lambda: stub.WatchMatch(
            gateway_pb2.WatchMatchRequest(match_id=match, viewer=m.mover), metadata=md
        ),
        "PlayMatch(seat)": lambda: stub.PlayMatch(
            iter(
                [
                    gateway_pb2.PlayRequest(
                        watch=gateway_pb2.WatchMatchRequest(match_id=match, viewer=m.mover)
                    )
                ]
            ),
            metadata=md,
        ),
        "ReplayMatch": lambda: stub.ReplayMatch(
            gateway_pb2.ReplayMatchRequest(match_id=match), metadata=md
        ),
        "ReplayMatchBatches": lambda: stub.ReplayMatchBatches(
            gateway_pb2.ReplayMatchBatchesRequest(match_id=match), metadata=md
        ),
        "ExportMatch(in play)": lambda: stub.ExportMatch(
            gateway_pb2.ExportMatchRequest(match_id=match), metadata=md
        ),
        "GetStandings": lambda: stub.GetStandings(
            scoring_pb2.GetStandingsRequest(game="drillit"), metadata=md
        ),
        "SubmitAction": lambda: stub.SubmitAction(
            board_pb2.SubmitActionRequest(
                match_id=match,
                player=m.mover,
                action=m.legal_action(),
                command_id=str(uuid.uuid4()),
            ),
            metadata=md,
        ),
    }


def _event_counts(stack: Stack) -> dict[str, int]:
    events = topic_events(stack)
    return {stream: sum(map(len, by_match.values())) for stream, by_match in events.items()}


@pytest.fixture(scope="module")
def matrix(stack: Stack) -> Matrix:
    return Matrix(stack)


def test_every_rpc_for_every_caller(matrix: Matrix, stack: Stack) -> None:
    # Refusals first, all of them: not one event may reach any topic.
    before = _event_counts(stack)
    got: dict[tuple[str, str], grpc.StatusCode] = {}
    for rpc, expected in EXPECTED.items():
        for caller, status in zip(CALLERS, expected, strict=True):
            if status != OK:
                got[rpc, caller] = _status(_calls(matrix, caller)[rpc])
    assert _event_counts(stack) == before
    for rpc, expected in EXPECTED.items():
        for caller, status in zip(CALLERS, expected, strict=True):
            if status == OK:
                got[rpc, caller] = _status(_calls(matrix, caller)[rpc])
    wrong = {
        f"{rpc} as {caller}": f"{got[rpc, caller].name}, expected {status.name}"
        for rpc, expected in EXPECTED.items()
        for caller, status in zip(CALLERS, expected, strict=True)
        if got[rpc, caller] != status
    }
    assert not wrong, wrong


def test_each_token_sees_only_its_own_view(matrix: Matrix) -> None:
    stub, match = matrix.client.stub, matrix.match
    for caller, viewer in (
        ("own_seat", matrix.mover),
        ("other_seat", matrix.other),
        ("spectator", ""),
    ):
        view = stub.GetView(
            gateway_pb2.GetViewRequest(match_id=match), metadata=matrix.metadata(caller)
        )
        assert view.viewer == viewer
    public = stub.GetView(gateway_pb2.GetViewRequest(match_id=matrix.other_match))
    assert public.viewer == ""  # a public match: anyone sees the spectator view
    replay = stub.ReplayMatch(
        gateway_pb2.ReplayMatchRequest(match_id=match), metadata=matrix.metadata("own_seat")
    )
    for step in replay:  # in play: a spectator's replay, payloads hidden
        assert step.view.viewer == "" and not step.event.HasField("payload")
    batches = stub.ReplayMatchBatches(
        gateway_pb2.ReplayMatchBatchesRequest(match_id=match, viewer=matrix.mover),
        metadata=matrix.metadata("own_seat"),
    )
    steps = [step for batch in batches for step in batch.steps]
    assert steps and all(s.view.viewer == "" and not s.event.HasField("payload") for s in steps)


def test_a_private_match_is_listed_only_to_its_players(matrix: Matrix) -> None:
    def listed(caller: str) -> set[str]:
        ids: set[str] = set()
        token = ""
        while True:
            stub = matrix.client.bare if caller == "none" else matrix.client.stub
            reply = stub.ListMatches(
                gateway_pb2.ListMatchesRequest(page_size=2, page_token=token),
                metadata=matrix.metadata(caller),
            )
            ids |= {m.match_id for m in reply.matches}
            assert len(reply.matches) <= 2
            if not reply.next_page_token:
                return ids
            token = reply.next_page_token

    assert matrix.match in listed("own_seat") and matrix.match in listed("spectator")
    assert matrix.match not in listed("none") and matrix.match not in listed("wrong_match")
    assert matrix.match not in listed("player")  # another player's private match
    assert matrix.other_match in listed("none")  # public


def test_a_free_seat_then_a_taken_one(stack: Stack) -> None:
    host = GatewayClient(stack.addr("gateway"))
    match = host.create("drillit", SEATS, {"difficulty": "easy"})
    guest = GatewayClient(stack.addr("gateway"))  # another terminal: no token yet
    first = guest.join(match, name="Guest")
    assert first.seat == SEATS[0]
    with pytest.raises(grpc.RpcError) as taken:
        GatewayClient(stack.addr("gateway")).join(match, seat=SEATS[0])
    assert taken.value.code() == DENIED
    again = guest.join(match, seat=SEATS[0])  # a new device with the seat's token
    assert again.seat == SEATS[0]
    # Not even the creator takes a held seat: it would read its hand and act for its player.
    before = _event_counts(stack)
    with pytest.raises(grpc.RpcError) as by_creator:
        host.join(match, seat=SEATS[0])
    assert by_creator.value.code() == DENIED and host.token(match, SEATS[0]) is None
    assert "only the player who holds it" in (by_creator.value.details() or "")
    assert _event_counts(stack) == before
    second = GatewayClient(stack.addr("gateway")).join(match, name="Other")
    assert second.seat == SEATS[1]  # "first free seat" moves on
    assert guest.join(match).seat == SEATS[0]  # no seat named: the player's own, again
    # The seat was joined again by its holder: the older token no longer acts for it, the
    # newest does; the creator's token sees the spectator's view only.
    assert guest.legal(match, SEATS[0]).version >= again.version
    view = guest.view(match, SEATS[0], min_version=second.version)
    assert view.viewer == SEATS[0]
    with pytest.raises(grpc.RpcError) as not_the_seat:
        host.stub.GetView(
            gateway_pb2.GetViewRequest(match_id=match, viewer=SEATS[0]), metadata=host.auth(match)
        )
    assert not_the_seat.value.code() == DENIED


def test_a_seat_taken_with_the_create_acts_at_once_and_is_taken(stack: Stack) -> None:
    stub = GatewayClient(stack.addr("gateway")).stub
    before = _event_counts(stack)
    for seat, name in (("zed", ""), ("ana", "x" * 10_000)):  # not a seat; a name too long
        bad = gateway_pb2.OpenMatchRequest(
            game="drillit", players=SEATS, seat=seat, display_name=name
        )
        with pytest.raises(grpc.RpcError) as refused:
            stub.CreateMatch(bad)
        assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert len(refused.value.details() or "") < 200  # no echo of the input
    assert _event_counts(stack) == before
    request = gateway_pb2.OpenMatchRequest(
        game="drillit",
        players=SEATS,
        options={"difficulty": "easy"},
        command_id=str(uuid.uuid4()),
        seat=SEATS[1],
        display_name="Bo",
    )
    opened = stub.CreateMatch(request)
    seat_token = (("authorization", f"Bearer {opened.seat_token}"),)
    assert opened.seat_token_expires_at > time.time()
    # the token acts for its seat at once: legal actions, and the view once projected
    legal = stub.GetLegalActions(
        board_pb2.GetLegalActionsRequest(match_id=opened.match_id, player=SEATS[1]),
        metadata=seat_token,
    )
    assert legal.version == opened.version and legal == opened.legal_actions
    view = stub.GetView(
        gateway_pb2.GetViewRequest(
            match_id=opened.match_id, viewer=SEATS[1], min_version=opened.version, wait_ms=10_000
        ),
        metadata=seat_token,
    )
    assert view.viewer == SEATS[1] and view.version >= opened.version
    board = topic_events(stack)["board"][opened.match_id]
    assert [e.event_type.rsplit(".", 1)[-1] for e in board[:2]] == ["MatchCreated", "SeatJoined"]
    # the seat is taken: a stranger cannot have it, the other one is still free
    guest = GatewayClient(stack.addr("gateway"))
    with pytest.raises(grpc.RpcError) as taken:
        guest.join(opened.match_id, seat=SEATS[1])
    assert taken.value.code() == DENIED
    assert guest.join(opened.match_id).seat == SEATS[0]
    # a retried create is the same match, its seat token still the one that acts
    again = stub.CreateMatch(request)
    assert (again.match_id, again.version) == (opened.match_id, opened.version)
    retried = (("authorization", f"Bearer {again.seat_token}"),)
    assert (
        stub.GetLegalActions(
            board_pb2.GetLegalActionsRequest(match_id=opened.match_id, player=SEATS[1]),
            metadata=retried,
        ).version
        >= opened.version
    )


def test_internal_services_accept_only_their_peers(stack: Stack) -> None:
    match_id = f"peer-{uuid.uuid4()}"
    for credential in ((), (("x-tabletop-peer", "not-the-token"),)):
        with grpc.insecure_channel(stack.addr("dice")) as channel:
            with pytest.raises(grpc.RpcError) as reveal:
                dice_pb2_grpc.DiceStub(channel).Reveal(
                    dice_pb2.RevealRequest(match_id=match_id), metadata=credential
                )
            assert reveal.value.code() == UNAUTH
        with grpc.insecure_channel(stack.addr("board")) as channel:
            with pytest.raises(grpc.RpcError) as listed:
                list(
                    envelope_pb2_grpc.EventSourceStub(channel).ListEvents(
                        envelope_pb2.ListEventsRequest(match_id=match_id), metadata=credential
                    )
                )
            assert listed.value.code() == UNAUTH
    gateway_methods = {m.name for m in gateway_pb2.DESCRIPTOR.services_by_name["Gateway"].methods}
    assert not gateway_methods & {"Reveal", "ListEvents", "Commit", "Roll", "Draw"}


def _second_gateway(stack: Stack, run_dir: Path, env: dict[str, str]) -> Stack:
    """Another gateway in front of the same peers, with the same secrets and its own env."""
    shutil.copy(stack.run_dir / "secrets.env", run_dir / "secrets.env")
    ports = dict(stack.ports)
    grpc_port, metrics_port = free_ports(2)
    ports["gateway"] = (grpc_port, metrics_port)
    return Stack(
        run_dir,
        kafka=stack.kafka,
        topic_prefix=stack.topic_prefix,
        partitions=stack.partitions,
        ports=ports,
        extra_env={**stack.extra_env, **env},  # the shared stack's settings, then these
    )


def test_quotas_answer_resource_exhausted_with_a_retry_after(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    small = _second_gateway(
        stack,
        tmp_path_factory.mktemp("quota"),
        {
            "TABLETOP_QUOTA_CREATE_PER_S": "0.01",
            "TABLETOP_QUOTA_CREATE_BURST": "2",
            "TABLETOP_QUOTA_ACTIONS_PER_S": "0.01",
            "TABLETOP_QUOTA_ACTIONS_BURST": "3",
        },
    )
    small.start("gateway")
    try:
        small.wait_healthy("gateway")
        client = GatewayClient(small.addr("gateway"), patience_s=0)  # see the refusal itself
        match = client.create("crashland", ["solo"], {})  # create 1 of 2
        client.join(match, "solo")  # join: 2 of 2
        with pytest.raises(grpc.RpcError) as creates:
            client.create("crashland", ["solo"], {})
        assert creates.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        retry = dict(creates.value.trailing_metadata() or ())["retry-after-ms"]
        assert int(retry) > 0
        statuses, versions = [], []
        for _ in range(5):
            legal = client.legal(match, "solo")
            try:
                versions.append(client.submit(match, "solo", legal.actions[0].action).version)
                statuses.append(OK)
            except grpc.RpcError as error:
                statuses.append(error.code())
        assert statuses == [OK, OK, OK, *[grpc.StatusCode.RESOURCE_EXHAUSTED] * 2]
        assert client.legal(match, "solo").version == versions[-1]  # refusals appended nothing
        # the same quota on a PlayMatch stream: an answer with its retry-after, not the end
        play = open_play(client, match, "solo")
        try:
            legal = client.legal(match, "solo")
            play.send(
                gateway_pb2.PlayRequest(
                    id=1,
                    action=board_pb2.SubmitActionRequest(
                        player="solo", action=legal.actions[0].action, command_id="q" * 16
                    ),
                )
            )
            refused = play.answer(1).refused
            assert refused.code == "RESOURCE_EXHAUSTED" and refused.retry_after_ms > 0
            assert play.view_at_least(legal.version).version == legal.version
        finally:
            play.close()
        assert client.legal(match, "solo").version == versions[-1]
    finally:
        small.stop("gateway")


def test_a_gateway_whose_views_lag_past_its_bound_refuses_new_matches_early(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # A bound of 1 ms: every view comes from the projector later than that after its
    # acknowledgement, so once one has come (the gateway's lag gauge shows it) the next
    # match is refused (for the lag window, a second).
    small = _second_gateway(
        stack,
        tmp_path_factory.mktemp("admission"),
        {"TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "1", "TABLETOP_QUOTA_CREATE_BURST": "100"},
    )
    small.start("gateway")
    try:
        small.wait_healthy("gateway")
        client = GatewayClient(small.addr("gateway"), patience_s=0)  # see the refusal itself
        refusals = []
        for _ in range(5):  # a loaded machine may let the window pass between two calls
            try:
                match = client.create("crashland", ["solo"], {})
            except grpc.RpcError as error:
                refusals.append(error)
                break
            joined = client.join(match, "solo")
            client.view(match, "solo", min_version=joined.version)  # the board's copy
            _view_lag_measured(small)  # ... and then the projector's
        assert refusals and refusals[0].code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "behind" in (refusals[0].details() or "")  # admission, not the quota
        assert int(dict(refusals[0].trailing_metadata() or ())["retry-after-ms"]) > 0
    finally:
        small.stop("gateway")


def _view_lag_measured(stack: Stack, limit_s: float = 30.0) -> None:
    """Wait until the gateway's view-lag gauge shows a lag (a view came from the projector)."""
    deadline = time.monotonic() + limit_s
    while True:
        with urllib.request.urlopen(f"http://{stack.metrics_addr('gateway')}/metrics") as r:
            for line in r.read().decode().splitlines():
                if line.startswith("tabletop_gateway_view_lag_seconds ") and float(line.split()[1]):
                    return
        assert time.monotonic() < deadline, "no view came from the projector"
        time.sleep(0.05)


def test_the_gateway_serves_tls_when_given_a_certificate(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> None:
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl to make a test certificate")
    run_dir = tmp_path_factory.mktemp("tls")
    cert, key = run_dir / "tls.crt", run_dir / "tls.key"
    subprocess.run(
        [
            "openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
            "-keyout", str(key), "-out", str(cert),
        ],
        check=True,
        capture_output=True,
    )  # fmt: skip
    tls = _second_gateway(
        stack, run_dir, {"TABLETOP_TLS_CERT": str(cert), "TABLETOP_TLS_KEY": str(key)}
    )
    tls.start("gateway")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client = GatewayClient(tls.addr("gateway"), ca_file=str(cert))
                match = open_match(client, "crashland", ["solo"])
                break
            except grpc.RpcError:
                assert time.monotonic() < deadline, "the TLS gateway did not come up"
                time.sleep(0.5)
        assert client.view(match, "solo", min_version=1).viewer == "solo"
        with pytest.raises(grpc.RpcError) as plaintext:
            GatewayClient(tls.addr("gateway")).stub.ListMatches(
                gateway_pb2.ListMatchesRequest(), timeout=5
            )
        assert plaintext.value.code() == grpc.StatusCode.UNAVAILABLE
    finally:
        tls.stop("gateway")


def test_a_second_person_joins_from_another_terminal(stack: Stack, tmp_path: Path) -> None:
    """`tabletop play … --open bo` in one terminal, `tabletop join MATCH` in another; each
    keeps its own tokens and its own player (different files: different people)."""

    def tabletop(tokens: str, *args: str) -> subprocess.Popen[str]:
        return subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={
                **os.environ,
                "TABLETOP_TOKENS": str(tmp_path / tokens),
                "TABLETOP_CREDENTIALS": str(tmp_path / f"credentials-{tokens}"),
            },
        )

    host = tabletop(
        "host.json", "play", "drillit", "--players", "ana,bo", "--bot", "ana=random",
        "--open", "bo", "--option", "difficulty=easy", "--option", "distance=short", "--json",
    )  # fmt: skip
    assert host.stderr is not None
    line = host.stderr.readline()
    match_id = line.split()[1].rstrip(":")
    guest = tabletop("guest.json", "join", match_id, "--bot", "random", "--seed", "3")
    guest_out, guest_err = guest.communicate(timeout=300)
    host_out, _ = host.communicate(timeout=300)
    assert guest.returncode == 0, guest_err
    assert f"match {match_id}:" in guest_out
    assert f"joined match {match_id} as bo" in guest_err
    assert host.returncode == 0
    result = json.loads(host_out.splitlines()[-1])
    assert result["match_id"] == match_id and set(result["results"]) == {"ana", "bo"}
    assert result["actions"] > 0  # ana's, played here
    guest_tokens = json.loads((tmp_path / "guest.json").read_text())
    assert any(key.endswith(f"/{match_id}/bo") for key in guest_tokens)
    assert not any(key.endswith("/@creator") for key in guest_tokens)
