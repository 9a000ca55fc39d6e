"""The gateway's read side: the newest ViewUpdate of every match, from the views topic."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from services.common.eventlog import Tail
from services.common.logging import get_logger
from tabletop.v1 import match_pb2

log = get_logger(__name__)


class ViewStore:
    def __init__(self) -> None:
        self._updates: dict[str, match_pb2.ViewUpdate] = {}
        #: bumped on every accepted update, including same-version ones (revealed seeds)
        self._revisions: dict[str, int] = {}
        self._changed = asyncio.Condition()

    def latest(self, match_id: str) -> match_pb2.ViewUpdate | None:
        return self._updates.get(match_id)

    def summaries(self) -> list[match_pb2.MatchSummary]:
        return [u.summary for u in self._updates.values()]

    async def put(self, update: match_pb2.ViewUpdate) -> None:
        current = self._updates.get(update.summary.match_id)
        if current is not None and current.summary.version > update.summary.version:
            return  # an older view published late (e.g. after a projector rebuild)
        self._updates[update.summary.match_id] = update
        self._revisions[update.summary.match_id] = (
            self._revisions.get(update.summary.match_id, 0) + 1
        )
        async with self._changed:
            self._changed.notify_all()

    async def wait_for(
        self,
        match_id: str,
        min_version: int,
        timeout: float,  # noqa: ASYNC109 - a bounded wait
    ) -> match_pb2.ViewUpdate | None:
        """The newest update once it has folded ``min_version``; None on timeout."""

        def ready() -> bool:
            update = self._updates.get(match_id)
            return update is not None and update.summary.version >= min_version

        if ready():  # no wait at all, even for a timeout of 0
            return self._updates[match_id]
        try:
            async with self._changed:
                await asyncio.wait_for(self._changed.wait_for(ready), timeout)
        except TimeoutError:
            return None
        return self._updates[match_id]

    async def follow(self, match_id: str) -> AsyncIterator[match_pb2.ViewUpdate]:
        """The current update (if any), then every newer one."""
        seen = 0

        def newer() -> bool:
            return self._revisions.get(match_id, 0) > seen

        while True:
            async with self._changed:
                await self._changed.wait_for(newer)
                update = self._updates[match_id]
                seen = self._revisions[match_id]
            yield update

    async def consume(self, tail: Tail) -> None:
        async for _, value in tail.records():
            try:
                await self.put(match_pb2.ViewUpdate.FromString(value))
            except Exception:
                log.exception("bad_view_update")
