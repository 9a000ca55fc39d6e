"""The board's calls to dice and decks on their ``Calls`` streams (services/board/
chance_calls.py, services/common/call_streams.py): answered as the unary calls are, a
refusal ends that call only, a broken stream is UNAVAILABLE, and every call is counted
under its own method. Real grpc.aio servers on the test's loop; the services' logs are
in memory."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
import pytest
from prometheus_client import REGISTRY

from services.board.chance_calls import StreamedDecks, StreamedDice
from services.common.config import Config
from services.common.server import GrpcService
from services.decks.service import DecksService
from services.dice.service import DiceService
from services.games.randomness import DerivedRandom, match_seed
from tabletop.v1 import decks_pb2, decks_pb2_grpc, dice_pb2, dice_pb2_grpc
from tests.unit.platform.fakes import MemoryEventLog, memory_writer

SECRET = b"k" * 32
MATCH = "m-1"
CARDS = tuple(f"c{i}" for i in range(10))
T = 5.0


@contextlib.asynccontextmanager
async def serving(
    monkeypatch: pytest.MonkeyPatch, dice: DiceService, decks: DecksService
) -> AsyncIterator[grpc.aio.Channel]:
    async with server_and_channel(monkeypatch, dice, decks) as (_, channel):
        yield channel


@contextlib.asynccontextmanager
async def server_and_channel(
    monkeypatch: pytest.MonkeyPatch, dice: DiceService, decks: DecksService
) -> AsyncIterator[tuple[GrpcService, grpc.aio.Channel]]:
    monkeypatch.setenv("TABLETOP_SECRET", "s" * 40)
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    monkeypatch.setenv("TABLETOP_SHUTDOWN_GRACE_SECONDS", "0.2")

    def register(server: grpc.aio.Server) -> list[str]:
        dice_pb2_grpc.add_DiceServicer_to_server(dice, server)
        decks_pb2_grpc.add_DecksServicer_to_server(decks, server)
        return []

    service = GrpcService(Config.from_env("gateway"), register)
    port = await service.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield service, channel
    finally:
        await service.stop()


def services(
    dice_type: type[DiceService] = DiceService,
) -> tuple[DiceService, MemoryEventLog, DecksService, MemoryEventLog]:
    dice_writer, dice_log = memory_writer("dice")
    decks_writer, decks_log = memory_writer("decks")
    return (
        DiceService(dice_writer, SECRET),
        dice_log,
        DecksService(decks_writer, SECRET),
        decks_log,
    )


def commit(defer: bool = True) -> dice_pb2.CommitRequest:
    return dice_pb2.CommitRequest(match_id=MATCH, correlation_id="c", defer_append=defer)


def roll(request_id: str) -> dice_pb2.RollRequest:
    return dice_pb2.RollRequest(
        match_id=MATCH,
        count=2,
        sides=6,
        request_id=request_id,
        correlation_id="c",
        defer_append=True,
    )


SEAL = dice_pb2.SealRequest(match_id=MATCH, correlation_id="c")


async def test_calls_on_the_streams_are_answered_as_the_unary_calls_are(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_service, dice_log, decks_service, decks_log = services()
    async with serving(monkeypatch, dice_service, decks_service) as channel:
        dice = StreamedDice(dice_pb2_grpc.DiceStub(channel))
        decks = StreamedDecks(decks_pb2_grpc.DecksStub(channel))
        await dice.Commit(commit(), timeout=T)
        rolls = [await dice.Roll(roll(f"r{i}"), timeout=T) for i in range(3)]
        await decks.Commit(commit(), timeout=T)
        shuffle = decks_pb2.ShuffleRequest(
            match_id=MATCH,
            deck="d",
            cards=CARDS,
            request_id="s",
            correlation_id="c",
            defer_append=True,
        )
        await decks.Shuffle(shuffle, timeout=T)
        draw = decks_pb2.DrawRequest(
            match_id=MATCH,
            deck="d",
            count=2,
            request_id="d",
            correlation_id="c",
            defer_append=True,
        )
        drawn = await decks.Draw(draw, timeout=T)
        sealed = [await dice.Seal(SEAL, timeout=T), await decks.Seal(SEAL, timeout=T)]
        await dice.close()
        await decks.close()
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert [tuple(r.values) for r in rolls] == [expected.roll(2, 6) for _ in range(3)]
    order = DerivedRandom(match_seed(SECRET, f"decks:{MATCH}"), MATCH).shuffled(CARDS)
    assert tuple(drawn.cards) == tuple(order[:2]) and drawn.remaining == 8
    assert [s.sequence for s in sealed] == [4, 3]
    assert (dice_log.appends, len(dice_log.envelopes)) == (1, 4)
    assert (decks_log.appends, len(decks_log.envelopes)) == (1, 3)


class CountingDice(DiceService):
    """Dice that notes how many calls each message of its stream carried."""

    messages: list[int]

    async def Calls(
        self, calls: AsyncIterator[dice_pb2.DiceCall], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[dice_pb2.DiceAnswer]:
        async def counted() -> AsyncIterator[dice_pb2.DiceCall]:
            async for call in calls:
                self.messages.append(1 + len(call.more))
                yield call

        async for answer in super().Calls(counted(), context):
            yield answer


async def test_calls_made_at_the_same_moment_share_a_message_and_are_each_answered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, _, decks_service, _ = services()
    dice_writer, dice_log = memory_writer("dice")
    dice_service = CountingDice(dice_writer, SECRET)
    dice_service.messages = []
    async with serving(monkeypatch, dice_service, decks_service) as channel:
        dice = StreamedDice(dice_pb2_grpc.DiceStub(channel))
        await dice.Commit(commit(), timeout=T)  # the stream is open; dice said it groups
        rolls = await asyncio.gather(*(dice.Roll(roll(f"r{i}"), timeout=T) for i in range(3)))
        sealed = await dice.Seal(SEAL, timeout=T)
        await dice.close()
    assert dice_service.messages == [1, 3, 1]
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert sorted(tuple(r.values) for r in rolls) == sorted(expected.roll(2, 6) for _ in range(3))
    assert sealed.sequence == 4 and dice_log.appends == 1


async def test_a_refused_call_raises_its_status_and_the_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_service, _, decks_service, _ = services()
    async with serving(monkeypatch, dice_service, decks_service) as channel:
        dice = StreamedDice(dice_pb2_grpc.DiceStub(channel))
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await dice.Roll(roll("r1"), timeout=T)  # before the commitment
        await dice.Commit(commit(defer=False), timeout=T)
        rolled = await dice.Roll(roll("r1"), timeout=T)
        await dice.close()
    assert refused.value.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert "call Commit first" in (refused.value.details() or "")
    assert len(rolled.values) == 2


async def test_a_broken_stream_fails_the_call_as_unavailable(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    dice_service, _, decks_service, _ = services()
    async with server_and_channel(monkeypatch, dice_service, decks_service) as (server, channel):
        dice = StreamedDice(dice_pb2_grpc.DiceStub(channel))
        await dice.Commit(commit(defer=False), timeout=T)
        await server.stop()  # the dice process went away
        with pytest.raises(grpc.aio.AioRpcError) as broken:
            await dice.Roll(roll("r1"), timeout=T)
        await dice.close()
    # what the board answers its client: retry with the same command id
    assert broken.value.code() == grpc.StatusCode.UNAVAILABLE


def handled(method: str, code: str) -> float:
    labels = {
        "grpc_type": "unary",
        "grpc_service": "tabletop.v1.Dice",
        "grpc_method": method,
        "grpc_code": code,
    }
    return REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0


async def test_each_call_on_the_stream_is_counted_under_its_own_method(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    before = handled("Roll", "OK"), handled("Roll", "FailedPrecondition")
    dice_service, _, decks_service, _ = services()
    async with serving(monkeypatch, dice_service, decks_service) as channel:
        dice = StreamedDice(dice_pb2_grpc.DiceStub(channel))
        with pytest.raises(grpc.aio.AioRpcError):
            await dice.Roll(roll("r0"), timeout=T)
        await dice.Commit(commit(), timeout=T)
        await dice.Roll(roll("r1"), timeout=T)
        await dice.Roll(roll("r2"), timeout=T)
        await dice.close()
    after = handled("Roll", "OK"), handled("Roll", "FailedPrecondition")
    assert (after[0] - before[0], after[1] - before[1]) == (2, 1)
