"""The lobby: opening a match (CreateMatch), taking a seat or a spectator's place
(JoinMatch) and listing matches (ListMatches).

Quotas and input bounds apply before anything is forwarded, so a refusal never reaches
the board and appends nothing. Seats are board events (services/board/lobby.py): the
board decides whether a claim on a seat holds, the gateway says who claims it.
"""

from __future__ import annotations

import uuid

import grpc

from services.bots.levels import levels_for
from services.games.registry import all_games
from services.gateway.access import Access, check_bounds
from services.gateway.auth import (
    MAX_GAME,
    MAX_ID,
    MAX_NAME,
    MAX_PAGE_TOKEN,
    MAX_SEATS,
    Quota,
    Role,
    Tokens,
    TooLong,
    bounded,
    bounded_names,
    bounded_options,
    creation,
)
from services.gateway.bot_seats import BotsCredential, has_bot_seats
from services.gateway.commands import Commands
from services.gateway.edge import Call
from services.gateway.inplay import MatchesInPlay
from services.gateway.inputs import BadInput, check_name
from services.gateway.refusals import Refused, exhausted, relay, within_quota
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2, platform_events_pb2

#: how long a spectator's join waits for the first view of a match it does not know yet
NEW_MATCH_GRACE_S = 10.0
#: ListMatches pages
DEFAULT_PAGE = 50
MAX_PAGE = 200
#: a create's command id is its proof of a retry: long enough not to be guessed
MIN_COMMAND_ID = 16


def _invalid(message: str) -> Refused:
    return Refused(grpc.StatusCode.INVALID_ARGUMENT, message)


def _names(*checks: tuple[str, list[str]]) -> None:
    """Names people read: printable, not blank (INVALID_ARGUMENT naming the field)."""
    try:
        for field, names in checks:
            for name in names:
                check_name(field, name)
    except BadInput as bad:
        raise _invalid(str(bad)) from bad


