"""Players: signing in (Authenticate) and keeping a session (RefreshSession).

A sign-in is rate-limited per address: it is what makes a new player, so every limit per
player is also bounded by how many players one address can make. A refresh is limited
per player.
"""

from __future__ import annotations

import uuid

import grpc

from services.gateway.auth import BadToken, Quota, Tokens
from services.gateway.edge import Call
from services.gateway.players import BadCredential, Sessions, Trades, device_player
from services.gateway.refusals import Refused, within_quota
from services.gateway.sessionlog import SessionsUnavailable
from tabletop.v1 import gateway_pb2


class PlayerRpcs:
    def __init__(
        self,
        tokens: Tokens,
        key: bytes,
        sign_ins: Quota,
        refreshes: Quota,
        sessions: Trades | None = None,
    ) -> None:
        """``sessions``: where refresh trades are decided (the log every replica folds;
        None: this replica alone, in memory)."""
        self._tokens = tokens
        self._key = key
        self._sessions: Trades = sessions or Sessions()
        #: sign-ins per address, refreshes per player
        self._sign_ins = sign_ins
        self._refreshes = refreshes

    async def authenticate(
        self, request: gateway_pb2.AuthenticateRequest, call: Call
    ) -> gateway_pb2.Session:
        kind = request.WhichOneof("credential")
        if kind == "external":
            raise Refused(
                grpc.StatusCode.UNIMPLEMENTED,
                "no external identity provider is configured here; sign in with a device",
            )
        if kind != "device":
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, "give a credential: device.secret")
        try:
            player = device_player(self._key, request.device.secret)
        except BadCredential as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad)) from bad
        within_quota(self._sign_ins, call.caller.host)
        return self._tokens.session(player, uuid.uuid4().hex, 0)

    async def refresh(
        self, request: gateway_pb2.RefreshSessionRequest, call: Call
    ) -> gateway_pb2.Session:
        try:
            refresh = self._tokens.verify_refresh(request.refresh_token)
        except BadToken as bad:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, str(bad)) from bad
        within_quota(self._refreshes, refresh.player)
        try:
            traded = await self._sessions.trade(refresh.family, refresh.generation)
        except SessionsUnavailable as down:
            raise Refused(
                grpc.StatusCode.UNAVAILABLE, "sessions cannot be refreshed just now; try again"
            ) from down
        if not traded:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                "this refresh token was used before, so its session is closed; sign in again",
            )
        return self._tokens.session(
            refresh.player, refresh.family, refresh.generation + 1, refresh.provider
        )
