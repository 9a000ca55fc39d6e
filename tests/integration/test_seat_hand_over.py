"""A seat given up and handed over, through the real gateway, board, projector, bots
service and Kafka: its holder leaves (its tokens stop seeing and acting at once), nobody
takes it until a player of the match hands it over, every player sees both events in the
match's history and the seat's state in its summary, the new holder sees only what the
game lets it (services/games/handover.py), and a seat handed to a bot is played by the
bots service."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.session import Credential
from services.cli.stack import Stack
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.integration.helpers import eventually

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _code(call: Callable[[], object]) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as refused:
        call()
    code: grpc.StatusCode = refused.value.code()
    return code


def _summary(client: GatewayClient, match_id: str) -> match_pb2.MatchSummary:
    found = [m for m in client.my_matches() if m.match_id == match_id]
    assert found, "the match is not among the player's"
    return found[0]


def _history(client: GatewayClient, match_id: str) -> list[str]:
    """The event types of the match's replay, as its players may read it in play."""
    steps = client.stub.ReplayMatch(gateway_pb2.ReplayMatchRequest(match_id=match_id))
    return [step.event.event_type.rsplit(".", 1)[1] for step in steps]


def _act(client: GatewayClient, match_id: str, seat: str) -> None:
    legal = client.legal(match_id, seat)
    client.submit(match_id, seat, legal.actions[0].action, expected_version=legal.version)


def test_imperial_miners_a_left_seat_opened_to_a_new_player_who_sees_no_choice_made_before(
    stack: Stack,
) -> None:
    ana, bo = (GatewayClient(stack.addr("gateway")) for _ in range(2))
    dee, stranger = (GatewayClient(stack.addr("gateway")) for _ in range(2))
    match_id = ana.create("imperial_miners", ["ann", "ben"], {}, seat="ann", name="Ana")
    bo.join(match_id, "ben", "Bo")
    clients = {"ann": ana, "ben": bo}
    # play until ann has chosen this round's card and ben has not (no reveal yet)
    for _ in range(60):
        seen = ana.view(match_id, "ann")
        if seen.game_view.imperial_miners.HasField("my_choice"):
            break
        awaited = list(seen.next.players)
        _act(
            clients["ann" if "ann" in awaited else awaited[0]],
            match_id,
            "ann" if "ann" in awaited else awaited[0],
        )
    else:
        raise AssertionError("ann never chose")
    hand = list(seen.game_view.imperial_miners.hand)

    # a stream the holder keeps open ends when it leaves: it shows nothing of the seat after
    stream = ana.stub.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id=match_id), metadata=ana.auth(match_id, "ann")
    )
    assert next(stream).viewer == "ann"
    left = ana.leave(match_id, "ann")  # by its seat token
    with pytest.raises(grpc.RpcError) as ended:
        for shown in stream:
            assert shown.version < left.version, "a view after the leave reached the old holder"
    assert ended.value.code() == grpc.StatusCode.PERMISSION_DENIED
    assert "given up" in (ended.value.details() or "")
    # the old token sees and acts no more, at once
    assert _code(lambda: ana.view(match_id, "ann", wait_ms=0)) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(lambda: ana.legal(match_id, "ann")) == grpc.StatusCode.PERMISSION_DENIED
    # nobody takes it before it is handed over
    assert _code(lambda: dee.join(match_id, "ann", "Dee")) == grpc.StatusCode.FAILED_PRECONDITION
    # a stranger hands nothing over; a seat a player holds is not handed over
    assert _code(lambda: stranger.hand_over(match_id, "ann")) == grpc.StatusCode.PERMISSION_DENIED
    assert _code(lambda: bo.hand_over(match_id, "ben")) == grpc.StatusCode.FAILED_PRECONDITION
    # the creator left: a seated player opens the seat
    opened = bo.hand_over(match_id, "ann")
    assert opened.version > left.version
    assert _summary(bo, match_id).seat_states == {"ann": "open", "ben": "held"}

    joined = dee.join(match_id, "ann", "Dee")
    assert joined.seat == "ann"
    shown = dee.view(match_id, "ann", min_version=joined.version).game_view.imperial_miners
    assert list(shown.hand) == hand  # the seat's cards: its new holder plays them
    assert not shown.HasField("my_choice")  # chosen by the old holder, face down
    assert next(s for s in shown.seats if s.player == "ann").has_chosen
    # every player sees the hand-over in the history, in order
    history = _history(bo, match_id)
    assert history[-3:] == ["SeatLeft", "SeatHandedOver", "SeatJoined"]
    assert _summary(dee, match_id).seat_states == {"ann": "held", "ben": "held"}
    # the old holder's token still reads nothing of the seat
    assert _code(lambda: ana.view(match_id, "ann", wait_ms=0)) == grpc.StatusCode.PERMISSION_DENIED


