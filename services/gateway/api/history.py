"""A match's history: its board events replayed step by step with the view after each
(ReplayMatch, ReplayMatchBatches: services/gateway/replay.py), and, once it is over, its
whole log (ExportMatch) and its randomness checked (VerifyMatch).

A match in play replays as a spectator sees it, without payloads (hidden information);
its log, which holds every hidden card, is exported only once the match is over.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc

from services.adapters.verify import verify_match
from services.common.envelope import is_a
from services.gateway.access import Access, check_bounds
from services.gateway.api.views import all_revealed
from services.gateway.edge import Call
from services.gateway.refusals import Refused, forwarded
from services.gateway.replay import TalkBySteps, batch_bounds, replay_steps, step_batches
from services.gateway.shards import Shards, read_events
from services.gateway.talk import by_step
from services.gateway.viewstore import ViewStore
from tabletop.v1 import (
    envelope_pb2,
    envelope_pb2_grpc,
    gateway_pb2,
    platform_events_pb2,
    talk_pb2,
)

#: the match's talk a reader may read: (match id, its seat or "", finished) → messages
TalkReader = Callable[[str, str, bool], list[talk_pb2.TalkMessage]]

#: VerifyMatch lists at most this many problems
MAX_PROBLEMS = 50
#: an export or verification of a match just over waits this long for its seeds' reveal
#: (the board reveals them after answering the last command)
REVEAL_WAIT_S = 10.0


def _ended(events: list[envelope_pb2.EventEnvelope]) -> bool:
    # from the end: a finished match's MatchEnded is among its last events
    return any(is_a(e, platform_events_pb2.MatchEnded) for e in reversed(events))


class HistoryRpcs:
    def __init__(
        self,
        shards: Shards,
        views: ViewStore,
        access: Access,
        scoring_events: envelope_pb2_grpc.EventSourceStub,
        talk: TalkReader | None = None,
    ) -> None:
        self._shards = shards
        self._views = views
        self._access = access
        self._scoring_events = scoring_events
        self._talk = talk

    async def _replay(
        self, match_id: str, viewer: str, call: Call
    ) -> tuple[list[envelope_pb2.EventEnvelope], str, bool, TalkBySteps]:
        """(board events, viewer, finished, talk by step) of a replay the caller may see; a
        match in play replays as a spectator sees it, without payloads (hidden
        information), with the talk its caller may read."""
        check_bounds(("match_id", match_id))
        await self._views.wait_for(match_id, 1, 0)
        viewer = self._access.viewer(call.caller, match_id, viewer)
        events = await self._shards.board_events(match_id)
        finished = _ended(events)
        talk: TalkBySteps = {}
        if self._talk is not None:
            said = self._talk(match_id, viewer, finished)
            talk = by_step(said, [e.sequence for e in events]) if said else {}
        return events, viewer if finished else "", finished, talk

    async def replay(
        self, request: gateway_pb2.ReplayMatchRequest, call: Call
    ) -> AsyncIterator[Any]:
        events, viewer, finished, talk = await self._replay(request.match_id, request.viewer, call)
        for step in replay_steps(events, viewer, payloads=finished, talk=talk):
            yield step

    async def replay_batches(
        self, request: gateway_pb2.ReplayMatchBatchesRequest, call: Call
    ) -> AsyncIterator[Any]:
        try:
            max_steps, max_bytes = batch_bounds(request)
        except ValueError as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from bad
        events, viewer, finished, talk = await self._replay(request.match_id, request.viewer, call)
        for batch in step_batches(events, viewer, finished, max_steps, max_bytes, talk):
            yield batch

    async def _export(self, match_id: str, call: Call) -> gateway_pb2.MatchLog:
        self._access.viewer(call.caller, match_id, "")
        board = await self._shards.board_events(match_id)
        if not _ended(board):
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                "a match can be exported once it is over (its log holds hidden cards)",
            )
        # Its seeds are revealed just after its last command (a reveal deferred by a service
        # that is down is not waited for beyond this: the log then says what is missing).
        remaining = call.time_remaining()
        wait = REVEAL_WAIT_S if remaining is None else max(0.0, min(REVEAL_WAIT_S, remaining - 1))
        await self._views.wait_until(match_id, lambda u: all_revealed(u.provenance), wait)
        shard = self._shards.of(match_id)
        try:
            others = [
                *await read_events(shard.events["dice"], match_id),
                *await read_events(shard.events["decks"], match_id),
                *await read_events(self._scoring_events, match_id),
            ]
        except grpc.aio.AioRpcError as error:
            raise forwarded(error) from error
        return gateway_pb2.MatchLog(match_id=match_id, game=board[0].game, events=[*board, *others])

    async def export(
        self, request: gateway_pb2.ExportMatchRequest, call: Call
    ) -> gateway_pb2.MatchLog:
        return await self._export(request.match_id, call)

    async def verify(
        self, request: gateway_pb2.VerifyMatchRequest, call: Call
    ) -> gateway_pb2.MatchVerification:
        log = await self._export(request.match_id, call)
        result = verify_match(list(log.events))
        return gateway_pb2.MatchVerification(
            match_id=request.match_id,
            ok=result.ok,
            checked=result.checked,
            problems=result.problems[:MAX_PROBLEMS],
        )
