"""A move taken back through the real gateway, board, projector and Kafka: Imperial
Miners' secret card choice, taken back before the other seat chose (nothing revealed), is
gone from the views the projector publishes; the other seat cannot take it back, nor a
choice once both cards are revealed; the replay shows the ActionsUndone step; and the
finished match still verifies. The CLI's ``tabletop undo`` takes a move back too, and a
refusal is an error a person reads."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from services.cli.client import GatewayClient, TokenStore
from services.cli.stack import Stack
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.integration.helpers import open_play

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _table(stack: Stack, tmp_path: Path) -> tuple[GatewayClient, GatewayClient, str]:
    """An Imperial Miners match: ann's client (Ana's tokens kept in a file, for the CLI),
    ben's, and the match."""
    ana = GatewayClient(stack.addr("gateway"), store=TokenStore(tmp_path / "tokens-ana.json"))
    bo = GatewayClient(stack.addr("gateway"), store=TokenStore(tmp_path / "tokens-bo.json"))
    match_id = ana.create("imperial_miners", ["ann", "ben"], {}, seat="ann", name="Ana")
    bo.join(match_id, "ben", "Bo")
    return ana, bo, match_id


def _act(client: GatewayClient, match_id: str, seat: str) -> None:
    legal = client.legal(match_id, seat)
    client.submit(match_id, seat, legal.actions[0].action, expected_version=legal.version)


def _choose_first(
    clients: dict[str, GatewayClient], match_id: str
) -> tuple[match_pb2.MatchView, match_pb2.MatchView]:
    """Play (first legal moves) until ann has chosen a card and ben has not: ann's view
    before her choice and after it."""
    ana = clients["ann"]
    for _ in range(80):
        before = ana.view(match_id, "ann")
        awaited = list(before.next.players)
        seat = "ann" if "ann" in awaited else awaited[0]
        _act(clients[seat], match_id, seat)
        after = ana.view(match_id, "ann", min_version=before.version + 1)
        chose = seat == "ann" and after.game_view.imperial_miners.HasField("my_choice")
        if chose and "ben" in after.next.players:  # ben's still to make: nothing revealed
            return before, after
    raise AssertionError("ann never chose first")


def test_a_secret_choice_taken_back_leaves_the_views_replays_and_verification_right(
    stack: Stack, tmp_path: Path
) -> None:
    ana, bo, match_id = _table(stack, tmp_path)
    clients = {"ann": ana, "ben": bo}
    before, chosen = _choose_first(clients, match_id)

    assert ana.legal(match_id, "ann").can_undo
    assert not bo.legal(match_id, "ben").can_undo
    with pytest.raises(grpc.RpcError) as refused:
        bo.undo(match_id, "ben")
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    with pytest.raises(grpc.RpcError) as wrong_seat:  # ben's token does not act for ann
        bo.stub.UndoAction(
            gateway_pb2.UndoActionRequest(match_id=match_id, player="ann"),
            metadata=bo.auth(match_id, "ben"),
        )
    assert wrong_seat.value.code() == grpc.StatusCode.PERMISSION_DENIED

    undone = ana.undo(match_id, "ann")
    assert undone.version == chosen.version + 1
    # the projector's view (GetView waits for a published view this new) is as before
    again = ana.view(match_id, "ann", min_version=undone.version)
    assert again.version == undone.version
    assert not again.game_view.imperial_miners.HasField("my_choice")
    assert again.game_view == before.game_view
    assert set(again.next.players) == {"ann", "ben"}
    assert not ana.legal(match_id, "ann").can_undo  # nothing more of this turn to take back

    # once both have chosen, the cards are revealed: no taking back
    _act(ana, match_id, "ann")
    _act(bo, match_id, "ben")
    with pytest.raises(grpc.RpcError) as revealed:
        bo.undo(match_id, "ben")
    assert revealed.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "revealed" in (revealed.value.details() or "")

    steps = list(ana.stub.ReplayMatch(gateway_pb2.ReplayMatchRequest(match_id=match_id)))
    kinds = [step.event.event_type.rsplit(".", 1)[1] for step in steps]
    assert "ActionsUndone" in kinds
    # the replay's view after the undo is the view before the choice taken back
    at_undo = next(s for s in steps if s.event.event_type.endswith("ActionsUndone"))
    at_before = next(s for s in steps if s.event.sequence == before.version)
    assert at_undo.view.game_view == at_before.view.game_view

    # played to the end, the match verifies
    for _ in range(2000):
        seen = ana.view(match_id, "ann")
        if seen.status == match_pb2.MATCH_STATUS_FINISHED:
            break
        seat = seen.next.players[0]
        _act(clients[seat], match_id, seat)
    else:
        raise AssertionError("the match did not end")
    verified = ana.stub.VerifyMatch(gateway_pb2.VerifyMatchRequest(match_id=match_id))
    assert verified.ok, list(verified.problems)


def test_the_cli_takes_a_move_back_and_says_why_not(stack: Stack, tmp_path: Path) -> None:
    ana, bo, match_id = _table(stack, tmp_path)
    _, chosen = _choose_first({"ann": ana, "ben": bo}, match_id)

    def tabletop(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"), *args],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
            env={**os.environ, "TABLETOP_TOKENS": str(tmp_path / "tokens-ana.json")},
        )

    took = tabletop("undo", match_id, "ann", "--json")
    assert took.returncode == 0, took.stderr
    assert json.loads(took.stdout) == {
        "match_id": match_id,
        "seat": "ann",
        "version": chosen.version + 1,
    }
    again = tabletop("undo", match_id, "ann")  # the move before was not this turn's
    assert again.returncode == 2
    assert "error:" in again.stdout + again.stderr
    assert "Traceback" not in again.stderr


def test_a_play_stream_takes_a_move_back_and_answers_a_refusal_on_the_stream(
    stack: Stack, tmp_path: Path
) -> None:
    ana, _, match_id = _table(stack, tmp_path)
    play = open_play(ana, match_id, "ann")
    try:
        legal = ana.legal(match_id, "ann")  # the opening keep: ben keeps his apart
        play.send(
            gateway_pb2.PlayRequest(
                id=1,
                action=board_pb2.SubmitActionRequest(
                    player="ann", action=legal.actions[0].action, command_id="keep-1"
                ),
            )
        )
        acked = play.answer(1).ack
        play.send(gateway_pb2.PlayRequest(id=2, undo=gateway_pb2.UndoActionRequest()))
        undone = play.answer(2)
        assert undone.WhichOneof("kind") == "undone", undone
        assert undone.undone.version == acked.version + 1
        shown = play.view_at_least(undone.undone.version)
        assert "ann" in shown.next.players  # her choice to make again
        play.send(gateway_pb2.PlayRequest(id=3, undo=gateway_pb2.UndoActionRequest()))
        again = play.answer(3)
        assert again.refused.code == "FAILED_PRECONDITION"
        assert again.refused.reason == "NOTHING_TO_UNDO"
    finally:
        play.close()
