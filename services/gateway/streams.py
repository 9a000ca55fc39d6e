"""Open streams, bounded: every WatchMatch and PlayMatch stream counts against its caller's
identity (its token's subject), its connection and its address, and one past any bound is refused
before it holds anything (RESOURCE_EXHAUSTED, no retry-after: a stream must close first).
A closed stream gives its places back, and the memory of thousands closed is handed back
to the operating system (glibc keeps freed heap otherwise: 4,000 streams opened and
closed left the gateway ~60 MB larger).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from services.common.metrics import GATEWAY_STREAMS_REFUSED
from services.common.snapshots import release_memory
from services.gateway.refusals import Refused


@dataclass(frozen=True)
class StreamBounds:
    per_identity: int
    per_connection: int
    per_address: int


#: streams closed that make a release of memory worth it, and how long after them it
#: comes (a burst of closes ends first; a release takes a few milliseconds)
RELEASE_AFTER_CLOSED = 500
RELEASE_DELAY_S = 2.0


class Streams:
    def __init__(self, bounds: StreamBounds) -> None:
        self._bounds = bounds
        self._open: dict[str, int] = {}
        self._closed = 0
        self._release: asyncio.TimerHandle | None = None

    def count(self, key: str) -> int:
        return self._open.get(key, 0)

    @contextlib.contextmanager
    def opened(self, identity: str | None, connection: str, address: str) -> Iterator[None]:
        """Hold a stream's places while the block runs; Refused past a bound. ``identity``:
        who the caller is (None: a caller without a token, bounded by its connection and
        its address only)."""
        bounds = self._bounds
        counted = [
            (f"connection {connection}", bounds.per_connection, "this connection has"),
            (f"address {address}", bounds.per_address, "your address has"),
        ]
        if identity is not None:
            counted.insert(0, (f"identity {identity}", bounds.per_identity, "you have"))
        keys = [key for key, _, _ in counted]
        for key, bound, who in counted:
            if bound and self._open.get(key, 0) >= bound:
                GATEWAY_STREAMS_REFUSED.inc()
                raise Refused(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"{who} {bound} match streams open, the most allowed; close one first",
                )
        for key in keys:
            self._open[key] = self._open.get(key, 0) + 1
        try:
            yield
        finally:
            for key in keys:
                left = self._open[key] - 1
                if left:
                    self._open[key] = left
                else:
                    del self._open[key]
            self._closed += 1
            if self._closed >= RELEASE_AFTER_CLOSED and self._release is None:
                self._release_soon()

    def _release_soon(self) -> None:
        with contextlib.suppress(RuntimeError):  # no loop running: nothing to hand back
            loop = asyncio.get_running_loop()
            self._release = loop.call_later(RELEASE_DELAY_S, self._released)

    def _released(self) -> None:
        self._closed, self._release = 0, None
        release_memory()
