"""PlayMatch through the real gateway, board and Kafka: one stream carries a seat's actions,
their answers and its views; a refused action is an answer on the stream, never its end,
and appends nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import grpc
import pytest

from services.cli.client import GatewayClient, game_action
from services.cli.stack import Stack
from services.games.crashland.actions import EndTurn
from tabletop.v1 import board_pb2, games_pb2, gateway_pb2, match_pb2
from tests.integration.helpers import PlaySession, open_match, open_play, topic_events

PLAYER = "astronaut"


def _act(ident: int, action: games_pb2.GameAction, **fields: Any) -> gateway_pb2.PlayRequest:
    fields.setdefault("command_id", str(uuid.uuid4()))
    return gateway_pb2.PlayRequest(
        id=ident, action=board_pb2.SubmitActionRequest(player=PLAYER, action=action, **fields)
    )


@pytest.fixture(scope="module")
def client(stack: Stack) -> GatewayClient:
    return GatewayClient(stack.addr("gateway"))


def _board_events(stack: Stack, match_id: str) -> int:
    return len(topic_events(stack)["board"][match_id])


def _play_to_the_end(
    session: PlaySession, legal: board_pb2.GetLegalActionsReply
) -> Iterator[gateway_pb2.PlayUpdate]:
    """Each answer (an ack) to the actions played on ``session`` until the match ends."""
    ident = 0
    while not legal.next.finished:
        ident += 1
        session.send(
            _act(
                ident,
                legal.actions[ident % len(legal.actions)].action,
                expected_version=legal.version,
                return_legal_actions=True,
            )
        )
        answer = session.answer(ident)
        assert answer.WhichOneof("kind") == "ack", answer
        yield answer
        legal = answer.ack.legal_actions


def test_a_whole_match_is_played_on_one_stream(client: GatewayClient, stack: Stack) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    session = open_play(client, match_id, PLAYER)
    try:
        first = session.view_at_least(legal.version)
        assert first.version == legal.version
        acks = 0
        for answer in _play_to_the_end(session, legal):
            acks += 1
            # read your writes: the acknowledged version's view comes on the same stream
            assert session.view_at_least(answer.ack.version).version >= answer.ack.version
        # once the match is over (seeds revealed) the stream ends, as WatchMatch does
        while (update := session.next()) is not None:
            assert not isinstance(update, grpc.RpcError), update
            assert update.HasField("view")
            session.views.append(update.view)
        last = session.views[-1]
        assert last.status == match_pb2.MATCH_STATUS_FINISHED
        # Crashland commits (and reveals) a decks seed only: it rolls no dice.
        assert last.provenance.decks_seed and not last.provenance.dice_commitment
        assert last == client.view(match_id, PLAYER)
        assert acks > 5  # a whole match was played on the stream, not a move or two
    finally:
        session.close()


def test_a_stream_that_asks_gets_each_acks_view_in_the_same_message(
    client: GatewayClient, stack: Stack
) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    session = open_play(client, match_id, PLAYER, views_with_acks=True)
    try:
        assert session.view_at_least(legal.version).version == legal.version
        attached = []
        for answer in _play_to_the_end(session, legal):
            # the board's update reaches the gateway before its ack: the view comes with it
            assert answer.view_with_ack.version >= answer.ack.version
            attached.append(answer.view_with_ack)
        while (update := session.next()) is not None:  # the seeds' reveal, then the end
            assert not isinstance(update, grpc.RpcError), update
            session.views.append(update.view)
        # no view that came with an ack came again on its own
        separate = {(view.version, view.SerializeToString()) for view in session.views}
        assert not separate & {(view.version, view.SerializeToString()) for view in attached}
        assert len(attached) > 5
        assert session.views[-1] == client.view(match_id, PLAYER)
        assert session.views[-1].status == match_pb2.MATCH_STATUS_FINISHED
    finally:
        session.close()


def test_refused_actions_are_answers_and_append_nothing(
    client: GatewayClient, stack: Stack
) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    session = open_play(client, match_id, PLAYER)
    try:
        # Phase 1: the systems check cannot be run before moving.
        session.send(_act(1, game_action("crashland", EndTurn())))
        illegal = session.answer(1).refused
        assert illegal.code == "FAILED_PRECONDITION" and illegal.message
        session.send(_act(2, games_pb2.GameAction()))
        assert session.answer(2).refused.code == "INVALID_ARGUMENT"
        session.send(_act(3, legal.actions[0].action, expected_version=legal.version - 1))
        stale = session.answer(3).refused
        assert stale.code == "ABORTED" and str(legal.version) in stale.message
        session.send(
            gateway_pb2.PlayRequest(
                id=4,
                action=board_pb2.SubmitActionRequest(
                    match_id="another-match", player=PLAYER, action=legal.actions[0].action
                ),
            )
        )
        other = session.answer(4).refused
        assert other.code == "INVALID_ARGUMENT" and "another-match" not in other.message
        session.send(
            gateway_pb2.PlayRequest(id=5, watch=gateway_pb2.WatchMatchRequest(match_id=match_id))
        )
        assert session.answer(5).refused.code == "INVALID_ARGUMENT"
        seat = board_pb2.SubmitActionRequest(
            player="intruder", action=legal.actions[0].action, command_id=str(uuid.uuid4())
        )
        session.send(gateway_pb2.PlayRequest(id=6, action=seat))
        assert session.answer(6).refused.code == "PERMISSION_DENIED"
        assert client.legal(match_id, PLAYER).version == legal.version
        assert _board_events(stack, match_id) == legal.version
        # and the stream still plays
        session.send(_act(7, legal.actions[0].action, expected_version=legal.version))
        assert session.answer(7).ack.version > legal.version
    finally:
        session.close()


def test_a_stream_is_authorised_as_watch_match_is(client: GatewayClient) -> None:
    match_id = open_match(client, "crashland", [PLAYER])
    legal = client.legal(match_id, PLAYER)
    anonymous = open_play(client, match_id, seat=None)  # a public match: anyone may watch
    try:
        assert anonymous.view_at_least(legal.version).version >= legal.version
        anonymous.send(_act(1, legal.actions[0].action))
        assert anonymous.answer(1).refused.code == "UNAUTHENTICATED"
    finally:
        anonymous.close()
    seatless = PlaySession(
        client,
        (),
        gateway_pb2.PlayRequest(
            watch=gateway_pb2.WatchMatchRequest(match_id=match_id, viewer=PLAYER)
        ),
    )
    refusal = seatless.next()
    assert isinstance(refusal, grpc.RpcError)
    assert refusal.code() == grpc.StatusCode.UNAUTHENTICATED
    metadata = client.auth(match_id, PLAYER)
    first_action = PlaySession(client, metadata, _act(1, legal.actions[0].action))
    refusal = first_action.next()
    assert isinstance(refusal, grpc.RpcError)
    assert refusal.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert client.legal(match_id, PLAYER).version == legal.version
