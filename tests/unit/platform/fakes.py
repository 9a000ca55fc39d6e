"""In-memory stand-ins for Kafka and gRPC, so services run in unit tests.

``memory_writer`` is a real StreamWriter over a list instead of a Kafka topic;
``FakeContext`` records what a servicer aborts with; the stubs call servicers directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

import grpc
from aiokafka.errors import KafkaError

from services.common.eventlog import EventLog
from services.common.ledger import StreamWriter
from services.decks.service import DecksService
from services.dice.service import DiceService
from tabletop.v1 import decks_pb2, dice_pb2, envelope_pb2


class MemoryEventLog:
    """What EventLog.append does, into a list; ``down`` fails appends as Kafka would."""

    def __init__(self) -> None:
        self.topic = "memory"
        self.envelopes: list[envelope_pb2.EventEnvelope] = []
        self.down = False

    async def append(self, envelopes: Sequence[envelope_pb2.EventEnvelope]) -> None:
        if self.down:
            raise KafkaError("the broker is unreachable")
        self.envelopes.extend(envelopes)


def memory_writer(
    stream: str, shard: int = 0, shards: int = 1
) -> tuple[StreamWriter, MemoryEventLog]:
    events = MemoryEventLog()
    return StreamWriter(stream, cast(EventLog, events), "", shard, shards), events


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
        self.metadata = metadata

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


def context(token: str = "") -> grpc.aio.ServicerContext:
    """A call's context, carrying ``authorization: Bearer token`` when a token is given."""
    metadata = (("authorization", f"Bearer {token}"),) if token else ()
    return cast(grpc.aio.ServicerContext, FakeContext(metadata))


def unavailable() -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(
        grpc.StatusCode.UNAVAILABLE, grpc.aio.Metadata(), grpc.aio.Metadata(), "down"
    )


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

    async def Commit(self, request: dice_pb2.CommitRequest) -> dice_pb2.CommitReply:
        self._check("Commit")
        return await self.servicer.Commit(request, context())

    async def Roll(self, request: dice_pb2.RollRequest) -> dice_pb2.RollReply:
        self._check("Roll")
        return await self.servicer.Roll(request, context())

    async def Reveal(self, request: dice_pb2.RevealRequest) -> dice_pb2.RevealReply:
        self._check("Reveal")
        return await self.servicer.Reveal(request, context())


class DirectDecks(_Direct):
    def __init__(self, servicer: DecksService) -> None:
        super().__init__()
        self.servicer = servicer

    async def Commit(self, request: dice_pb2.CommitRequest) -> dice_pb2.CommitReply:
        self._check("Commit")
        return await self.servicer.Commit(request, context())

    async def Shuffle(self, request: decks_pb2.ShuffleRequest) -> decks_pb2.ShuffleReply:
        self._check("Shuffle")
        return await self.servicer.Shuffle(request, context())

    async def Draw(self, request: decks_pb2.DrawRequest) -> decks_pb2.DrawReply:
        self._check("Draw")
        return await self.servicer.Draw(request, context())

    async def Reveal(self, request: dice_pb2.RevealRequest) -> dice_pb2.RevealReply:
        self._check("Reveal")
        return await self.servicer.Reveal(request, context())
