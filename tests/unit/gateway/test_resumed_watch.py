"""A watch resumed after a version (a client cut off, e.g. by a gateway restart) skips the
views the client has and goes on from the newest: no repeated view, none missed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc

from services.gateway.api.views import had
from services.gateway.service import GatewayService
from services.gateway.viewstore import ViewStore
from tabletop.v1 import gateway_pb2, match_pb2
from tests.unit.fakes import FakeContext, Served
from tests.unit.gateway.test_scoring_and_gateway import CONFIG, seat_token, update

FINISHED = match_pb2.MATCH_STATUS_FINISHED
ANN = (("authorization", f"Bearer {seat_token('ann')}"),)


def test_a_client_has_the_versions_up_to_its_own() -> None:
    assert had(update(3), 5) and had(update(5), 5)
    assert not had(update(6), 5)
    over = update(5, FINISHED)
    over.provenance.dice_commitment = "c"
    assert had(over, 5)  # its seed still to come: the client has this view
    # the same version with the seed revealed is the watch's last view: sent once more
    over.provenance.dice_seed = "s"
    assert not had(over, 5)


async def test_a_resumed_watch_begins_past_the_version_the_client_has() -> None:
    views = ViewStore()
    await views.put(update(4))
    served = Served(GatewayService([], grpc.aio.insecure_channel("127.0.0.1:9"), views, CONFIG))
    fresh = served.WatchMatch(gateway_pb2.WatchMatchRequest(match_id="m-1"), FakeContext(ANN))
    assert (await anext(fresh)).version == 4  # a new watch: the current view
    await fresh.aclose()

    resumed = served.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id="m-1", after_version=4), FakeContext(ANN)
    )
    pending = asyncio.ensure_future(anext(resumed))
    await asyncio.sleep(0.05)
    assert not pending.done()  # it has version 4: nothing to send until a newer one
    await views.put(update(6))
    assert (await asyncio.wait_for(pending, 1)).version == 6
    await resumed.aclose()

    # resumed after a version this gateway has not reached yet (it restarted and is
    # catching up): nothing older is sent
    late = served.WatchMatch(
        gateway_pb2.WatchMatchRequest(match_id="m-1", after_version=9), FakeContext(ANN)
    )
    pending = asyncio.ensure_future(anext(late))
    await views.put(update(8))
    await asyncio.sleep(0.05)
    assert not pending.done()
    await views.put(update(10))
    assert (await asyncio.wait_for(pending, 1)).version == 10
    await late.aclose()


async def test_a_resumed_play_stream_skips_the_views_the_client_has() -> None:
    views = ViewStore()
    await views.put(update(4))
    served = Served(GatewayService([], grpc.aio.insecure_channel("127.0.0.1:9"), views, CONFIG))
    held = asyncio.Event()

    async def requests() -> AsyncIterator[gateway_pb2.PlayRequest]:
        watch = gateway_pb2.WatchMatchRequest(match_id="m-1", after_version=4)
        yield gateway_pb2.PlayRequest(id=1, watch=watch)
        await held.wait()  # the client keeps its stream open

    out = served.PlayMatch(requests(), FakeContext(ANN))
    pending = asyncio.ensure_future(anext(out))
    await asyncio.sleep(0.05)
    assert not pending.done()  # it has version 4
    await views.put(update(5))
    assert (await asyncio.wait_for(pending, 1)).view.version == 5
    held.set()
    await out.aclose()
