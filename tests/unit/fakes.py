"""In-memory stand-ins for Kafka and gRPC, so services run in unit tests.

``memory_writer`` is a real StreamWriter over a list instead of a Kafka topic;
``FakeContext`` records what a servicer aborts with; the stubs call servicers directly.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar, cast

import grpc

from services.common.eventlog import EventLog, LogRecord, LogUnavailable
from services.common.kafka_access import KafkaAccess
from services.common.ledger import StreamWriter
from services.common.snapshots import KafkaSnapshotStore
from services.decks.service import DecksService
from services.dice.service import DiceService
from services.gateway.auth import Tokens
from tabletop.v1 import decks_pb2, dice_pb2, envelope_pb2

T = TypeVar("T")

#: where an in-memory fake keeps its Kafka: nowhere (connecting fails)
NO_KAFKA = KafkaAccess("", "", "")


class MemoryEventLog:
    """What EventLog does, into a list (one partition, offset = index); ``down`` fails
    appends as an unreachable broker would: nothing written, and the read-back that
    settles an unknown outcome fails too."""

    def __init__(self) -> None:
        self.topic = "memory"
        self.envelopes: list[envelope_pb2.EventEnvelope] = []
        self.down = False
        #: appends are written but answered with a failure (the answer was lost)
        self.lose_answers = False
        #: awaited once an append is written, before it is answered (a race to stage)
        self.while_appending: Callable[[], Awaitable[None]] | None = None
        #: how many reads of an offset range (a closed match's events) were made
        self.ranges_read = 0
        #: how many appends were written (each one record: one transaction on Kafka)
        self.appends = 0

    def partition_of(self, match_id: str) -> int:
        return 0

    def finished(self, match_id: str) -> None:
        pass  # it does not pace (EventLog's commit interval)

    async def append(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> dict[int, int]:
        if self.down:
            raise LogUnavailable("the broker is unreachable", outcome_unknown=True)
        self.envelopes.extend(envelopes)
        self.appends += 1
        if self.while_appending is not None:
            staged, self.while_appending = self.while_appending, None
            await staged()
        if self.lose_answers:
            raise LogUnavailable("the answer was lost", outcome_unknown=True)
        return {0: len(self.envelopes)}

    async def fence(self) -> None:
        if self.down:
            raise LogUnavailable("the broker is unreachable", outcome_unknown=True)

    def distrust(self) -> None:
        pass

    async def read_tail(self, partition: int, start: int) -> list[LogRecord]:
        if self.down:
            raise LogUnavailable("the broker is unreachable", outcome_unknown=True)
        return [LogRecord(0, i, e) for i, e in enumerate(self.envelopes) if i >= start]

    async def records(self, starts: dict[int, int] | None = None) -> AsyncIterator[LogRecord]:
        """Every record from the start, or from ``starts[0]`` (the tail after a snapshot):
        what a restarted writer recovers from."""
        start = (starts or {}).get(0, 0)
        for offset, envelope in enumerate(list(self.envelopes)):
            if offset >= start:
                yield LogRecord(0, offset, envelope)

    async def read_range(
        self, partition: int, start: int, end: int, key: bytes | None = None
    ) -> list[LogRecord]:
        if self.down:
            raise LogUnavailable("the broker is unreachable", outcome_unknown=True)
        self.ranges_read += 1
        end = min(end, len(self.envelopes))
        return [LogRecord(0, i, self.envelopes[i]) for i in range(start, end)]


class MemorySnapshotStore(KafkaSnapshotStore):
    """The snapshot store over a list of (key, value) records instead of a compacted topic
    (compaction only removes what a reader would overwrite anyway)."""

    def __init__(
        self,
        records: list[tuple[bytes, bytes | None]] | None = None,
        shard: int = 0,
        shards: int = 1,
    ) -> None:
        super().__init__(NO_KAFKA, "memory.snapshots", "memory", shard, shards=shards)
        self.records = records if records is not None else []
        #: sends that fail (a broker that went away midway), counted down
        self.failing_after: int | None = None

    async def start(self) -> None:
        pass

    async def _read_latest(self) -> dict[bytes, bytes | None]:
        return dict(self.records)

    async def _send(self, key: bytes, value: bytes | None) -> asyncio.Future[object]:
        if self.failing_after is not None:
            if self.failing_after == 0:
                raise RuntimeError("the broker went away")
            self.failing_after -= 1
        self.records.append((key, value))
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


def memory_writer(
    stream: str, shard: int = 0, shards: int = 1
) -> tuple[StreamWriter, MemoryEventLog]:
    events = MemoryEventLog()
    return StreamWriter(stream, cast(EventLog, events), NO_KAFKA, shard, shards), events


class Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str, reason: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details
        self.reason = reason


class FakeContext:
    """The parts of grpc.aio.ServicerContext the servicers use; abort raises Aborted."""

    def __init__(self, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.trailing: tuple[tuple[str, str], ...] = ()
        self.initial: tuple[tuple[str, str], ...] = ()
        self.metadata = metadata

    async def send_initial_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self.initial = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    def peer(self) -> str:
        return "ipv4:127.0.0.1:5123"

    def time_remaining(self) -> float | None:
        return None

    def set_trailing_metadata(self, metadata: tuple[tuple[str, str], ...]) -> None:
        self.trailing = metadata

    async def abort(self, code: grpc.StatusCode, details: str = "") -> None:
        reason = dict(self.trailing).get("tabletop-reason", "")
        raise Aborted(code, details, reason)


#: a player, as services/gateway/players.py names one
PLAYER = "p-" + "0" * 32


def player_context(key: bytes, player: str = PLAYER) -> Any:
    """A call signed with ``player``'s session (an access token made with ``key``, the
    gateway's token key)."""
    session = Tokens(key, 60).session(player, "family", 0)
    return FakeContext((("authorization", f"Bearer {session.access_token}"),))


