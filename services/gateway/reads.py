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
import contextlib
from typing import Any

import grpc

from services.common.logging import get_logger
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


class _Read:
    """A read in flight: its events so far, and its outcome once the last reply came."""

    __slots__ = ("done", "events")

    def __init__(self) -> None:
        self.events: Envelopes = []
        self.done: asyncio.Future[Envelopes] = asyncio.get_running_loop().create_future()


class ReadStream:
    def __init__(self, source: envelope_pb2_grpc.EventSourceStub) -> None:
        self._source = source
        self._call: Any = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: dict[int, _Read] = {}
        self._next_id = 0
        self._write = asyncio.Lock()  # one write at a time on a stream
        #: the service answered UNIMPLEMENTED: it predates the stream
        self.unary_only = False

    async def read(self, match_id: str, after: int = 0) -> Envelopes:
        """Every event of ``match_id`` after sequence ``after``; raises Refused."""
        if self.unary_only:
            return await list_events(self._source, match_id, after)
        self._next_id += 1
        ident = self._next_id
        read = self._waiting[ident] = _Read()
        request = envelope_pb2.EventBatchesRequest(
            id=ident, read=envelope_pb2.ListEventsRequest(match_id=match_id, after_sequence=after)
        )
        try:
            try:
                async with self._write:
                    await self._open().write(request)
                return await read.done
            except grpc.aio.AioRpcError as error:  # the stream broke before the write
                self._broken(error)
                raise _Lost from error
            except asyncio.InvalidStateError as ended:  # it ended (OK) before the write
                raise _Lost from ended
        except _Lost:
            return await list_events(self._source, match_id, after)
        finally:
            self._waiting.pop(ident, None)

    def _open(self) -> Any:
        if self._call is None or self._call.done():
            self._call = self._source.StreamEventBatches()
            self._reader = asyncio.create_task(self._read(self._call))
        return self._call

    async def _read(self, call: Any) -> None:
        try:
            async for reply in call:
                read = self._waiting.get(reply.id)
                if read is None or read.done.done():
                    continue  # its caller gave up
                if reply.HasField("refused"):
                    code = grpc.StatusCode.__members__.get(
                        reply.refused.code, grpc.StatusCode.UNKNOWN
                    )
                    read.done.set_exception(Refused(code, reply.refused.message))
                    continue
                read.events.extend(reply.batch.events)
                if reply.last:
                    read.done.set_result(read.events)
        except grpc.aio.AioRpcError as error:
            self._broken(error)
        except asyncio.CancelledError:
            pass
        if self._call is call:
            self._call = None
        for read in list(self._waiting.values()):
            if not read.done.done():
                read.done.set_exception(_Lost())

    def _broken(self, error: grpc.aio.AioRpcError) -> None:
        if error.code() == grpc.StatusCode.UNIMPLEMENTED:
            self.unary_only = True
            log.info("source_without_read_stream")
        elif error.code() != grpc.StatusCode.CANCELLED:
            log.warning("read_stream_broken", code=error.code().name)

    async def close(self) -> None:
        call, self._call = self._call, None
        if call is not None:
            call.cancel()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
