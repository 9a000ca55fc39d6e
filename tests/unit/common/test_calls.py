"""Calls between services on a Calls stream (services/common/calls/), over real gRPC on the
test's loop: an internal server carries each call to its method's own handler, and the
caller's generated stub, given a CallChannel, gets what a call of its own would give: the
reply, the status with its trailing metadata, a server-streaming method's replies;
counted under the method; a refusal ends nothing; a broken stream fails the calls in
flight as UNAVAILABLE. The services behind are the real dice, decks and EventSource
servicers over in-memory logs."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterable
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common import ledger
from services.common.calls.channel import CARRY, CallChannel, StreamBroken
from services.common.config import Config
from services.common.eventlog import LogUnavailable
from services.common.ledger import EventSourceServicer
from services.common.peer_auth import PeerChannel
from services.common.server import GrpcService, peer_channel
from services.decks.service import DecksService
from services.dice.service import DiceService
from services.games.randomness import DerivedRandom, match_seed
from services.gateway.shards import read_events
from tabletop.v1 import (
    calls_pb2,
    decks_pb2,
    decks_pb2_grpc,
    dice_pb2,
    dice_pb2_grpc,
    envelope_pb2,
    envelope_pb2_grpc,
)
from tests.unit.fakes import memory_writer

SECRET = b"k" * 32
MATCH = "m-1"
CARDS = tuple(f"c{i}" for i in range(10))
T = 5.0

Add = Callable[[Any, grpc.aio.Server], None]


def envelopes(match_id: str, count: int, size: int = 0) -> list[envelope_pb2.EventEnvelope]:
    return [
        envelope_pb2.EventEnvelope(match_id=match_id, sequence=i + 1, actor="x" * size)
        for i in range(count)
    ]


class Writer:
    """What EventSourceServicer reads from: matches "m<count>" have <count> events;
    "slow..." answers once released; "down" is unavailable; "bug" fails."""

    def __init__(self) -> None:
        self.slow = asyncio.Event()

    async def read_events(self, match_id: str, after: int = 0) -> list[envelope_pb2.EventEnvelope]:
        if match_id.startswith("slow"):
            await self.slow.wait()
            match_id = match_id[len("slow") :]
        if match_id == "down":
            raise LogUnavailable("the log is unavailable", outcome_unknown=False)
        if match_id == "bug":
            raise KeyError("level_4")
        return envelopes(match_id, int(match_id[1:]), size=100)[after:]


class Counted:
    """A channel to the server that notes how many calls each message written on its
    streams carried, and how many answers each message read."""

    def __init__(self, channel: PeerChannel) -> None:
        self.channel = channel
        self.written: list[int] = []
        self.read: list[int] = []
        self.streams: list[Any] = []

    def stream_stream(self, method: str, **kwargs: Any) -> Callable[..., Any]:
        opened = self.channel.stream_stream(method, **kwargs)

        def open_stream(**options: Any) -> Any:
            stream = _CountedCall(opened(**options), self)
            self.streams.append(stream)
            return stream

        return open_stream


class _CountedCall:
    def __init__(self, call: Any, counts: Counted) -> None:
        self.call = call
        self.counts = counts

    async def write(self, message: calls_pb2.Call) -> None:
        self.counts.written.append(1 + len(message.more))
        await self.call.write(message)

    def done(self) -> bool:
        return bool(self.call.done())

    def cancel(self) -> bool:
        return bool(self.call.cancel())

    async def __aiter__(self) -> AsyncIterator[calls_pb2.Answer]:
        async for message in self.call:
            self.counts.read.append(1 + len(message.more))
            yield message


@contextlib.asynccontextmanager
async def serving(
    monkeypatch: pytest.MonkeyPatch, *servicers: tuple[Add, Any], service: str = "dice"
) -> AsyncIterator[tuple[GrpcService, PeerChannel]]:
    """``service``'s gRPC server (the dev stack's peer token) with ``servicers`` added,
    and a peer's channel to it."""
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", "0.2")
    config = Config.from_env(service)

    def register(server: grpc.aio.Server) -> list[str]:
        for add, servicer in servicers:
            add(servicer, server)
        return []

    server = GrpcService(config, register)
    port = await server.start()
    channel = peer_channel(f"127.0.0.1:{port}", config)
    try:
        yield server, channel
    finally:
        await channel.close()
        await server.stop()


