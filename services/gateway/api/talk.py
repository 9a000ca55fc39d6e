"""Table talk (PostTalk, WatchTalk): who may post to which channel, and who reads what.

A seat token posts to the players' channel as its seat; a spectator token to the
spectators'; a creator token that took no seat, or no token, cannot talk. Reading is
authorised as a watch of the match is (a spectator may read a public match without a
token), and a seat does not read the spectators' channel while the match is in play
(services/gateway/talk.py). Posts are judged in this order: the token, the text, the
quotas, then Kafka; a refusal appends nothing and never touches the game.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

import grpc

from services.gateway.access import Access, check_bounds
from services.gateway.api.views import ViewRpcs
from services.gateway.auth import MAX_NAME, Claims, Role
from services.gateway.edge import Call
from services.gateway.inputs import BadInput, check_name
from services.gateway.refusals import Refused, too_many
from services.gateway.talk import (
    PLAYERS,
    SPECTATORS,
    BadTalk,
    TalkQuotas,
    TalkStore,
    check_text,
    readable,
)
from services.gateway.talklog import TalkBusy, TalkLog, TalkUnavailable
from services.gateway.viewstore import ViewStore
from tabletop.v1 import gateway_pb2, match_pb2, talk_pb2

#: a spectator who gives no name is shown so
SPECTATOR_NAME = "spectator"
#: a post refused because too many wait for Kafka may come back after this long
BUSY_RETRY_MS = 1000


class TalkRpcs:
    def __init__(
        self,
        talk: TalkLog | None,
        store: TalkStore,
        views: ViewStore,
        access: Access,
        shown: ViewRpcs,
        quotas: TalkQuotas,
    ) -> None:
        self._talk = talk
        self._store = store
        self._views = views
        self._access = access
        self._shown = shown
        self._quotas = quotas

    def _author(self, call: Call, match_id: str) -> Claims:
        """The claims of a caller who may talk in this match."""
        claims = call.caller.claims
        if claims is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                "talking needs a seat or spectator token of this match",
            )
        if time.time() >= claims.expires_at:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token has expired; join again")
        if claims.role in (Role.CREATOR, Role.PLAYER):  # not at the table: no seat, no watch
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED, "join a seat or as a spectator to talk"
            )
        if claims.match_id != match_id:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the token is for another match")
        if claims.role == Role.SEAT and self._access.superseded(claims):
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "this seat was joined again elsewhere; join again to talk here",
            )
        return claims

    async def post(
        self, request: gateway_pb2.PostTalkRequest, call: Call
    ) -> gateway_pb2.PostTalkReply:
        match_id = request.match_id
        check_bounds(("match_id", match_id))
        claims = self._author(call, match_id)
        update = self._views.latest(match_id)
        if update is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, "no such match (or not projected yet)")
        try:
            text = check_text(request.text)
            if claims.role == Role.SEAT:
                channel = PLAYERS
                name = update.summary.seats.get(claims.seat) or claims.seat
            else:  # a spectator (a creator cannot talk: _author)
                channel = SPECTATORS
                if len(request.display_name) > MAX_NAME:
                    raise BadTalk(f"display_name is longer than {MAX_NAME} characters")
                check_name("display_name", request.display_name)
                name = request.display_name.strip() or SPECTATOR_NAME
        except (BadTalk, BadInput) as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from bad
        wait = self._quotas.take(f"{match_id}/{claims.subject}/{claims.seat}", match_id)
        if wait > 0:
            raise too_many(wait, "messages")
        if self._talk is None:
            raise Refused(grpc.StatusCode.UNAVAILABLE, "table talk is off on this gateway")
        posted = talk_pb2.TalkPosted(
            channel=channel,
            seat=claims.seat,
            display_name=name,
            text=text,
            board_version=update.summary.version,
        )
        actor = claims.seat or SPECTATOR_NAME
        try:
            message = await self._talk.post(match_id, update.summary.game, posted, actor)
        except TalkBusy as busy:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"table talk is busy; retry after {BUSY_RETRY_MS} ms",
                (("retry-after-ms", str(BUSY_RETRY_MS)),),
            ) from busy
        except TalkUnavailable as failed:
            raise Refused(
                grpc.StatusCode.UNAVAILABLE, "the message was not recorded; try again"
            ) from failed
        return gateway_pb2.PostTalkReply(message=message)

    def finished(self, match_id: str) -> bool:
        update = self._views.latest(match_id)
        return update is not None and update.summary.status == match_pb2.MATCH_STATUS_FINISHED

    async def watch(
        self, request: gateway_pb2.WatchTalkRequest, call: Call
    ) -> AsyncIterator[talk_pb2.TalkMessage]:
        watch = gateway_pb2.WatchMatchRequest(match_id=request.match_id)
        with self._shown.stream(call):
            seat = await self._shown.watched(watch, call)
            async for message in self._store.follow(request.match_id, request.after_sequence):
                if readable(message, seat, self.finished(request.match_id)):
                    yield message

    def for_replay(self, match_id: str, seat: str, finished: bool) -> list[talk_pb2.TalkMessage]:
        """The match's talk a replay shows this reader (``seat``: "" for a spectator)."""
        return [m for m in self._store.since(match_id) if readable(m, seat, finished)]
