"""The platform's services on their own: dice, decks, health, reflection, metrics, CLI."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
import uuid
from pathlib import Path

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.common.envelope import is_a, unpack
from services.games.randomness import DerivedRandom, commitment
from tabletop.v1 import (
    decks_pb2,
    decks_pb2_grpc,
    dice_pb2,
    dice_pb2_grpc,
    platform_events_pb2,
)
from tests.integration.helpers import play_bot_match, topic_events

ROOT = Path(__file__).resolve().parents[2]
GRPC_SERVICES = {
    "dice": "tabletop.v1.Dice",
    "decks": "tabletop.v1.Decks",
    "board": "tabletop.v1.Board",
    "scoring": "tabletop.v1.Scoring",
    "gateway": "tabletop.v1.Gateway",
}


def grpcurl() -> str:
    found = shutil.which("grpcurl") or str(ROOT / ".cache/bin/grpcurl")
    if not Path(found).exists():
        if os.environ.get("CI"):
            pytest.fail("grpcurl is not installed (make tools installs it)")
        pytest.skip("grpcurl not installed; run make tools")
    return found


@pytest.mark.parametrize("service", sorted(GRPC_SERVICES))
def test_grpcurl_lists_the_services_by_reflection_and_health_is_serving(
    stack: Stack, service: str
) -> None:
    listed = subprocess.run(
        [grpcurl(), "-plaintext", stack.addr(service), "list"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout.split()
    assert GRPC_SERVICES[service] in listed
    assert "grpc.health.v1.Health" in listed
    health = subprocess.run(
        [grpcurl(), "-plaintext", stack.addr(service), "grpc.health.v1.Health/Check"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert json.loads(health)["status"] == "SERVING"


def test_dice_commit_roll_and_reveal_are_verifiable(stack: Stack) -> None:
    match_id = f"dice-{uuid.uuid4()}"
    with stack.peer_channel("dice") as channel:
        dice = dice_pb2_grpc.DiceStub(channel)
        with pytest.raises(grpc.RpcError) as uncommitted:
            dice.Roll(dice_pb2.RollRequest(match_id=match_id, count=1, sides=6, request_id="r0"))
        assert uncommitted.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        committed = dice.Commit(dice_pb2.CommitRequest(match_id=match_id))
        first = dice.Roll(
            dice_pb2.RollRequest(match_id=match_id, count=3, sides=6, request_id="r1")
        )
        retried = dice.Roll(
            dice_pb2.RollRequest(match_id=match_id, count=3, sides=6, request_id="r1")
        )
        second = dice.Roll(
            dice_pb2.RollRequest(match_id=match_id, count=2, sides=20, request_id="r2")
        )
        with pytest.raises(grpc.RpcError) as bad:
            dice.Roll(dice_pb2.RollRequest(match_id=match_id, count=0, sides=6, request_id="r3"))
        assert bad.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        revealed = dice.Reveal(dice_pb2.RevealRequest(match_id=match_id))
        with pytest.raises(grpc.RpcError) as after:
            dice.Roll(dice_pb2.RollRequest(match_id=match_id, count=1, sides=6, request_id="r4"))
        assert after.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert retried == first  # a retried request id gets the first roll, not a new one
    seed = bytes.fromhex(revealed.seed)
    assert commitment(seed) == committed.commitment == revealed.commitment
    rng = DerivedRandom(seed, match_id)
    assert list(first.values) == list(rng.roll(3, 6))
    assert list(second.values) == list(rng.roll(2, 20))


def test_decks_shuffle_and_draw_from_the_committed_seed(stack: Stack) -> None:
    match_id = f"decks-{uuid.uuid4()}"
    cards = [f"c{i}" for i in range(10)]
    with stack.peer_channel("decks") as channel:
        decks = decks_pb2_grpc.DecksStub(channel)
        decks.Commit(dice_pb2.CommitRequest(match_id=match_id))
        decks.Shuffle(
            decks_pb2.ShuffleRequest(match_id=match_id, deck="d", cards=cards, request_id="s")
        )
        top = decks.Draw(
            decks_pb2.DrawRequest(match_id=match_id, deck="d", count=4, request_id="a")
        )
        rest = decks.Draw(
            decks_pb2.DrawRequest(match_id=match_id, deck="d", count=6, request_id="b")
        )
        with pytest.raises(grpc.RpcError) as empty:
            decks.Draw(decks_pb2.DrawRequest(match_id=match_id, deck="d", count=1, request_id="c"))
        assert empty.value.code() == grpc.StatusCode.FAILED_PRECONDITION
        seed = bytes.fromhex(decks.Reveal(dice_pb2.RevealRequest(match_id=match_id)).seed)
    assert top.remaining == 6 and rest.remaining == 0
    assert [*top.cards, *rest.cards] == DerivedRandom(seed, match_id).shuffled(cards)


def test_metrics_endpoints_expose_grpc_and_domain_metrics(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    play_bot_match(client, "crashland", ["metrics"], seed=7)
    bodies = {}
    for service in ("gateway", "board", "projector"):
        with urllib.request.urlopen(
            f"http://{stack.metrics_addr(service)}/metrics", timeout=5
        ) as r:
            bodies[service] = r.read().decode()
    assert (
        'grpc_server_handled_total{grpc_code="OK",grpc_method="SubmitAction"' in bodies["gateway"]
    )
    assert 'tabletop_events_appended_total{game="crashland",stream="board"}' in bodies["board"]
    assert "tabletop_actions_total" in bodies["board"]
    assert 'tabletop_projector_events_folded_total{stream="board"}' in bodies["projector"]


def test_the_cli_leaves_bot_seats_to_the_bots_service(stack: Stack) -> None:
    """``--bots-by-service``: the match's bot seats are reserved at their level and the
    stack's bots service plays them; the terminal watches the match to its end."""
    run = subprocess.run(
        [
            *(sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway")),
            *("play", "drillit", "--bot", "easy", "--bots-by-service", "--json"),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        cwd=ROOT,
    )
    played = json.loads(run.stdout.splitlines()[-1])
    assert played["results"] and played["actions"] == 0  # none of them from here
    board = topic_events(stack)["board"][played["match_id"]]
    (created,) = [unpack(e, platform_events_pb2.MatchCreated) for e in board[:1]]
    assert dict(created.lobby.bot_levels) == {"player1": "easy", "player2": "easy"}  # type: ignore[attr-defined]
    joins = [e for e in board if is_a(e, platform_events_pb2.SeatJoined)]
    by = [unpack(e, platform_events_pb2.SeatJoined).by for e in joins]  # type: ignore[attr-defined]
    assert sorted(by) == ["bots", "bots"]  # the service took both, nobody else any


def test_the_cli_plays_replays_verifies_and_exports(stack: Stack, tmp_path: Path) -> None:
    def tabletop(*args: str) -> str:
        return subprocess.run(
            [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *args],
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
            cwd=ROOT,
        ).stdout

    played = json.loads(tabletop("play", "crashland", "--bot", "medium", "--seed", "5", "--json"))
    assert played["results"] and played["events"] > 0
    match_id = played["match_id"]
    listed = json.loads(tabletop("matches", "--game", "crashland", "--json"))
    lobby = next(m for m in listed if m["match_id"] == match_id)
    # a bot this terminal plays: not a seat reserved for the bots service, its level named
    assert lobby["bots"] == ["player1"] and "bot_levels" not in lobby
    assert lobby["seats"] == {"player1": "player1 (medium bot)"}
    replayed = json.loads(tabletop("replay", match_id, "--verify", "--json").splitlines()[-1])
    assert replayed["equal"] is True and replayed["steps"] == played["events"]
    verified = json.loads(tabletop("verify", match_id, "--json"))
    assert verified["ok"] is True and verified["checked"] > 0
    exported = tmp_path / "match.json"
    tabletop("export", match_id, "-o", str(exported))
    offline = json.loads(tabletop("replay", "--file", str(exported), "--json"))
    assert offline["steps"] == played["events"]
    # A log whose drawn cards were tampered with no longer verifies.
    log = json.loads(exported.read_text())
    drawn = [
        e
        for e in log["events"]
        if e["eventType"] == "tabletop.v1.CardsDrawn" and len(set(e["payload"]["cards"])) > 1
    ]
    payload = drawn[0]["payload"]
    payload["cards"] = list(reversed(payload["cards"]))
    exported.write_text(json.dumps(log))
    tampered = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "verify", "--file", str(exported), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert tampered.returncode == 1
    assert json.loads(tampered.stdout)["ok"] is False
