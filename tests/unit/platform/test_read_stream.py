"""Reads of a service's events on one StreamEventBatches stream: the service answers each
read by id with ListEventBatches' batches (a refusal as a status in its reply, never ending
the stream); the gateway's ReadStream matches replies to callers, reads again by
ListEventBatches when the stream breaks or the service predates it, and by ListEvents from
a service older still. Real gRPC in-process; the writer behind the service is a stand-in
(its reads from memory and from Kafka have tests of their own)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.common import ledger
from services.common.eventlog import LogUnavailable
from services.common.ledger import EventSourceServicer
from services.common.peer_auth import PeerAuthInterceptor, PeerChannel
from services.gateway.commands import Refused
from services.gateway.reads import ReadStream, list_events
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc

PEER = b"p" * 40


def envelopes(match_id: str, count: int, size: int = 0) -> list[envelope_pb2.EventEnvelope]:
    return [
        envelope_pb2.EventEnvelope(match_id=match_id, sequence=i + 1, actor="x" * size)
        for i in range(count)
    ]


class Writer:
    """What EventSourceServicer reads from: matches "m<count>" have <count> events;
    "slow..." answers after the others; "down" is unavailable; "bug" fails."""

    def __init__(self) -> None:
        self.reads: list[str] = []
        self.slow = asyncio.Event()

    async def read_events(self, match_id: str, after: int = 0) -> list[envelope_pb2.EventEnvelope]:
        self.reads.append(match_id)
        if match_id.startswith("slow"):
            await self.slow.wait()
            match_id = match_id[len("slow") :]
        if match_id == "down":
            raise LogUnavailable("the log is unavailable", outcome_unknown=False)
        if match_id == "bug":
            raise KeyError("level_4")
        return envelopes(match_id, int(match_id[1:]), size=100)[after:]


class Source(EventSourceServicer):
    """The real servicer; counts calls and can break its streams."""

    def __init__(self, writer: Writer) -> None:
        super().__init__(writer)  # type: ignore[arg-type]  # the stand-in has read_events
        self.streams = 0
        self.unary = 0
        self.break_streams = False

    async def ListEventBatches(self, request: Any, context: Any) -> AsyncIterator[Any]:
        self.unary += 1
        async for batch in super().ListEventBatches(request, context):
            yield batch

    async def StreamEventBatches(self, requests: Any, context: Any) -> AsyncIterator[Any]:
        self.streams += 1
        if self.break_streams:
            await context.abort(grpc.StatusCode.UNAVAILABLE, "the service is going away")
        async for reply in super().StreamEventBatches(requests, context):
            yield reply


class OldSource(envelope_pb2_grpc.EventSourceServicer):
    """A service from before StreamEventBatches and ListEventBatches (the generated base
    answers UNIMPLEMENTED): one message per event."""

    def __init__(self) -> None:
        self.calls = 0

    async def ListEvents(self, request: Any, context: Any) -> AsyncIterator[Any]:
        self.calls += 1
        for envelope in envelopes(request.match_id, int(request.match_id[1:])):
            yield envelope


@contextlib.asynccontextmanager
async def serving(
    servicer: envelope_pb2_grpc.EventSourceServicer,
) -> AsyncIterator[tuple[ReadStream, envelope_pb2_grpc.EventSourceStub]]:
    server = grpc.aio.server(interceptors=[PeerAuthInterceptor(PEER)])
    envelope_pb2_grpc.add_EventSourceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = PeerChannel(grpc.aio.insecure_channel(f"127.0.0.1:{port}"), PEER)
    stub = envelope_pb2_grpc.EventSourceStub(channel)
    reads = ReadStream(stub)
    try:
        yield reads, stub
    finally:
        await reads.close()
        await channel.close()
        await server.stop(0)


def sequences(listed: list[envelope_pb2.EventEnvelope]) -> list[int]:
    return [e.sequence for e in listed]


async def test_reads_on_one_stream_get_their_own_events_whatever_order_they_finish_in() -> None:
    writer = Writer()
    source = Source(writer)
    async with serving(source) as (reads, _):
        slow = asyncio.create_task(reads.read("slowm3"))
        quick = await asyncio.gather(reads.read("m5"), reads.read("m2", after=1))
        assert [sequences(q) for q in quick] == [[1, 2, 3, 4, 5], [2]]
        assert not slow.done()  # answered after the reads sent later
        writer.slow.set()
        assert sequences(await slow) == [1, 2, 3]
        assert {e.match_id for e in await slow} == {"m3"}
    assert (source.streams, source.unary) == (1, 0)


async def test_a_refused_read_is_answered_with_its_status_and_the_stream_goes_on() -> None:
    source = Source(Writer())
    async with serving(source) as (reads, _):
        with pytest.raises(Refused) as down:
            await reads.read("down")
        assert down.value.code == grpc.StatusCode.UNAVAILABLE
        assert "unavailable" in down.value.message and "retry" in down.value.message
        with pytest.raises(Refused) as missing:
            await reads.read("")
        assert missing.value.code == grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(Refused) as failed:
            await reads.read("bug")
        assert failed.value.code == grpc.StatusCode.INTERNAL
        assert "KeyError" not in failed.value.message and "level_4" not in failed.value.message
        assert sequences(await reads.read("m2")) == [1, 2]
    assert (source.streams, source.unary) == (1, 0)


async def test_a_large_read_comes_in_several_batches_the_last_marked(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger, "LIST_BATCH_BYTES", 1000)  # ~8 of these envelopes a batch
    writer = Writer()
    servicer = EventSourceServicer(writer)  # type: ignore[arg-type]

    async def requests() -> AsyncIterator[envelope_pb2.EventBatchesRequest]:
        for ident, match_id in ((4, "m30"), (5, "m0")):
            read = envelope_pb2.ListEventsRequest(match_id=match_id)
            yield envelope_pb2.EventBatchesRequest(id=ident, read=read)

    replies = [r async for r in servicer.StreamEventBatches(requests(), None)]
    large = [r for r in replies if r.id == 4]
    assert len(large) > 2
    assert [r.last for r in large] == [False] * (len(large) - 1) + [True]
    assert all(r.batch.ByteSize() <= 1000 for r in large)
    assert sequences([e for r in large for e in r.batch.events]) == list(range(1, 31))
    [empty] = [r for r in replies if r.id == 5]  # a read with no events still ends
    assert empty.last and not empty.batch.events and not empty.HasField("refused")


async def test_reads_waiting_on_a_broken_stream_are_made_again_by_their_own_calls() -> None:
    writer = Writer()
    source = Source(writer)
    async with serving(source) as (reads, _):
        waiting = asyncio.create_task(reads.read("slowm4"))
        await asyncio.sleep(0.05)  # sent, unanswered
        assert reads._call is not None
        reads._call.cancel()  # the stream breaks (as when the service restarts)
        writer.slow.set()
        assert sequences(await waiting) == [1, 2, 3, 4]
        assert source.unary == 1
        assert sequences(await reads.read("m1")) == [1]  # a new stream for the next read
        assert source.streams == 2
        source.break_streams = True  # new streams are refused at once
        reads._call.cancel()
        await asyncio.sleep(0.05)
        assert sequences(await reads.read("m2")) == [1, 2]
        assert source.streams == 3
        assert source.unary == 2
        assert not reads.unary_only  # a broken stream is not a missing one


async def test_a_service_without_the_stream_is_read_by_a_call_per_read() -> None:
    old = OldSource()  # type: ignore[abstract]  # the generated base answers the rest
    async with serving(old) as (reads, stub):
        assert sequences(await reads.read("m3")) == [1, 2, 3]
        assert reads.unary_only
        assert sequences(await reads.read("m2")) == [1, 2]
        assert sequences(await list_events(stub, "m4")) == [1, 2, 3, 4]
    assert old.calls == 3


async def test_a_call_per_read_passes_the_services_refusal_on() -> None:
    source = Source(Writer())
    async with serving(source) as (_, stub):
        assert sequences(await list_events(stub, "m3", after=2)) == [3]
        with pytest.raises(Refused) as down:
            await list_events(stub, "down")
        assert down.value.code == grpc.StatusCode.UNAVAILABLE
