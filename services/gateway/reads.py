"""The gateway's reads of a service's events, many on one long-lived StreamEventBatches
stream (one per service, as commands go on one SubmitActions stream per board shard).

A ListEventBatches call per read cost ~0.6 ms of CPU in set-up, the gateway's and the
service's together, against ~0.1 ms for a message pair on an open stream: a replay,
picture or export of a finished match paid it once per stream it reads (an export four
times).

A refused read comes back as a status in its reply (``Refused``); reads change nothing,
so a read on a stream that breaks (the service restarted) or on a service without the
stream (older, mid-upgrade) is made again by ListEventBatches.
"""

from __future__ import annotations

import asyncio
from typing import Any

import grpc

from services.common.logging import get_logger
from services.common.stream_calls import Pending, StreamCalls
from services.gateway.commands import Refused
from tabletop.v1 import envelope_pb2, envelope_pb2_grpc

log = get_logger(__name__)

Envelopes = list[envelope_pb2.EventEnvelope]


async def list_events(
    source: envelope_pb2_grpc.EventSourceStub, match_id: str, after: int = 0
) -> Envelopes:
    """A match's events of one stream by a call of their own; raises Refused."""
    request = envelope_pb2.ListEventsRequest(match_id=match_id, after_sequence=after)
    try:
        try:
            return [e async for batch in source.ListEventBatches(request) for e in batch.events]
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNIMPLEMENTED:
                raise
        # a peer older than ListEventBatches: one message per event
        return [e async for e in source.ListEvents(request)]
    except grpc.aio.AioRpcError as error:
        raise Refused.from_rpc(error) from error


class _Lost(Exception):
    """The stream ended or broke before the read's last reply (the read is made again)."""


class ReadStream(StreamCalls):
    def __init__(self, source: envelope_pb2_grpc.EventSourceStub) -> None:
        super().__init__(source.StreamEventBatches)
        self._source = source
        #: the service answered UNIMPLEMENTED: it predates the stream
        self.unary_only = False

    async def read(self, match_id: str, after: int = 0) -> Envelopes:
        """Every event of ``match_id`` after sequence ``after``; raises Refused."""
        if self.unary_only:
            return await list_events(self._source, match_id, after)
        read = envelope_pb2.ListEventsRequest(match_id=match_id, after_sequence=after)
        try:
            try:
                events: Envelopes = await self.ask(
                    lambda ident: envelope_pb2.EventBatchesRequest(id=ident, read=read)
                )
                return events
            except grpc.aio.AioRpcError as error:  # the stream broke before the write
                raise self.failure(error, stopping=False) from error
            except asyncio.InvalidStateError as ended:  # it ended (OK) before the write
                raise _Lost from ended
        except _Lost:
            return await list_events(self._source, match_id, after)

    def settle(self, reply: Any, pending: Pending) -> None:
        if reply.HasField("refused"):
            code = grpc.StatusCode.__members__.get(reply.refused.code, grpc.StatusCode.UNKNOWN)
            pending.answer.set_exception(Refused(code, reply.refused.message))
            return
        pending.parts.extend(reply.batch.events)
        if reply.last:
            pending.answer.set_result(pending.parts)

    def failure(self, error: grpc.aio.AioRpcError | None, stopping: bool) -> Exception:
        if error is not None:
            if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                self.unary_only = True
                log.info("source_without_read_stream")
            elif error.code() != grpc.StatusCode.CANCELLED:
                log.warning("read_stream_broken", code=error.code().name)
        return _Lost()