def context(token: str = "") -> grpc.aio.ServicerContext:
    """A call's context, carrying ``authorization: Bearer token`` when a token is given."""
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    return cast(grpc.aio.ServicerContext, FakeContext(metadata))


def unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "down"
    )


async def _answer(call: Awaitable[T]) -> T:
    """A servicer's answer as a stub gives it: an abort is an AioRpcError."""
    try:
        return await call
    except Aborted as aborted:
        raise grpc.aio.AioRpcError(
            aborted.code, grpc.aio.Metadata(), grpc.aio.Metadata(), aborted.details
        ) from aborted


class _Direct:
    """A stub calling a servicer in-process; ``down`` makes every call UNAVAILABLE."""

    def __init__(self) -> None:
        self.down = False
        self.calls: list[str] = []

    def _check(self, name: str) -> None:
        self.calls.append(name)
        if self.down:
            raise unavailable()


class DirectDice(_Direct):
    def __init__(self, servicer: DiceService) -> None:
        super().__init__()
        self.servicer = servicer

    async def Commit(self, request: dice_pb2.CommitRequest, **call: object) -> dice_pb2.CommitReply:
        self._check("Commit")
        return await _answer(self.servicer.Commit(request, context()))

    async def Roll(self, request: dice_pb2.RollRequest, **call: object) -> dice_pb2.RollReply:
        self._check("Roll")
        return await _answer(self.servicer.Roll(request, context()))

    async def Seal(self, request: dice_pb2.SealRequest, **call: object) -> dice_pb2.SealReply:
        self._check("Seal")
        return await _answer(self.servicer.Seal(request, context()))

    async def Reveal(self, request: dice_pb2.RevealRequest, **call: object) -> dice_pb2.RevealReply:
        self._check("Reveal")
        return await _answer(self.servicer.Reveal(request, context()))


class DirectDecks(_Direct):
    def __init__(self, servicer: DecksService) -> None:
        super().__init__()
        self.servicer = servicer

    async def Commit(self, request: dice_pb2.CommitRequest, **call: object) -> dice_pb2.CommitReply:
        self._check("Commit")
        return await _answer(self.servicer.Commit(request, context()))

    async def Shuffle(
        self, request: decks_pb2.ShuffleRequest, **call: object
    ) -> decks_pb2.ShuffleReply:
        self._check("Shuffle")
        return await _answer(self.servicer.Shuffle(request, context()))

    async def Draw(self, request: decks_pb2.DrawRequest, **call: object) -> decks_pb2.DrawReply:
        self._check("Draw")
        return await _answer(self.servicer.Draw(request, context()))

    async def Seal(self, request: dice_pb2.SealRequest, **call: object) -> dice_pb2.SealReply:
        self._check("Seal")
        return await _answer(self.servicer.Seal(request, context()))

    async def Reveal(self, request: dice_pb2.RevealRequest, **call: object) -> dice_pb2.RevealReply:
        self._check("Reveal")
        return await _answer(self.servicer.Reveal(request, context()))


class Served:
    """A gateway's RPCs as its edge serves them (the token verified, refusals as aborts):
    ``Served(service).GetView(request, context(token))``."""

    def __init__(self, service: Any) -> None:
        self._handlers = service.edge().handlers

    def __getattr__(self, method: str) -> Any:
        """The method's handler, taking messages: they reach it as bytes, as gRPC hands
        them over (the edge parses them itself)."""
        handler = self._handlers[method]
        if handler.stream_stream is not None:
            bidi = handler.stream_stream

            async def wired(requests: AsyncIterator[Any]) -> AsyncIterator[bytes]:
                async for request in requests:
                    yield request.SerializeToString()

            return lambda requests, context: bidi(wired(requests), context)
        single = handler.unary_unary or handler.unary_stream
        return lambda request, context: single(request.SerializeToString(), context)
