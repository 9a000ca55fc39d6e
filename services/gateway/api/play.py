"""Playing a seat: its legal actions (GetLegalActions), an action (SubmitAction), its last
command taken back (UndoAction), and actions with the seat's views on one stream
(PlayMatch: services/gateway/play_stream.py).

Only a seat token acts, for its seat (``Access.seat``); actions are counted against the
token's quota and admitted while the stack can take them, before the board sees them.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from functools import partial

import grpc

from services.common.metrics import GATEWAY_WATCHERS
from services.gateway.access import Access, check_bounds
from services.gateway.api.views import ViewRpcs, had, over
from services.gateway.auth import Quota
from services.gateway.commands import Commands
from services.gateway.edge import Call
from services.gateway.play_stream import AckWithView, Play
from services.gateway.refusals import Refused, relay, within_quota
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2


class PlayRpcs:
    def __init__(
        self,
        commands: Commands,
        views: ViewStore,
        access: Access,
        actions: Quota,
        shown: ViewRpcs,
    ) -> None:
        self._commands = commands
        self._views = views
        self._access = access
        #: actions per token subject
        self._actions = actions
        self._shown = shown

    async def legal_actions(
        self, request: board_pb2.GetLegalActionsRequest, call: Call
    ) -> board_pb2.GetLegalActionsReply:
        claims = self._access.seat(call.caller, request.match_id, request.player)
        forwarded = board_pb2.GetLegalActionsRequest(
            match_id=request.match_id, player=claims.seat, seat_token=claims.token_id
        )
        board = self._commands.shard(request.match_id).board
        return await relay(board.GetLegalActions(forwarded))

    async def submit(
        self, request: board_pb2.SubmitActionRequest, call: Call
    ) -> board_pb2.SubmitActionReply:
        claims = self._access.seat(call.caller, request.match_id, request.player)
        check_bounds(("command_id", request.command_id))
        within_quota(self._actions, claims.subject)
        forwarded = board_pb2.SubmitActionRequest()
        forwarded.CopyFrom(request)
        forwarded.player = claims.seat
        forwarded.seat_token = claims.token_id
        shard = self._commands.shard(request.match_id)
        return await self._commands.admitted(request.match_id, lambda: shard.submit(forwarded))

    async def undo(
        self, request: gateway_pb2.UndoActionRequest, call: Call
    ) -> gateway_pb2.UndoActionReply:
        """The seat's last command taken back, where the rules allow it (the board decides:
        services/board/undo.py); counted against the token's actions like a move."""
        claims = self._access.seat(call.caller, request.match_id, request.player)
        check_bounds(("command_id", request.command_id))
        within_quota(self._actions, claims.subject)
        forwarded = board_pb2.BoardUndoRequest(
            match_id=request.match_id,
            player=claims.seat,
            seat_token=claims.token_id,
            command_id=request.command_id or f"undo:{uuid.uuid4().hex}",
        )
        board = self._commands.shard(request.match_id).board

        async def undone() -> board_pb2.SubmitActionReply:
            acknowledged: board_pb2.AcknowledgedAction = await board.UndoCommand(forwarded)
            self._commands.show(acknowledged.view_update)  # its watchers see it at once
            return acknowledged.reply

        reply = await self._commands.admitted(request.match_id, undone)
        return gateway_pb2.UndoActionReply(version=reply.version, duplicate=reply.duplicate)

    async def play(
        self, requests: AsyncIterator[gateway_pb2.PlayRequest], call: Call
    ) -> AsyncIterator[gateway_pb2.PlayUpdate]:
        first = await anext(aiter(requests), None)
        if first is None:
            return
        if first.WhichOneof("kind") != "watch":
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT,
                "a PlayMatch stream begins with watch (which match, whose view)",
            )
        with self._shown.stream(call):
            async for answer in self._play(first, requests, call):
                yield answer

    async def _play(
        self,
        first: gateway_pb2.PlayRequest,
        requests: AsyncIterator[gateway_pb2.PlayRequest],
        call: Call,
    ) -> AsyncIterator[gateway_pb2.PlayUpdate]:
        viewer = await self._shown.watched(first.watch, call)
        match_id = first.watch.match_id
        latest = partial(self._views.latest, match_id) if first.views_with_acks else None
        play = Play(
            match_id, partial(self.submit, call=call), latest, partial(self.undo, call=call)
        )
        GATEWAY_WATCHERS.inc()
        try:
            async for item in play.run(requests, self._views.follow(match_id)):
                if isinstance(item, gateway_pb2.PlayUpdate):
                    yield item
                    continue
                update = item.update if isinstance(item, AckWithView) else item
                resumed = first.watch.after_version
                if resumed and update is item and had(update, resumed):
                    continue  # a resumed stream: the client has this view
                self._shown.still_holds(call, viewer)
                shown = self._shown.render(update, viewer)
                if shown is None:  # judged up front: players never change
                    return
                if isinstance(item, AckWithView):
                    item.answer.view_with_ack.CopyFrom(shown)
                    yield item.answer
                else:
                    yield gateway_pb2.PlayUpdate(view=shown)
                if over(shown):
                    play.views_ended()
        finally:
            GATEWAY_WATCHERS.dec()