def chance() -> tuple[tuple[Add, DiceService], tuple[Add, DecksService], Any, Any]:
    dice_writer, dice_log = memory_writer("dice")
    decks_writer, decks_log = memory_writer("decks")
    return (
        (dice_pb2_grpc.add_DiceServicer_to_server, DiceService(dice_writer, SECRET)),
        (decks_pb2_grpc.add_DecksServicer_to_server, DecksService(decks_writer, SECRET)),
        dice_log,
        decks_log,
    )


def source(writer: Writer | None = None) -> tuple[Add, EventSourceServicer]:
    servicer = EventSourceServicer(writer or Writer())  # type: ignore[arg-type]
    return envelope_pb2_grpc.add_EventSourceServicer_to_server, servicer


def commit(defer: bool = True) -> dice_pb2.CommitRequest:
    return dice_pb2.CommitRequest(match_id=MATCH, correlation_id="c", defer_append=defer)


def roll(request_id: str, match_id: str = MATCH) -> dice_pb2.RollRequest:
    return dice_pb2.RollRequest(
        match_id=match_id,
        count=2,
        sides=6,
        request_id=request_id,
        correlation_id="c",
        defer_append=True,
    )


SEAL = dice_pb2.SealRequest(match_id=MATCH, correlation_id="c")


def sequences(listed: Iterable[envelope_pb2.EventEnvelope]) -> list[int]:
    return [e.sequence for e in listed]


async def batches(
    stub: envelope_pb2_grpc.EventSourceStub, match_id: str, **options: Any
) -> list[envelope_pb2.EventBatch]:
    request = envelope_pb2.ListEventsRequest(match_id=match_id)
    return [batch async for batch in stub.ListEventBatches(request, **options)]


async def test_calls_are_answered_as_their_own_calls_would_be(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_servicer, decks_servicer, dice_log, decks_log = chance()
    async with serving(monkeypatch, dice_servicer, decks_servicer) as (_, channel):
        calls = CallChannel(channel, "chance")
        dice, decks = dice_pb2_grpc.DiceStub(calls), decks_pb2_grpc.DecksStub(calls)
        await dice.Commit(commit(), timeout=T)
        rolls = [await dice.Roll(roll(f"r{i}"), timeout=T) for i in range(3)]
        await decks.Commit(commit(), timeout=T)
        shuffle = decks_pb2.ShuffleRequest(
            match_id=MATCH, deck="d", cards=CARDS, request_id="s", correlation_id="c"
        )
        await decks.Shuffle(shuffle, timeout=T)
        draw = decks_pb2.DrawRequest(
            match_id=MATCH, deck="d", count=2, request_id="d", correlation_id="c"
        )
        drawn = await decks.Draw(draw, timeout=T)
        sealed = [await dice.Seal(SEAL, timeout=T), await decks.Seal(SEAL, timeout=T)]
        # a retry by request id, as a call of its own: the very reply first given
        own = await dice_pb2_grpc.DiceStub(channel).Roll(roll("r1"), timeout=T)
        await calls.close()
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert [tuple(r.values) for r in rolls] == [expected.roll(2, 6) for _ in range(3)]
    assert own == rolls[1]
    order = DerivedRandom(match_seed(SECRET, f"decks:{MATCH}"), MATCH).shuffled(CARDS)
    assert tuple(drawn.cards) == tuple(order[:2]) and drawn.remaining == 8
    assert [s.sequence for s in sealed] == [4, 3]
    assert (dice_log.appends, len(dice_log.envelopes)) == (1, 4)
    assert (decks_log.appends, len(decks_log.envelopes)) == (3, 3)


async def test_calls_made_at_the_same_moment_share_a_message_and_so_do_their_answers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_servicer, _, _, _ = chance()
    async with serving(monkeypatch, dice_servicer) as (_, channel):
        counted = Counted(channel)
        calls = CallChannel(counted, "dice")
        dice = dice_pb2_grpc.DiceStub(calls)
        await dice.Commit(commit(), timeout=T)
        # three matches' commitments: nothing to wait for, they finish in one step
        committed = await asyncio.gather(
            *(dice.Commit(dice_pb2.CommitRequest(match_id=f"m-{n}"), timeout=T) for n in (2, 3, 4))
        )
        rolls = await asyncio.gather(*(dice.Roll(roll(f"r{i}"), timeout=T) for i in range(3)))
        await dice.Seal(SEAL, timeout=T)
        await calls.close()
    assert counted.written == [1, 3, 3, 1]
    assert 3 in counted.read  # the three commitments came back in one message
    assert len({c.commitment for c in committed}) == 3
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert sorted(tuple(r.values) for r in rolls) == sorted(expected.roll(2, 6) for _ in range(3))
    assert len(counted.streams) == 1


async def test_a_refused_call_raises_its_status_and_the_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_servicer, _, _, _ = chance()
    async with serving(monkeypatch, dice_servicer) as (_, channel):
        calls = CallChannel(channel, "dice")
        dice = dice_pb2_grpc.DiceStub(calls)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await dice.Roll(roll("r1"), timeout=T)  # before the commitment
        with pytest.raises(grpc.aio.AioRpcError) as invalid:
            await dice.Roll(dice_pb2.RollRequest(match_id=MATCH, count=0, sides=6), timeout=T)
        await dice.Commit(commit(defer=False), timeout=T)
        rolled = await dice.Roll(roll("r1"), timeout=T)
        await calls.close()
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "call Commit first" in (refused.value.details() or "")
    assert not isinstance(refused.value, StreamBroken)
    assert invalid.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert len(rolled.values) == 2


async def test_a_server_streaming_call_brings_every_reply_in_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ledger, "LIST_BATCH_BYTES", 1000)  # ~8 of these envelopes a batch
    writer = Writer()
    async with serving(monkeypatch, source(writer)) as (_, channel):
        calls = CallChannel(channel, "board")
        stub = envelope_pb2_grpc.EventSourceStub(calls)
        slow = asyncio.create_task(batches(stub, "slowm3"))
        large, empty = await asyncio.gather(batches(stub, "m30"), batches(stub, "m0"))
        assert not slow.done()  # answered after the reads sent later
        writer.slow.set()
        small = await slow
        await calls.close()
    assert len(large) > 2 and all(b.ByteSize() <= 1000 for b in large)
    assert sequences([e for b in large for e in b.events]) == list(range(1, 31))
    assert empty == []
    assert [sequences(list(b.events)) for b in small] == [[1, 2, 3]]


