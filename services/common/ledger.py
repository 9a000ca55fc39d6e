"""A service's own event stream: the per-match sequence, the in-memory copy, the Kafka log.

Each service is the single writer of its stream for the matches its shard owns. State
changes only after Kafka acknowledged the append (acks=all), so what a service answers
is always durable. On start it rebuilds from its topic.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Sequence

import grpc
from google.protobuf import any_pb2, message

from services.common.envelope import Cause, make_envelope
from services.common.eventlog import EventLog, read_stream
from services.common.logging import get_logger
from services.common.metrics import EVENTS_APPENDED
from services.common.sharding import shard_of
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc

log = get_logger(__name__)


class StreamWriter:
    """Appends a stream's events per match with gapless sequence numbers."""

    def __init__(
        self,
        stream: str,
        event_log: EventLog,
        bootstrap: str,
        shard: int = 0,
        shards: int = 1,
    ) -> None:
        self.stream = stream
        self._event_log = event_log
        self._bootstrap = bootstrap
        self._shard = shard
        self._shards = shards
        self._events: dict[str, list[envelope_pb2.EventEnvelope]] = defaultdict(list)
        self._locks: dict[str, asyncio.Lock] = defaultdict(asyncio.Lock)

    def owns(self, match_id: str) -> bool:
        return shard_of(match_id, self._shards) == self._shard

    def lock(self, match_id: str) -> asyncio.Lock:
        """Serialises the commands of one match (single writer)."""
        return self._locks[match_id]

    def version(self, match_id: str) -> int:
        return len(self._events.get(match_id, ()))

    def events(self, match_id: str, after: int = 0) -> list[envelope_pb2.EventEnvelope]:
        return self._events.get(match_id, [])[after:]

    def matches(self) -> list[str]:
        return list(self._events)

    async def recover(self, apply: Callable[[envelope_pb2.EventEnvelope], None]) -> int:
        """Rebuild from the topic: every envelope of an owned match, in order."""
        count = 0
        async for envelope in read_stream(self._bootstrap, [self._event_log.topic]):
            if envelope.stream != self.stream or not self.owns(envelope.match_id):
                continue
            held = self._events[envelope.match_id]
            if envelope.sequence != len(held) + 1:
                # A retried producer batch can duplicate; anything else is corruption.
                if envelope.sequence <= len(held):
                    continue
                raise RuntimeError(
                    f"{self.stream}: match {envelope.match_id} jumps from {len(held)} "
                    f"to {envelope.sequence}"
                )
            held.append(envelope)
            apply(envelope)
            count += 1
        log.info("recovered", stream=self.stream, events=count, matches=len(self._events))
        return count

    async def append(
        self,
        match_id: str,
        payloads: Sequence[message.Message | any_pb2.Any],
        cause: Cause,
        game: str = "",
        rules_version: str = "",
    ) -> list[envelope_pb2.EventEnvelope]:
        """Append ``payloads`` for ``match_id``; the caller holds ``lock(match_id)``."""
        start = self.version(match_id)
        envelopes = [
            make_envelope(
                match_id=match_id,
                stream=self.stream,
                sequence=start + i + 1,
                payload=payload,
                cause=cause,
                game=game,
                rules_version=rules_version,
            )
            for i, payload in enumerate(payloads)
        ]
        envelopes[-1].last_in_batch = True
        await self._event_log.append(envelopes)
        self._events[match_id].extend(envelopes)
        EVENTS_APPENDED.labels(self.stream, game or "none").inc(len(envelopes))
        return envelopes


class EventSourceServicer(envelope_pb2_grpc.EventSourceServicer):
    """Serves a stream's events of one match (tabletop.v1.EventSource)."""

    def __init__(self, writer: StreamWriter) -> None:
        self._writer = writer

    async def ListEvents(
        self, request: envelope_pb2.ListEventsRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[envelope_pb2.EventEnvelope]:
        if not request.match_id:
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "match_id is required")
        for envelope in self._writer.events(request.match_id, int(request.after_sequence)):
            yield envelope
