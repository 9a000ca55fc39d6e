"""Finished matches leave the services' memory, yet every service answers for them as
before, also after a restart: ListEvents reads a finished match back from Kafka, and the
board reloads it for a retried command or GetLegalActions."""

from __future__ import annotations

import uuid

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import board_pb2, board_pb2_grpc, envelope_pb2, envelope_pb2_grpc
from tests.integration.helpers import open_match, play_bot_match, topic_events


def listed(stack: Stack, service: str, match_id: str) -> list[str]:
    source = envelope_pb2_grpc.EventSourceStub(stack.peer_channel(service))
    request = envelope_pb2.ListEventsRequest(match_id=match_id)
    return [e.event_id for e in source.ListEvents(request, timeout=30)]


def legal(stack: Stack, match_id: str, player: str) -> board_pb2.GetLegalActionsReply:
    board = board_pb2_grpc.BoardStub(stack.peer_channel("board"))
    request = board_pb2.GetLegalActionsRequest(match_id=match_id, player=player)
    reply: board_pb2.GetLegalActionsReply = board.GetLegalActions(request, timeout=30)
    return reply


def test_finished_matches_are_answered_from_the_log_also_after_a_restart(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    # Drillit: a game that rolls and draws, so dice and decks both hold the finished match
    finished, _ = play_bot_match(
        client, "drillit", ["ann", "bob"], seed=int(uuid.uuid4().int % 1000)
    )
    active = open_match(client, "drillit", ["a", "b"])
    logged = topic_events(stack)
    streams = {s: [e.event_id for e in logged[s][finished]] for s in ("board", "dice", "decks")}
    assert all(streams.values())
    before = {s: listed(stack, s, finished) for s in streams}
    assert before == streams
    active_legal = legal(stack, active, "a")
    finished_legal = legal(stack, finished, "ann")
    assert finished_legal.next.finished and not finished_legal.actions

    for service in ("dice", "decks", "board"):
        stack.stop(service)
    for service in ("dice", "decks", "board"):
        stack.start(service)
        stack.wait_healthy(service)

    assert {s: listed(stack, s, finished) for s in streams} == streams
    assert legal(stack, active, "a") == active_legal
    assert legal(stack, finished, "ann") == finished_legal
    assert listed(stack, "board", active) == [e.event_id for e in logged["board"][active]]