async def test_a_refused_stream_is_its_status_and_a_fault_names_nothing_internal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(monkeypatch, source()) as (_, channel):
        calls = CallChannel(channel, "board")
        stub = envelope_pb2_grpc.EventSourceStub(calls)
        refusals = {}
        for match_id in ("down", "", "bug"):
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await batches(stub, match_id)
            refusals[match_id] = refused.value
        assert sequences(await read_events(stub, "m2")) == [1, 2]
        await calls.close()
    assert refusals["down"].code() == grpc.StatusCode.UNAVAILABLE
    assert "retry" in (refusals["down"].details() or "")
    assert refusals[""].code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refusals["bug"].code() == grpc.StatusCode.INTERNAL
    assert "KeyError" not in str(refusals["bug"].details())
    assert "level_4" not in str(refusals["bug"].details())


async def test_a_broken_stream_fails_the_calls_in_flight_and_the_next_call_opens_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    writer = Writer()
    async with serving(monkeypatch, source(writer)) as (_, channel):
        counted = Counted(channel)
        calls = CallChannel(counted, "board")
        stub = envelope_pb2_grpc.EventSourceStub(calls)
        waiting = asyncio.create_task(batches(stub, "slowm4"))
        await asyncio.sleep(0.05)  # sent, unanswered
        counted.streams[-1].cancel()  # the stream breaks (as when the service restarts)
        with pytest.raises(StreamBroken) as broken:
            await waiting
        assert broken.value.code() == grpc.StatusCode.UNAVAILABLE
        writer.slow.set()
        assert sequences((await batches(stub, "m1"))[0].events) == [1]
        assert len(counted.streams) == 2
        # a read caught by a broken stream is made once more
        writer.slow.clear()
        again = asyncio.create_task(read_events(stub, "slowm2"))
        await asyncio.sleep(0.05)
        counted.streams[-1].cancel()
        await asyncio.sleep(0.05)
        writer.slow.set()
        assert sequences(await again) == [1, 2]
        assert len(counted.streams) == 3
        await calls.close()


async def test_a_call_to_a_service_gone_away_fails_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_servicer, _, _, _ = chance()
    async with serving(monkeypatch, dice_servicer) as (server, channel):
        calls = CallChannel(channel, "dice")
        dice = dice_pb2_grpc.DiceStub(calls)
        await dice.Commit(commit(defer=False), timeout=T)
        await server.stop()  # the dice process went away
        with pytest.raises(grpc.aio.AioRpcError) as broken:
            await dice.Roll(roll("r1"), timeout=T)
        await calls.close()
    # what the board answers its client: retry with the same command id
    assert broken.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_a_call_unanswered_in_its_timeout_fails_deadline_exceeded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(monkeypatch, source()) as (_, channel):
        calls = CallChannel(channel, "board")
        stub = envelope_pb2_grpc.EventSourceStub(calls)
        with pytest.raises(grpc.aio.AioRpcError) as late:
            await batches(stub, "slowm1", timeout=0.05)
        assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert sequences((await batches(stub, "m1"))[0].events) == [1]  # the stream goes on
        await calls.close()