def test_dungeon_drop_a_new_holder_sees_the_seats_quest_and_no_other_heroes(
    stack: Stack,
) -> None:
    ana, bo, dee = (GatewayClient(stack.addr("gateway")) for _ in range(3))
    match_id = ana.create("dungeon_drop", ["ann", "ben"], {}, seat="ann")
    bo.join(match_id, "ben", "Bo")
    before = {s.player: s for s in bo.view(match_id, "ben").game_view.dungeon_drop.seats}
    assert before["ben"].HasField("quest") and not before["ann"].HasField("quest")
    bo.leave(match_id, "ben")
    ana.hand_over(match_id, "ben")  # the creator opens it
    joined = dee.join(match_id, "ben", "Dee")
    after = dee.view(match_id, "ben", min_version=joined.version).game_view.dungeon_drop
    seats = {s.player: s for s in after.seats}
    assert seats["ben"].quest == before["ben"].quest  # the seat's goal, scored for it
    assert not seats["ann"].HasField("quest")  # another hero's, hidden as before
    assert _code(lambda: bo.view(match_id, "ben", wait_ms=0)) == grpc.StatusCode.PERMISSION_DENIED


def test_a_seat_handed_to_a_bot_is_played_by_the_bots_service(stack: Stack) -> None:
    ana, bo = GatewayClient(stack.addr("gateway")), GatewayClient(stack.addr("gateway"))
    match_id = ana.create("drillit", ["ana", "bo"], {"difficulty": "easy"}, seat="ana")
    joined = bo.join(match_id, "bo", "Bo")
    bo.tokens.put(bo.address, match_id, "bo", "")  # forget the seat's token:
    bo.leave(match_id, "bo")  # left by its player's session this time
    assert _code(lambda: bo.hand_over(match_id, "bo", "easy")) == grpc.StatusCode.PERMISSION_DENIED
    handed = ana.hand_over(match_id, "bo", "easy")
    assert handed.version > joined.version

    def bot_played() -> bool | None:
        seen = ana.view(match_id, "ana", wait_ms=2000)
        if "ana" in seen.next.players:
            # the bot may move between the view and the act: looked at again next round
            with contextlib.suppress(grpc.RpcError, IndexError):
                _act(ana, match_id, "ana")
        steps = list(ana.stub.ReplayMatch(gateway_pb2.ReplayMatchRequest(match_id=match_id)))
        after = [s.event for s in steps if s.event.sequence > handed.version]
        bots_join = any(e.event_type.endswith("SeatJoined") for e in after)
        return (bots_join and any(e.actor == "bo" for e in after)) or None

    eventually(bot_played, timeout=90)
    summary = _summary(ana, match_id)
    assert summary.seat_states["bo"] == "bot" and summary.bot_levels["bo"] == "easy"


def test_crashland_a_solo_seat_is_left_but_not_handed_over(stack: Stack) -> None:
    solo = GatewayClient(stack.addr("gateway"))
    match_id = solo.create("crashland", ["solo"], {}, seat="solo")
    solo.leave(match_id, "solo")
    with pytest.raises(grpc.RpcError) as refused:
        solo.hand_over(match_id, "solo", "easy")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "solo match" in (refused.value.details() or "")
    request = board_pb2.GetLegalActionsRequest(match_id=match_id, player="solo")
    assert _code(
        lambda: solo.stub.GetLegalActions(request, metadata=solo.auth(match_id, "solo"))
    ) == (grpc.StatusCode.PERMISSION_DENIED)


def test_the_cli_leaves_a_seat_and_hands_it_over(stack: Stack, tmp_path: Path) -> None:
    """`tabletop leave` by the seat's holder, `tabletop hand-over --bot` by the creator,
    each with --json; a refusal is an error a person reads, exit status 2."""

    def tabletop(who: str, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env={
                **os.environ,
                "TABLETOP_TOKENS": str(tmp_path / f"tokens-{who}.json"),
                "TABLETOP_CREDENTIALS": str(tmp_path / f"credentials-{who}.json"),
            },
        )

    host = GatewayClient(
        stack.addr("gateway"), credential=Credential.load(tmp_path / "credentials-host.json")
    )
    guest = GatewayClient(
        stack.addr("gateway"), credential=Credential.load(tmp_path / "credentials-guest.json")
    )
    match_id = host.create("drillit", ["ana", "bo"], {"difficulty": "easy"}, seat="ana")
    guest.join(match_id, "bo", "Bo")

    refused = tabletop("host", "hand-over", match_id, "bo", "--open")
    assert refused.returncode == 2 and "only its holder can give it up" in refused.stderr

    left = tabletop("guest", "leave", match_id, "bo", "--json")
    assert left.returncode == 0, left.stdout + left.stderr
    assert json.loads(left.stdout)["seat"] == "bo"
    handed = tabletop("host", "hand-over", match_id, "bo", "--bot", "easy", "--json")
    assert handed.returncode == 0, handed.stdout + handed.stderr
    reply = json.loads(handed.stdout)
    assert (reply["to"], reply["level"]) == ("bot", "easy")
    assert reply["version"] > json.loads(left.stdout)["version"]
    listed = tabletop("host", "matches", "--mine", "--json")
    (row,) = (m for m in json.loads(listed.stdout) if m["match_id"] == match_id)
    assert row["seat_states"]["bo"] == "bot"
