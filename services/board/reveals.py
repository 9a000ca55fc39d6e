"""The seed-reveal outbox: every finished match's seeds get revealed, eventually.

A match that ends while dice or decks is unreachable cannot publish its seeds then; the
board keeps it here and retries (backing off) until both confirm. Reveal is idempotent
(a seed revealed already is answered again, nothing appended), so retrying is safe. The
outbox survives a board restart because it is derived from the logs: a finished match
(board.events) whose DiceSeedRevealed or DecksSeedRevealed is missing (dice.events,
decks.events) is still pending. With a snapshot the board needs no such scan: the
snapshot holds the pending and in-flight reveals, and every match that ends in the tail
after it is revealed again (an idempotent call).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable

import grpc

from services.board.chance import ChanceFailed
from services.common.envelope import is_a
from services.common.eventlog import read_stream
from services.common.logging import get_logger
from services.common.metrics import REVEALS_FAILED, REVEALS_PENDING
from tabletop.v1 import platform_events_pb2

log = get_logger(__name__)

Reveal = Callable[[str, str], Awaitable[None]]


class RevealOutbox:
    def __init__(self, reveal: Reveal, first_delay: float = 0.5, max_delay: float = 15.0) -> None:
        self._reveal = reveal
        self._first_delay = first_delay
        self._max_delay = max_delay
        #: match id → the correlation id its reveal is recorded under
        self._pending: dict[str, str] = {}
        #: reveals being made right after their match ended (not confirmed yet)
        self._in_flight: dict[str, str] = {}
        self._wake = asyncio.Event()

    async def reveal_now(self, match_id: str, correlation_id: str) -> None:
        """Reveal a match that just ended; pending (retried later) unless it succeeds.
        Raises ChanceFailed after making it pending."""
        self._in_flight[match_id] = correlation_id
        try:
            await self._reveal(match_id, correlation_id)
        except BaseException:
            self.add(match_id, correlation_id)  # a cancelled call may not have reached dice
            raise
        finally:
            del self._in_flight[match_id]

    def unconfirmed(self) -> dict[str, str]:
        """Every reveal not confirmed yet (pending or in flight), for a snapshot."""
        return {**self._in_flight, **self._pending}

    def add(self, match_id: str, correlation_id: str) -> None:
        self._pending[match_id] = correlation_id
        REVEALS_PENDING.set(len(self._pending))
        self._wake.set()

    def pending(self) -> set[str]:
        return set(self._pending)

    async def drain_once(self) -> None:
        """Try every pending reveal once."""
        for match_id, correlation_id in list(self._pending.items()):
            try:
                await self._reveal(match_id, correlation_id)
            except ChanceFailed as failed:
                if failed.code == grpc.StatusCode.UNAVAILABLE:
                    continue  # retried later
                # Retrying cannot help (no commitment for the match, a malformed call).
                REVEALS_FAILED.inc()
                log.error("seed_reveal_abandoned", match_id=match_id, detail=failed.message)
            else:
                log.info("seed_revealed_late", match_id=match_id)
            del self._pending[match_id]
        REVEALS_PENDING.set(len(self._pending))

    async def run(self) -> None:
        """Drain forever: at once when a reveal is added, backing off while any fails."""
        delay = self._first_delay
        while True:
            await self._wake.wait()
            self._wake.clear()
            await self.drain_once()
            if self._pending:
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_delay)
                self._wake.set()
            else:
                delay = self._first_delay


async def unrevealed(bootstrap: str, topics: Iterable[str], finished: set[str]) -> set[str]:
    """The matches of ``finished`` whose dice or decks seed is not revealed in the logs."""
    dice: set[str] = set()
    decks: set[str] = set()
    async for envelope in read_stream(bootstrap, list(topics)):
        if envelope.match_id not in finished:
            continue
        if is_a(envelope, platform_events_pb2.DiceSeedRevealed):
            dice.add(envelope.match_id)
        elif is_a(envelope, platform_events_pb2.DecksSeedRevealed):
            decks.add(envelope.match_id)
    return finished - (dice & decks)