def handled(kind: str, service: str, method: str, code: str) -> float:
    labels = {
        "grpc_type": kind,
        "grpc_service": service,
        "grpc_method": method,
        "grpc_code": code,
    }
    return REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0


async def test_each_call_on_a_stream_is_counted_under_its_own_method(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counters = (
        ("unary", "tabletop.v1.Dice", "Roll", "OK"),
        ("unary", "tabletop.v1.Dice", "Roll", "FailedPrecondition"),
        ("server_stream", "tabletop.v1.EventSource", "ListEventBatches", "OK"),
        ("server_stream", "tabletop.v1.EventSource", "ListEventBatches", "Unavailable"),
    )
    before = [handled(*c) for c in counters]
    dice_servicer, _, _, _ = chance()
    async with serving(monkeypatch, dice_servicer, source()) as (_, channel):
        calls = CallChannel(channel, "dice")
        dice = dice_pb2_grpc.DiceStub(calls)
        events = envelope_pb2_grpc.EventSourceStub(calls)
        with pytest.raises(grpc.aio.AioRpcError):
            await dice.Roll(roll("r0"), timeout=T)
        await dice.Commit(commit(), timeout=T)
        await dice.Roll(roll("r1"), timeout=T)
        await dice.Roll(roll("r2"), timeout=T)
        await batches(events, "m3")
        with pytest.raises(grpc.aio.AioRpcError):
            await batches(events, "down")
        await calls.close()
    after = [handled(*c) for c in counters]
    assert [a - b for a, b in zip(after, before, strict=True)] == [2, 1, 1, 1]


async def test_only_what_the_server_registered_is_carried_and_no_stream_of_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def chat(requests: Any, context: Any) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request

    def add_chat(servicer: Any, server: grpc.aio.Server) -> None:
        handler = grpc.stream_stream_rpc_method_handler(chat)
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler("test.Echo", {"Chat": handler}),)
        )

    async with serving(monkeypatch, source(), (add_chat, None)) as (_, channel):
        calls = CallChannel(channel, "board")
        for method in ("/tabletop.v1.Dice/Roll", CARRY, "/test.Echo/Chat"):
            call = calls.unary_unary(
                method,
                request_serializer=dice_pb2.RollRequest.SerializeToString,
                response_deserializer=dice_pb2.RollReply.FromString,
            )
            with pytest.raises(grpc.aio.AioRpcError) as missing:
                await call(roll("r1"), timeout=T)
            assert missing.value.code() == grpc.StatusCode.UNIMPLEMENTED, method
        with pytest.raises(ValueError):
            await (
                envelope_pb2_grpc.EventSourceStub(calls)
                .ListEventBatches(
                    envelope_pb2.ListEventsRequest(match_id="m1"), metadata=(("x", "y"),)
                )
                .__anext__()
            )
        await calls.close()


async def status_of_a_bare_stream(port: int) -> grpc.StatusCode:
    """How the server ends a Calls stream opened without the peer token."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as bare:
        stream = bare.stream_stream(
            CARRY,
            request_serializer=calls_pb2.Call.SerializeToString,
            response_deserializer=calls_pb2.Answer.FromString,
        )()
        request = envelope_pb2.ListEventsRequest(match_id="m1").SerializeToString()
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.InvalidStateError):
            await stream.write(calls_pb2.Call(id=1, method="/x/y", request=request))
        code: grpc.StatusCode = await asyncio.wait_for(stream.code(), T)
        return code


async def test_a_stream_without_the_peer_token_is_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async with serving(monkeypatch, source()) as (server, _):
        assert await status_of_a_bare_stream(server.port) == grpc.StatusCode.UNAUTHENTICATED


async def test_the_public_gateway_carries_no_calls(monkeypatch: pytest.MonkeyPatch) -> None:
    async with serving(monkeypatch, source(), service="gateway") as (server, _):
        assert "tabletop.v1.Calls" not in server.service_names
        assert await status_of_a_bare_stream(server.port) == grpc.StatusCode.UNIMPLEMENTED
