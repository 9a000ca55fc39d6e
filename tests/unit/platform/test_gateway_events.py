"""The gateway reads a match's events in batches, and one by one from a peer too old for
batches (a rolling upgrade)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.gateway.service import _events
from tabletop.v1 import envelope_pb2


def envelopes(count: int) -> list[envelope_pb2.EventEnvelope]:
    return [envelope_pb2.EventEnvelope(match_id="m", sequence=i + 1) for i in range(count)]


class Source:
    def __init__(self, batches: bool) -> None:
        self.batches = batches
        self.calls: list[str] = []

    async def ListEventBatches(self, request: Any) -> AsyncIterator[envelope_pb2.EventBatch]:
        self.calls.append("batches")
        if not self.batches:
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNIMPLEMENTED, grpc.aio.Metadata(), grpc.aio.Metadata()
            )
        events = envelopes(5)
        yield envelope_pb2.EventBatch(events=events[:3])
        yield envelope_pb2.EventBatch(events=events[3:])

    async def ListEvents(self, request: Any) -> AsyncIterator[envelope_pb2.EventEnvelope]:
        self.calls.append("one by one")
        for envelope in envelopes(5):
            yield envelope


@pytest.mark.parametrize("batches", [True, False])
async def test_events_arrive_in_order_either_way(batches: bool) -> None:
    source = Source(batches)
    listed = await _events(source, "m")  # type: ignore[arg-type]
    assert [e.sequence for e in listed] == [1, 2, 3, 4, 5]
    assert source.calls == (["batches"] if batches else ["batches", "one by one"])