class LobbyRpcs:
    def __init__(
        self,
        commands: Commands,
        views: ViewStore,
        access: Access,
        tokens: Tokens,
        key: bytes,
        creates: Quota,
        in_play: MatchesInPlay,
        lobby_ttl_s: int,
        bots: BotsCredential | None = None,
    ) -> None:
        self._commands = commands
        self._views = views
        self._access = access
        self._tokens = tokens
        self._key = key
        #: matches and joins per client address
        self._creates = creates
        self._in_play = in_play
        #: a match's lobby closes this long after its last seat event unless it started
        self._lobby_ttl_s = lobby_ttl_s
        self._bots = bots or BotsCredential(b"")

    async def create(
        self, request: gateway_pb2.OpenMatchRequest, call: Call
    ) -> gateway_pb2.OpenMatchReply:
        claims = call.caller.claims
        within_quota(self._creates, call.caller.host)
        try:
            bounded("game", request.game, MAX_GAME)
            bounded("command_id", request.command_id, MAX_ID)
            players = bounded_names("players", list(request.players), MAX_SEATS, MAX_NAME)
            bots = bounded_names("bots", list(request.bots), MAX_SEATS, MAX_NAME)
            bot_levels = dict(request.bot_levels)
            bounded_names("bot_levels", list(bot_levels), MAX_SEATS, MAX_NAME)
            for named in bot_levels.values():
                bounded("a bot level", named, MAX_NAME)
            options = bounded_options(dict(request.options))
            bounded("seat", request.seat, MAX_NAME)
            bounded("display_name", request.display_name, MAX_NAME)
        except TooLong as long:
            raise _invalid(str(long)) from long
        _names(("players", players), ("display_name", [request.display_name]))
        if request.game not in all_games():
            raise _invalid(f"unknown game; choose one of {', '.join(sorted(all_games()))}")
        if len(set(players)) != len(players) or not all(players):
            raise _invalid("seat names must be distinct, not empty")
        if not set(bots) <= set(players):
            raise _invalid("a bot seat is not a seat")
        if not set(bot_levels) <= set(bots):
            raise _invalid("a seat with a bot level is not a bot seat")
        offered = levels_for(request.game)
        if not set(bot_levels.values()) <= set(offered):
            raise _invalid(f"unknown bot level; {request.game} offers {', '.join(offered)}")
        if request.seat and request.seat not in players:
            raise _invalid("the seat to take is not a seat")
        if request.seat in bot_levels:
            raise _invalid("the seat to take is reserved for a bot")
        if 0 < len(request.command_id) < MIN_COMMAND_ID:
            raise _invalid(
                f"command_id must have at least {MIN_COMMAND_ID} random characters (or none)"
            )
        ids = creation(self._key, request.command_id or uuid.uuid4().hex)
        match_id = ids.match_id
        subject = claims.subject if claims is not None else ids.subject
        forwarded = board_pb2.CreateMatchRequest(
            game=request.game,
            players=players,
            options=options,
            command_id=ids.command_id,
            match_id=match_id,
            lobby=platform_events_pb2.MatchLobby(
                private=request.private,
                bots=bots,
                bot_levels=bot_levels,
                creator=subject,
                open_s=self._lobby_ttl_s,
            ),
        )
        if request.seat:
            forwarded.seated.CopyFrom(
                platform_events_pb2.SeatJoined(
                    seat=request.seat,
                    display_name=request.display_name or request.seat,
                    join_id=ids.join_id,
                    by="creator",
                )
            )
        board = self._commands.shard(match_id).board
        full = self._in_play.reserve(match_id)
        if full is not None:
            raise exhausted(full)
        try:
            reply = await self._commands.admitted(
                match_id, lambda: board.CreateMatch(forwarded), new_match=True
            )
        except BaseException:
            self._in_play.release(match_id)
            raise
        self._commands.show(reply.view_update)
        token, _ = self._tokens.issue(match_id, Role.CREATOR, subject)
        opened = gateway_pb2.OpenMatchReply(
            match_id=reply.match_id, version=reply.version, creator_token=token
        )
        if request.seat:
            opened.seat_token, issued = self._tokens.issue(
                match_id,
                Role.SEAT,
                subject,
                request.seat,
                token_id=ids.join_id,
                version=reply.version,
            )
            opened.seat_token_expires_at = issued.expires_at
            if reply.HasField("legal_actions"):
                opened.legal_actions.CopyFrom(reply.legal_actions)
        return opened

    async def join(
        self, request: gateway_pb2.JoinMatchRequest, call: Call
    ) -> gateway_pb2.JoinMatchReply:
        claims = call.caller.claims
        bots = self._bots.presented(call)  # one client for every bot seat: no quota per host
        if not bots:
            within_quota(self._creates, call.caller.host)
        check_bounds(("match_id", request.match_id), ("seat", request.seat))
        try:
            bounded("display_name", request.display_name, MAX_NAME)
        except TooLong as long:
            raise _invalid(str(long)) from long
        _names(("display_name", [request.display_name]))
        own = claims is not None and claims.match_id == request.match_id
        subject = claims.subject if claims is not None else uuid.uuid4().hex
        if request.spectate:
            if not own:
                await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
                if not self._access.public(request.match_id):
                    raise Refused(
                        grpc.StatusCode.PERMISSION_DENIED,
                        "only its players can let you watch a private match",
                    )
            update = self._views.latest(request.match_id)
            token, issued = self._tokens.issue(request.match_id, Role.SPECTATOR, subject)
            return gateway_pb2.JoinMatchReply(
                token=token,
                expires_at=issued.expires_at,
                version=update.summary.version if update is not None else 0,
            )
        by = "free"
        if own and claims is not None and claims.role == Role.CREATOR:
            by = "creator"
        elif (
            own
            and claims is not None
            and claims.role == Role.SEAT
            and request.seat in ("", claims.seat)
        ):
            by = "holder"
            request.seat = claims.seat
        if bots:
            by = "bots"
        token_id = uuid.uuid4().hex
        joined = await relay(
            self._commands.shard(request.match_id).lobby.JoinSeat(
                board_pb2.JoinSeatRequest(
                    match_id=request.match_id,
                    seat=request.seat,
                    display_name=request.display_name or request.seat,
                    join_id=token_id,
                    by=by,
                )
            )
        )
        self._commands.show(joined.view_update)
        token, issued = self._tokens.issue(
            request.match_id,
            Role.SEAT,
            subject,
            joined.seat,
            token_id=token_id,
            version=joined.version,
        )
        return gateway_pb2.JoinMatchReply(
            token=token, seat=joined.seat, expires_at=issued.expires_at, version=joined.version
        )

    async def list_matches(
        self, request: gateway_pb2.ListMatchesRequest, call: Call
    ) -> gateway_pb2.ListMatchesReply:
        claims = call.caller.claims
        try:
            bounded("game", request.game, MAX_GAME)
            bounded("page_token", request.page_token, MAX_PAGE_TOKEN)
        except TooLong as long:
            raise _invalid(str(long)) from long
        mine = claims.match_id if claims is not None else None
        bots = self._bots.presented(call)
        size = min(request.page_size or DEFAULT_PAGE, MAX_PAGE)
        matches = sorted(
            (
                s
                for s in self._views.summaries()
                if (has_bot_seats(s) if bots else (not s.private or s.match_id == mine))
                and (not request.game or s.game == request.game)
                and (not request.status or s.status == request.status)
                and s.match_id > request.page_token
            ),
            key=lambda s: s.match_id,
        )
        page = matches[:size]
        more = len(matches) > size
        return gateway_pb2.ListMatchesReply(
            matches=page, next_page_token=page[-1].match_id if more else ""
        )
