"""tabletop.v1.Gateway: the public API. Commands go to the owning board shard; views come
from the projector's views topic; replay folds a match's events afresh.

This is the API's table of contents: each RPC is answered by its area (services/gateway/
api/). Every call passes the edge first (services/gateway/edge.py: the token verified
once, refusals turned into statuses), and who may do what is decided in one place
(services/gateway/access.py): a seat token acts and sees for its seat only; a spectator
token, or no token on a public match, sees what a spectator may; a token for another
match is refused. Quotas and input bounds apply before anything is forwarded, so a
refusal never reaches the board and appends nothing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Sequence
from functools import partial
from typing import Any

import grpc

from services.common.calls.channel import CallChannel
from services.common.config import Config
from services.common.metrics import GATEWAY_VIEW_LAG
from services.gateway.access import Access
from services.gateway.admission import Admission
from services.gateway.api.history import HistoryRpcs
from services.gateway.api.lobby import LobbyRpcs
from services.gateway.api.play import PlayRpcs
from services.gateway.api.players import PlayerRpcs
from services.gateway.api.standings import StandingsRpcs
from services.gateway.api.talk import TalkRpcs
from services.gateway.api.views import ViewRpcs
from services.gateway.auth import Quota, Tokens
from services.gateway.bot_seats import BotsCredential
from services.gateway.commands import Commands
from services.gateway.edge import Call, Edge
from services.gateway.inplay import MatchesInPlay
from services.gateway.players import Trades
from services.gateway.refetch import fetch_update
from services.gateway.shards import Shard, Shards
from services.gateway.streams import StreamBounds, Streams
from services.gateway.talk import TalkQuotas, TalkStore
from services.gateway.talklog import TalkLog
from services.gateway.viewstore import ViewStore
from tabletop.v1 import (
    board_pb2,
    envelope_pb2_grpc,
    gateway_pb2,
    match_pb2,
    scoring_pb2,
    scoring_pb2_grpc,
    talk_pb2,
)


class GatewayService:
    def __init__(
        self,
        shards: Sequence[Shard],
        scoring: grpc.aio.Channel,
        views: ViewStore,
        config: Config,
        talk: TalkLog | None = None,
        sessions: Trades | None = None,
    ) -> None:
        """``talk``: table talk's log (None: PostTalk is UNAVAILABLE, nothing is read);
        ``sessions``: where refresh trades are decided (None: this replica, in memory)."""
        routed = Shards(shards)
        views.load_with(partial(fetch_update, routed))
        self._scoring_calls = CallChannel(scoring, "scoring")
        self.tokens = Tokens(config.token_key, config.token_ttl_seconds)
        admission = Admission(config.max_in_flight, config.max_view_lag_ms)
        views.projector_listeners.append(admission.viewed)
        GATEWAY_VIEW_LAG.set_function(admission.view_lag_s)
        in_play = MatchesInPlay(config.max_matches_in_play, config.match_idle_s)
        in_play.follow(views)
        commands = Commands(routed, views, admission)
        access = Access(views)
        self.lobby = LobbyRpcs(
            commands,
            views,
            access,
            self.tokens,
            config.token_key,
            Quota(config.create_rate, config.create_burst),
            in_play,
            config.lobby_ttl_s,
            Quota(
                config.address_create_rate or 5 * config.create_rate,
                config.address_create_burst or 5 * config.create_burst,
            ),
            config.max_open_lobbies_per_player,
            config.max_open_matches_per_player,
            BotsCredential(config.bots_token),
        )
        self.players = PlayerRpcs(
            self.tokens,
            config.token_key,
            Quota(config.signup_rate, config.signup_burst),
            # a session lives 15 minutes: a refresh a minute is far more than a client needs
            Quota(1 / 60, 10),
            sessions,
        )
        streams = Streams(
            StreamBounds(
                config.max_streams_per_identity,
                config.max_streams_per_connection,
                config.max_streams_per_address,
            )
        )
        self.views = ViewRpcs(views, access, routed, streams)
        self.play = PlayRpcs(
            commands, views, access, Quota(config.action_rate, config.action_burst), self.views
        )
        self.talk = TalkRpcs(
            talk, talk.store if talk else TalkStore(), views, access, self.views, TalkQuotas()
        )
        self.history = HistoryRpcs(
            routed,
            views,
            access,
            envelope_pb2_grpc.EventSourceStub(self._scoring_calls),
            self.talk.for_replay,
        )
        self.standings = StandingsRpcs(scoring_pb2_grpc.ScoringStub(scoring))

    def edge(self) -> Edge:
        """The API as gRPC handlers, for the gRPC port and the web port."""
        return Edge(self, self.tokens)

    async def close(self) -> None:
        """Closes what the service opened on its channels (the caller closes them)."""
        await self._scoring_calls.close()

    # -- players (services/gateway/api/players.py) -----------------------------------------
    def Authenticate(
        self, request: gateway_pb2.AuthenticateRequest, call: Call
    ) -> Awaitable[gateway_pb2.Session]:
        return self.players.authenticate(request, call)

    def RefreshSession(
        self, request: gateway_pb2.RefreshSessionRequest, call: Call
    ) -> Awaitable[gateway_pb2.Session]:
        return self.players.refresh(request, call)

    # -- lobby (services/gateway/api/lobby.py) ---------------------------------------------
    def CreateMatch(
        self, request: gateway_pb2.OpenMatchRequest, call: Call
    ) -> Awaitable[gateway_pb2.OpenMatchReply]:
        return self.lobby.create(request, call)

    def JoinMatch(
        self, request: gateway_pb2.JoinMatchRequest, call: Call
    ) -> Awaitable[gateway_pb2.JoinMatchReply]:
        return self.lobby.join(request, call)

    def LeaveSeat(
        self, request: gateway_pb2.LeaveSeatRequest, call: Call
    ) -> Awaitable[gateway_pb2.LeaveSeatReply]:
        return self.lobby.leave(request, call)

    def HandOverSeat(
        self, request: gateway_pb2.HandOverSeatRequest, call: Call
    ) -> Awaitable[gateway_pb2.HandOverSeatReply]:
        return self.lobby.hand_over(request, call)

    def ListMatches(
        self, request: gateway_pb2.ListMatchesRequest, call: Call
    ) -> Awaitable[gateway_pb2.ListMatchesReply]:
        return self.lobby.list_matches(request, call)

    # -- play (services/gateway/api/play.py) -----------------------------------------------
    def GetLegalActions(
        self, request: board_pb2.GetLegalActionsRequest, call: Call
    ) -> Awaitable[board_pb2.GetLegalActionsReply]:
        return self.play.legal_actions(request, call)

    def SubmitAction(
        self, request: board_pb2.SubmitActionRequest, call: Call
    ) -> Awaitable[board_pb2.SubmitActionReply]:
        return self.play.submit(request, call)

    def UndoAction(
        self, request: gateway_pb2.UndoActionRequest, call: Call
    ) -> Awaitable[gateway_pb2.UndoActionReply]:
        return self.play.undo(request, call)

    def PlayMatch(
        self, requests: AsyncIterator[gateway_pb2.PlayRequest], call: Call
    ) -> AsyncIterator[gateway_pb2.PlayUpdate]:
        return self.play.play(requests, call)

    # -- views (services/gateway/api/views.py) ---------------------------------------------
    def GetView(
        self, request: gateway_pb2.GetViewRequest, call: Call
    ) -> Awaitable[match_pb2.MatchView]:
        return self.views.get_view(request, call)

    def WatchMatch(
        self, request: gateway_pb2.WatchMatchRequest, call: Call
    ) -> AsyncIterator[match_pb2.MatchView]:
        return self.views.watch(request, call)

    def GetPicture(
        self, request: gateway_pb2.GetPictureRequest, call: Call
    ) -> Awaitable[gateway_pb2.Picture]:
        return self.views.picture(request, call)

    # -- history (services/gateway/api/history.py) -----------------------------------------
    def ReplayMatch(
        self, request: gateway_pb2.ReplayMatchRequest, call: Call
    ) -> AsyncIterator[Any]:
        return self.history.replay(request, call)

    def ReplayMatchBatches(
        self, request: gateway_pb2.ReplayMatchBatchesRequest, call: Call
    ) -> AsyncIterator[Any]:
        return self.history.replay_batches(request, call)

    def ExportMatch(
        self, request: gateway_pb2.ExportMatchRequest, call: Call
    ) -> Awaitable[gateway_pb2.MatchLog]:
        return self.history.export(request, call)

    def VerifyMatch(
        self, request: gateway_pb2.VerifyMatchRequest, call: Call
    ) -> Awaitable[gateway_pb2.MatchVerification]:
        return self.history.verify(request, call)

    # -- standings (services/gateway/api/standings.py) -------------------------------------
    def GetStandings(
        self, request: scoring_pb2.GetStandingsRequest, call: Call
    ) -> Awaitable[scoring_pb2.GetStandingsReply]:
        return self.standings.standings(request, call)

    # -- table talk (services/gateway/api/talk.py) -----------------------------------------
    def PostTalk(
        self, request: gateway_pb2.PostTalkRequest, call: Call
    ) -> Awaitable[gateway_pb2.PostTalkReply]:
        return self.talk.post(request, call)

    def WatchTalk(
        self, request: gateway_pb2.WatchTalkRequest, call: Call
    ) -> AsyncIterator[talk_pb2.TalkMessage]:
        return self.talk.watch(request, call)
