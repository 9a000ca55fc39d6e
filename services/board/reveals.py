"""The seed-reveal outbox: every finished match's seeds get revealed, eventually.

Every match that ends is added here and revealed at once by ``run``, after its last
command was answered. One that ends while dice or decks is unreachable cannot publish
its seeds then; it stays and is retried (backing off) until each service it committed
with confirms. Reveal is idempotent (a seed revealed already is answered again, nothing
appended), so retrying is safe. The outbox survives a board restart because it is
derived from the logs: a finished match (board.events) with a seed committed but not
revealed (DiceCommitted without DiceSeedRevealed in dice.events, or the same in
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
from services.common.kafka_access import KafkaAccess
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
        #: pending matches whose reveal failed at least once
        self._retried: set[str] = set()
        self._wake = asyncio.Event()

    def unconfirmed(self) -> dict[str, str]:
        """Every reveal not confirmed yet, for a snapshot (one being made stays pending
        until it is confirmed)."""
        return dict(self._pending)

    def add(self, match_id: str, correlation_id: str) -> None:
        self._pending[match_id] = correlation_id
        self._wake.set()

    def pending(self) -> set[str]:
        return set(self._pending)

    async def drain_once(self) -> bool:
        """Try every pending reveal once, all together; True if one is to be retried."""
        attempts = list(self._pending.items())
        done = await asyncio.gather(*(self._attempt(m, c) for m, c in attempts))
        REVEALS_PENDING.set(len(self._retried))  # not the ones of matches just ended
        return not all(done)

    async def _attempt(self, match_id: str, correlation_id: str) -> bool:
        """One reveal: True when it is over with (made, or abandoned)."""
        try:
            await self._reveal(match_id, correlation_id)
        except ChanceFailed as failed:
            if failed.code == grpc.StatusCode.UNAVAILABLE:
                self._retried.add(match_id)
                return False  # retried later
            # Retrying cannot help (no commitment for the match, a malformed call).
            REVEALS_FAILED.inc()
            log.error("seed_reveal_abandoned", match_id=match_id, detail=failed.message)
        else:
            if match_id in self._retried:
                log.info("seed_revealed_late", match_id=match_id)
        self._retried.discard(match_id)
        if self._pending.get(match_id) == correlation_id:
            del self._pending[match_id]
        return True

    async def run(self) -> None:
        """Drain forever: at once when a reveal is added, backing off while one fails."""
        delay = self._first_delay
        while True:
            await self._wake.wait()
            self._wake.clear()
            if await self.drain_once():
                await asyncio.sleep(delay)
                delay = min(delay * 2, self._max_delay)
                self._wake.set()
            else:
                delay = self._first_delay


#: each chance service with its commitment and its reveal event
_KINDS = (
    ("dice", platform_events_pb2.DiceCommitted, platform_events_pb2.DiceSeedRevealed),
    ("decks", platform_events_pb2.DecksCommitted, platform_events_pb2.DecksSeedRevealed),
)


async def unrevealed(kafka: KafkaAccess, topics: Iterable[str], finished: set[str]) -> set[str]:
    """The matches of ``finished`` with a seed committed in the logs (dice or decks) but
    not revealed there (a game commits only with the services it draws from)."""
    committed: set[tuple[str, str]] = set()
    revealed: set[tuple[str, str]] = set()
    async for envelope in read_stream(kafka, list(topics)):
        if envelope.match_id not in finished:
            continue
        for service, commitment, reveal in _KINDS:
            if is_a(envelope, commitment):
                committed.add((envelope.match_id, service))
            elif is_a(envelope, reveal):
                revealed.add((envelope.match_id, service))
    return {match_id for match_id, _ in committed - revealed}
