"""tabletop.v1.Gateway: the public API. Commands go to the owning board shard; views come
from the projector's views topic; replay folds a match's events afresh."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Sequence
from typing import TypeVar

import grpc

from services.adapters.folding import FoldedMatch
from services.adapters.projection import Projection
from services.common.envelope import is_a
from services.common.metrics import GATEWAY_WATCHERS
from services.common.server import peer_channel
from services.common.sharding import shard_of
from services.games.registry import all_games
from services.gateway.viewstore import ViewStore
from tabletop.v1 import (
    board_pb2,
    board_pb2_grpc,
    envelope_pb2,
    envelope_pb2_grpc,
    gateway_pb2,
    gateway_pb2_grpc,
    match_pb2,
    platform_events_pb2,
    scoring_pb2,
    scoring_pb2_grpc,
)

Reply = TypeVar("Reply")

#: the longest a GetView may wait for a version
MAX_WAIT_MS = 30_000
#: how long WatchMatch waits for the first view of a match it does not know yet
NEW_MATCH_GRACE_S = 10.0


class Shard:
    """The services one board shard talks to."""

    def __init__(self, board: str, dice: str, decks: str) -> None:
        self.channels = [peer_channel(a) for a in (board, dice, decks)]
        self.board = board_pb2_grpc.BoardStub(self.channels[0])
        self.sources = {
            "board": envelope_pb2_grpc.EventSourceStub(self.channels[0]),
            "dice": envelope_pb2_grpc.EventSourceStub(self.channels[1]),
            "decks": envelope_pb2_grpc.EventSourceStub(self.channels[2]),
        }

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


async def _forward(context: grpc.aio.ServicerContext, error: grpc.aio.AioRpcError) -> None:
    """Pass a downstream refusal to the client unchanged (code, message, reason)."""
    metadata = error.trailing_metadata() or ()
    context.set_trailing_metadata(tuple((k, v) for k, v in metadata if k == "tabletop-reason"))
    await context.abort(error.code(), error.details() or "")


async def _relay(context: grpc.aio.ServicerContext, call: Awaitable[Reply]) -> Reply:
    """The downstream service's reply, or its refusal passed on unchanged."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        await _forward(context, error)
        raise AssertionError from error


async def _events(
    source: envelope_pb2_grpc.EventSourceStub, match_id: str
) -> list[envelope_pb2.EventEnvelope]:
    return [e async for e in source.ListEvents(envelope_pb2.ListEventsRequest(match_id=match_id))]


