"""When a service the board needs is down, commands fail cleanly and can be retried."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import gateway_pb2
from tests.integration.helpers import topic_events


def retry(call: Callable[[], gateway_pb2.OpenMatchReply]) -> gateway_pb2.OpenMatchReply:
    """What a client does with UNAVAILABLE: try again a little later (bounded)."""
    for _ in range(30):
        try:
            return call()
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            time.sleep(0.5)
    return call()


def test_a_command_fails_unavailable_while_dice_is_down_and_its_retry_succeeds(
    stack: Stack,
) -> None:
    client = GatewayClient(stack.addr("gateway"))
    request = gateway_pb2.OpenMatchRequest(
        game="drillit", players=["a", "b"], command_id=f"create-while-dice-down-{uuid.uuid4()}"
    )
    stack.stop("dice")
    try:
        with pytest.raises(grpc.RpcError) as refused:
            client.stub.CreateMatch(request, timeout=60)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        assert "retry" in (refused.value.details() or "")
    finally:
        stack.start("dice")
        stack.wait_healthy("dice")
    created = retry(lambda: client.stub.CreateMatch(request, timeout=60))
    again = client.stub.CreateMatch(request, timeout=60)  # the same command: the same answer
    assert created.match_id == again.match_id
    assert created.version == again.version
    board = topic_events(stack)["board"][created.match_id]
    assert [e.sequence for e in board] == list(range(1, created.version + 1))
