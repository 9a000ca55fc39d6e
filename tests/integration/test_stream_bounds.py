"""Open streams are bounded on the real gateway: per caller identity and per connection a
WatchMatch or PlayMatch stream past the bound is refused (RESOURCE_EXHAUSTED, a reason a
player understands), a closed stream gives its place back, and a watch of a match that
does not exist, or that the token may not see, is refused at once instead of waiting."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from services.cli.client import CREATOR, GatewayClient
from services.cli.stack import Stack
from services.common.config import Config
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc
from tests.integration.helpers import open_match

pytestmark = pytest.mark.integration

#: the shipped bounds (the stack runs with them)
PER_IDENTITY = Config.max_streams_per_identity
PER_CONNECTION = Config.max_streams_per_connection
#: a channel with a connection of its own (channels to one target share one by default)
OWN_CONNECTION = [("grpc.use_local_subchannel_pool", 1)]
#: a watch answers (or is refused) within this; a watch that waited for a match that may
#: come (10 s, for a token of that match only) would end DEADLINE_EXCEEDED instead
WITHIN_S = 5.0


async def _open(
    stub: gateway_pb2_grpc.GatewayStub, match_id: str, metadata: tuple[tuple[str, str], ...]
) -> grpc.aio.UnaryStreamCall:
    """A watch holding its first view (or its refusal raised)."""
    watch = stub.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id=match_id), metadata=metadata, timeout=WITHIN_S
    )
    await watch.read()
    return watch


async def _refused(
    stub: gateway_pb2_grpc.GatewayStub, match_id: str, metadata: tuple[tuple[str, str], ...]
) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        await _open(stub, match_id, metadata)
    return refused.value


def test_one_identity_holds_at_most_its_bound_of_streams(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = open_match(client, "drillit", ["ann", "bob"], {"difficulty": "easy"})
    creator = (("authorization", f"Bearer {client.token(match_id, CREATOR)}"),)
    bound = PER_IDENTITY
    assert 0 < bound < PER_CONNECTION

    async def run() -> None:
        async with grpc.aio.insecure_channel(stack.addr("gateway")) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            watches = [await _open(stub, match_id, creator) for _ in range(bound)]
            refused = await _refused(stub, match_id, creator)
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert f"you have {bound} match streams open" in (refused.details() or "")
            # a caller without a token on the same connection is another identity
            extra = await _open(stub, match_id, ())
            extra.cancel()
            # a closed stream gives its place back
            watches.pop().cancel()
            watches.append(await _open_eventually(stub, match_id, creator))
            for watch in watches:
                watch.cancel()

    asyncio.run(run())


async def _open_eventually(
    stub: gateway_pb2_grpc.GatewayStub, match_id: str, metadata: tuple[tuple[str, str], ...]
) -> grpc.aio.UnaryStreamCall:
    """The gateway frees a cancelled stream's place once it sees the cancellation."""
    deadline = time.monotonic() + 10
    while True:
        try:
            return await _open(stub, match_id, metadata)
        except grpc.aio.AioRpcError as refused:
            if refused.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


def test_one_connection_holds_at_most_its_bound_of_streams(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = open_match(client, "drillit", ["ann", "bob"], {"difficulty": "easy"})
    bound = PER_CONNECTION

    async def run() -> None:
        async with (
            grpc.aio.insecure_channel(stack.addr("gateway"), options=OWN_CONNECTION) as one,
            grpc.aio.insecure_channel(stack.addr("gateway"), options=OWN_CONNECTION) as two,
        ):
            stub = gateway_pb2_grpc.GatewayStub(one)
            watches = list(await asyncio.gather(*(_open(stub, match_id, ()) for _ in range(bound))))
            refused = await _refused(stub, match_id, ())
            assert refused.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "this connection has" in (refused.details() or "")
            # another connection from the same address is not held back
            other = await _open(gateway_pb2_grpc.GatewayStub(two), match_id, ())
            other.cancel()
            for watch in watches:
                watch.cancel()

    asyncio.run(run())


def test_a_watch_of_a_match_that_does_not_exist_or_may_not_be_seen_is_refused_at_once(
    stack: Stack,
) -> None:
    client = GatewayClient(stack.addr("gateway"))
    private = open_match(client, "drillit", ["ann", "bob"], {"difficulty": "easy"}, private=True)
    other = open_match(client, "drillit", ["ann", "bob"], {"difficulty": "easy"})
    other_token = (("authorization", f"Bearer {client.token(other, 'ann')}"),)

    async def run() -> None:
        async with grpc.aio.insecure_channel(stack.addr("gateway")) as channel:
            stub = gateway_pb2_grpc.GatewayStub(channel)
            unknown = await _refused(stub, "m-" + "0" * 32, ())
            unknown_with_token = await _refused(stub, "m-" + "0" * 32, other_token)
            unseen = await _refused(stub, private, ())
            another = await _refused(stub, private, other_token)
        assert unknown.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.UNAUTHENTICATED)
        assert unknown_with_token.code() == grpc.StatusCode.PERMISSION_DENIED
        assert unseen.code() == grpc.StatusCode.UNAUTHENTICATED
        assert another.code() == grpc.StatusCode.PERMISSION_DENIED

    asyncio.run(run())
