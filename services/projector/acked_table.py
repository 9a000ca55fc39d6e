"""A Faust table whose changelog writes the agent can wait for (Faust's ``Table`` setting).

Faust sends a table's changelog writes through the producer's buffer, and before it
commits offsets it flushes that buffer only until no message has left it for 0.1 s
(``ProducerBuffer.flush_atmost``). Under a slow broker the commit went ahead with writes
still buffered; a projector stopped then (a pod deleted, an upgrade) came back with a
match's record behind its committed offset, folded the next event past the missing one and
dead-lettered the match (a cluster CI run: a Drillit match stuck at v93 of 141). So the
agent awaits ``acked()`` at the end of every batch, before Faust acks the batch's offsets:
an offset is committed only once the broker holds what folding it wrote.
"""

from __future__ import annotations

import asyncio
from typing import Any

import faust
from faust.types import FutureMessage


class AckedTable(faust.Table[str, bytes]):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._unacked: list[FutureMessage] = []

    def send_changelog(self, *args: Any, **kwargs: Any) -> FutureMessage:
        """Every changelog write (a key set or deleted) passes here."""
        sent: FutureMessage = super().send_changelog(*args, **kwargs)
        self._unacked.append(sent)
        return sent

    async def acked(self) -> None:
        """Return once the broker has acknowledged every changelog write made so far
        (raises what the producer raised for one it could not write)."""
        unacked, self._unacked = self._unacked, []
        if unacked:
            await asyncio.gather(*unacked)
