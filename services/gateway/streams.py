"""Open streams, bounded: every WatchMatch and PlayMatch stream counts against its caller's
identity (its token's subject), its connection and its address, and one past any bound is refused
before it holds anything (RESOURCE_EXHAUSTED, no retry-after: a stream must close first).
A closed stream gives its places back.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

import grpc

from services.common.metrics import GATEWAY_STREAMS_REFUSED
from services.gateway.refusals import Refused


@dataclass(frozen=True)
class StreamBounds:
    per_identity: int
    per_connection: int
    per_address: int


class Streams:
    def __init__(self, bounds: StreamBounds) -> None:
        self._bounds = bounds
        self._open: dict[str, int] = {}

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