class GatewayService(gateway_pb2_grpc.GatewayServicer):
    def __init__(
        self,
        shards: Sequence[Shard],
        scoring: grpc.aio.Channel,
        views: ViewStore,
    ) -> None:
        self._shards = list(shards)
        self._scoring = scoring_pb2_grpc.ScoringStub(scoring)
        self._scoring_events = envelope_pb2_grpc.EventSourceStub(scoring)
        self._views = views

    def _shard(self, match_id: str) -> Shard:
        return self._shards[shard_of(match_id, len(self._shards))]

    async def CreateMatch(
        self, request: board_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.CreateMatchReply:
        if request.game not in all_games():
            await context.abort(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown game {request.game!r}; choose one of {', '.join(sorted(all_games()))}",
            )
        forwarded = board_pb2.CreateMatchRequest()
        forwarded.CopyFrom(request)
        forwarded.match_id = request.match_id or str(uuid.uuid4())
        forwarded.command_id = request.command_id or f"create:{forwarded.match_id}"
        shard = self._shard(forwarded.match_id)
        return await _relay(context, shard.board.CreateMatch(forwarded))

    async def ListMatches(
        self, request: gateway_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListMatchesReply:
        matches = [
            s
            for s in self._views.summaries()
            if (not request.game or s.game == request.game)
            and (not request.status or s.status == request.status)
        ]
        return gateway_pb2.ListMatchesReply(matches=sorted(matches, key=lambda s: s.match_id))

    async def _view(
        self, match_id: str, viewer: str, context: grpc.aio.ServicerContext
    ) -> match_pb2.MatchView:
        update = self._views.latest(match_id)
        if update is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match (or not projected yet)")
            raise AssertionError
        for view in update.views:
            if view.viewer == viewer:
                return view
        await context.abort(
            grpc.StatusCode.PERMISSION_DENIED,
            f"{viewer!r} does not play in this match; leave the viewer empty to spectate",
        )
        raise AssertionError

    async def GetView(
        self, request: gateway_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.MatchView:
        if request.min_version:
            wait = min(request.wait_ms or MAX_WAIT_MS, MAX_WAIT_MS) / 1000
            if await self._views.wait_for(request.match_id, request.min_version, wait) is None:
                await context.abort(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"the view has not reached version {request.min_version} yet; try again",
                )
        return await self._view(request.match_id, request.viewer, context)

    async def GetLegalActions(
        self, request: board_pb2.GetLegalActionsRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.GetLegalActionsReply:
        return await _relay(context, self._shard(request.match_id).board.GetLegalActions(request))

    async def SubmitAction(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SubmitActionReply:
        return await _relay(context, self._shard(request.match_id).board.SubmitAction(request))

    async def WatchMatch(
        self, request: gateway_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[match_pb2.MatchView]:
        # A match created a moment ago may not be projected yet: give it a little time.
        await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
        await self._view(request.match_id, request.viewer, context)  # NOT_FOUND etc. up front
        GATEWAY_WATCHERS.inc()
        try:
            async for update in self._views.follow(request.match_id):
                view = next(v for v in update.views if v.viewer == request.viewer)
                yield view
                finished = view.status == match_pb2.MATCH_STATUS_FINISHED
                if finished and view.provenance.dice_seed and view.provenance.decks_seed:
                    return
        finally:
            GATEWAY_WATCHERS.dec()

    async def ReplayMatch(
        self, request: gateway_pb2.ReplayMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[gateway_pb2.ReplayStep]:
        events = await self._board_events(request.match_id, context)
        match = FoldedMatch.created(events[0])
        if request.viewer and request.viewer not in match.players:
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, f"{request.viewer!r} does not play in this match"
            )
        finished = any(is_a(e, platform_events_pb2.MatchEnded) for e in events)
        projection = Projection(match)
        for step, envelope in enumerate(events, start=1):
            if step > 1:
                match.fold(envelope)
            shown = envelope_pb2.EventEnvelope()
            shown.CopyFrom(envelope)
            if not finished:
                shown.ClearField("payload")  # hidden information stays hidden while in play
            yield gateway_pb2.ReplayStep(
                step=step,
                event=shown,
                view=projection.view_for(request.viewer),
                description=f"{envelope.actor}: {envelope.event_type.rsplit('.', 1)[-1]}",
            )

    async def _board_events(
        self, match_id: str, context: grpc.aio.ServicerContext
    ) -> list[envelope_pb2.EventEnvelope]:
        try:
            events = await _events(self._shard(match_id).sources["board"], match_id)
        except grpc.aio.AioRpcError as error:
            await _forward(context, error)
            raise AssertionError from error
        if not events:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match")
        return events

    async def ExportMatch(
        self, request: gateway_pb2.ExportMatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MatchLog:
        board = await self._board_events(request.match_id, context)
        if not any(is_a(e, platform_events_pb2.MatchEnded) for e in board):
            await context.abort(
                grpc.StatusCode.FAILED_PRECONDITION,
                "a match can be exported once it is over (its log holds hidden cards)",
            )
        shard = self._shard(request.match_id)
        try:
            others = [
                *await _events(shard.sources["dice"], request.match_id),
                *await _events(shard.sources["decks"], request.match_id),
                *await _events(self._scoring_events, request.match_id),
            ]
        except grpc.aio.AioRpcError as error:
            await _forward(context, error)
            raise AssertionError from error
        return gateway_pb2.MatchLog(
            match_id=request.match_id, game=board[0].game, events=[*board, *others]
        )

    async def GetStandings(
        self, request: scoring_pb2.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> scoring_pb2.GetStandingsReply:
        return await _relay(context, self._scoring.GetStandings(request))
