"""The lobby: opening a match (CreateMatch), taking a seat or a spectator's place
(JoinMatch) and listing matches (ListMatches, "my matches" with ``mine``).

A match is created and its seats taken by a player (its session's access token,
services/gateway/api/players.py): the creator and each seat's holder are recorded as that
player, who joins its seats again from any device. Quotas are per player (creates and
joins; matches it created that have not started), with a quota per address behind them
(as sign-ins are per address). Quotas and input bounds apply before anything is
forwarded, so a refusal never reaches the board and appends nothing. Seats are board
events (services/board/lobby.py): the board decides whether a claim on a seat holds, the
gateway says who claims it.
"""

from __future__ import annotations

import time
import uuid
from collections import Counter

import grpc

from services.bots.levels import levels_for
from services.games import clock
from services.games.registry import all_games
from services.gateway.access import Access, Caller, check_bounds
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
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2, platform_events_pb2

#: how long a spectator's join waits for the first view of a match it does not know yet
NEW_MATCH_GRACE_S = 10.0
#: ListMatches pages
DEFAULT_PAGE = 50
MAX_PAGE = 200
#: a create's command id is its proof of a retry: long enough not to be guessed
MIN_COMMAND_ID = 16
SIGN_IN_FIRST = (
    "sign in first (Authenticate with a device credential) and call with your session's "
    "access token"
)


def _member(update: match_pb2.ViewUpdate | None, player: str) -> bool:
    """The player created the match or holds one of its seats."""
    return update is not None and (update.creator == player or player in update.holders.values())


def _created_by(update: match_pb2.ViewUpdate | None, player: str) -> bool:
    return update is not None and update.creator == player


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
        address_creates: Quota,
        max_open_lobbies: int,
        max_open_matches: int = 0,
        bots: BotsCredential | None = None,
    ) -> None:
        self._commands = commands
        self._views = views
        self._access = access
        self._tokens = tokens
        self._key = key
        #: creates and joins per player, and per client address behind it
        self._creates = creates
        self._address_creates = address_creates
        #: matches a player created that have not started, at once (0: no bound), and the
        #: creates of each player under way (not seen in the views yet)
        self._max_open_lobbies = max_open_lobbies
        self._creating: Counter[str] = Counter()
        #: matches a player is in that have not ended, at once (0: no bound)
        self._max_open_matches = max_open_matches
        self._in_play = in_play
        #: a match's lobby closes this long after its last seat event unless it started
        self._lobby_ttl_s = lobby_ttl_s
        self._bots = bots or BotsCredential(b"")

    def _within_quotas(self, caller: Caller, player: str) -> None:
        """The player's quota of creates and joins, then its address's (which many players
        made at one address share)."""
        within_quota(self._creates, player)
        within_quota(self._address_creates, caller.host)

    def _open_lobbies(self, player: str) -> list[match_pb2.MatchSummary]:
        """The player's matches that have not started nor ended."""
        return [
            s
            for s in self._views.summaries()
            if not s.started
            and s.status != match_pb2.MATCH_STATUS_FINISHED
            and _created_by(self._views.latest(s.match_id), player)
        ]

    def _within_open_lobbies(self, player: str) -> None:
        """RESOURCE_EXHAUSTED when the player has as many matches waiting for players as
        it may: it may create again when the first of them closes (or starts sooner)."""
        if not self._max_open_lobbies:
            return
        waiting = self._open_lobbies(player)
        if len(waiting) + self._creating[player] < self._max_open_lobbies:
            return
        closing = [s.open_until for s in waiting if s.open_until]
        wait_s = max(1.0, min(closing) - time.time()) if closing else 0.0
        if not wait_s:
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"you have {self._max_open_lobbies} matches waiting for players; start or "
                "finish one first",
            )
        retry_ms = int(wait_s * 1000)
        raise Refused(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            f"you have {self._max_open_lobbies} matches waiting for players; the first of "
            f"them closes unless joined in {int(wait_s + 0.999)} s (or start one sooner)",
            (("retry-after-ms", str(retry_ms)),),
        )

    def _within_open_matches(self, player: str) -> None:
        """FAILED_PRECONDITION when the player is in as many unfinished matches as it may
        be: waiting does not help (a match in play ends when it is played), finishing or
        leaving one does."""
        if not self._max_open_matches:
            return
        unfinished = sum(
            1
            for s in self._views.summaries()
            if s.status != match_pb2.MATCH_STATUS_FINISHED
            and _member(self._views.latest(s.match_id), player)
        )
        if unfinished + self._creating[player] >= self._max_open_matches:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION,
                f"you are in {self._max_open_matches} matches that have not ended; finish "
                "one before you start or join another",
            )

    async def create(
        self, request: gateway_pb2.OpenMatchRequest, call: Call
    ) -> gateway_pb2.OpenMatchReply:
        player = call.caller.player
        if player is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, SIGN_IN_FIRST)
        self._within_quotas(call.caller, player)
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
        try:
            clock.parse(request.game, options)  # (the board checks it again)
        except clock.BadTimeControl as bad:
            raise _invalid(str(bad)) from bad
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
        ids = creation(self._key, player, request.command_id or uuid.uuid4().hex)
        match_id = ids.match_id
        subject = player
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
                    player_id=player,
                )
            )
        board = self._commands.shard(match_id).board
        retried = self._views.latest(match_id) is not None
        if not retried:
            self._within_open_lobbies(player)
            self._within_open_matches(player)
        full = self._in_play.reserve(match_id)
        if full is not None:
            raise exhausted(full)
        self._creating[player] += 1
        try:
            reply = await self._commands.admitted(
                match_id, lambda: board.CreateMatch(forwarded), new_match=True
            )
        except BaseException:
            self._in_play.release(match_id)
            raise
        finally:
            self._creating[player] -= 1
            if not self._creating[player]:
                del self._creating[player]
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
        # the bots service: one client for every bot seat (no quota), and those seats only
        bots = self._bots.presented(call)
        check_bounds(("match_id", request.match_id), ("seat", request.seat))
        try:
            bounded("display_name", request.display_name, MAX_NAME)
        except TooLong as long:
            raise _invalid(str(long)) from long
        _names(("display_name", [request.display_name]))
        own = claims is not None and claims.match_id == request.match_id
        player = call.caller.player
        if request.spectate:
            within_quota(self._address_creates, call.caller.host)
            subject = claims.subject if claims is not None else uuid.uuid4().hex
            if not own:
                await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
                if not self._access.public(request.match_id) and not (
                    player is not None and self._access.member(player, request.match_id)
                ):
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
        # Who claims the seat: a player (its session: a free seat, or its own again), the
        # seat's own token (its holder again), or the creator's token (a free seat, for a
        # hot seat or bots; no player's claim: a creator token passed on takes no one's
        # seat). A spectator's token is no one's claim: it may have been passed on.
        if bots:
            by, claimant, subject = "bots", "", "bots"
        elif claims is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, SIGN_IN_FIRST)
        elif player is not None:
            by, claimant = "free", player
        elif own and claims.role == Role.SEAT and request.seat in ("", claims.seat):
            by, claimant = "holder", claims.subject
            request.seat = claims.seat
        elif own and claims.role == Role.CREATOR:
            by, claimant = "creator", ""
        else:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, SIGN_IN_FIRST)
        if not bots:
            assert claims is not None
            subject = claims.subject
            self._within_quotas(call.caller, subject)
        if player is not None and not _member(self._views.latest(request.match_id), player):
            self._within_open_matches(player)  # a new match for the player, not its own again
        token_id = uuid.uuid4().hex
        joined = await relay(
            self._commands.shard(request.match_id).lobby.JoinSeat(
                board_pb2.JoinSeatRequest(
                    match_id=request.match_id,
                    seat=request.seat,
                    display_name=request.display_name or request.seat,
                    join_id=token_id,
                    by=by,
                    player_id=claimant,
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

    async def leave(
        self, request: gateway_pb2.LeaveSeatRequest, call: Call
    ) -> gateway_pb2.LeaveSeatReply:
        """The seat's holder gives it up: by the seat's token (its newest: an older one
        acts no more), or by its session naming a seat that player holds."""
        check_bounds(("match_id", request.match_id), ("seat", request.seat))
        claims = call.caller.claims
        if claims is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, SIGN_IN_FIRST)
        player = call.caller.player
        if player is not None:
            if not request.seat:
                raise _invalid("name the seat to leave (or leave with the seat's token)")
            seat, player_id, token_id = request.seat, player, ""
        elif (
            claims.role == Role.SEAT
            and claims.match_id == request.match_id
            and request.seat in ("", claims.seat)
        ):
            seat, player_id, token_id = claims.seat, "", claims.token_id
        else:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "only a seat's holder leaves it (with the seat's token, or signed in)",
            )
        self._within_quotas(call.caller, claims.subject)
        changed = await relay(
            self._commands.shard(request.match_id).lobby.LeaveSeat(
                board_pb2.BoardLeaveSeatRequest(
                    match_id=request.match_id,
                    seat=seat,
                    player_id=player_id,
                    seat_token=token_id,
                    command_id=f"leave:{uuid.uuid4().hex}",
                )
            )
        )
        # shown here at once: this replica refuses the seat's old tokens from now on
        self._commands.show(changed.view_update)
        return gateway_pb2.LeaveSeatReply(version=changed.version)

    async def hand_over(
        self, request: gateway_pb2.HandOverSeatRequest, call: Call
    ) -> gateway_pb2.HandOverSeatReply:
        """An abandoned seat given to a bot or opened, by a player of the match (the board
        says which players may)."""
        check_bounds(("match_id", request.match_id), ("seat", request.seat))
        player = call.caller.player
        if player is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED
                if call.caller.claims is None
                else grpc.StatusCode.PERMISSION_DENIED,
                "a seat is handed over by a player: " + SIGN_IN_FIRST,
            )
        to = request.WhichOneof("to")
        if to is None:
            raise _invalid("say whom the seat goes to: bot_level, or open")
        level = request.bot_level if to == "bot_level" else ""
        if to == "bot_level":
            try:
                bounded("bot_level", level, MAX_NAME)
            except TooLong as long:
                raise _invalid(str(long)) from long
            update = self._views.latest(request.match_id)
            if update is None:
                raise Refused(grpc.StatusCode.NOT_FOUND, "no such match")
            offered = levels_for(update.summary.game)
            if level not in offered:
                raise _invalid(
                    f"unknown bot level; {update.summary.game} offers {', '.join(offered)}"
                )
        self._within_quotas(call.caller, player)
        changed = await relay(
            self._commands.shard(request.match_id).lobby.HandOverSeat(
                board_pb2.BoardHandOverSeatRequest(
                    match_id=request.match_id,
                    seat=request.seat,
                    to="bot" if level else "open",
                    level=level,
                    player_id=player,
                    command_id=f"hand-over:{uuid.uuid4().hex}",
                )
            )
        )
        self._commands.show(changed.view_update)
        return gateway_pb2.HandOverSeatReply(version=changed.version)

    def _with_your_seats(
        self, summary: match_pb2.MatchSummary, player: str
    ) -> match_pb2.MatchSummary:
        update = self._views.latest(summary.match_id)
        held = update.holders if update is not None else {}
        mine = match_pb2.MatchSummary()
        mine.CopyFrom(summary)  # the store's copy stays as every caller sees it
        mine.your_seats.extend(p for p in summary.players if held.get(p) == player)
        return mine

    async def list_matches(
        self, request: gateway_pb2.ListMatchesRequest, call: Call
    ) -> gateway_pb2.ListMatchesReply:
        claims = call.caller.claims
        try:
            bounded("game", request.game, MAX_GAME)
            bounded("page_token", request.page_token, MAX_PAGE_TOKEN)
        except TooLong as long:
            raise _invalid(str(long)) from long
        player = call.caller.player
        bots = self._bots.presented(call)
        if request.mine and player is None:
            raise Refused(
                grpc.StatusCode.UNAUTHENTICATED,
                "your matches are listed with your session's access token (Authenticate)",
            )
        own_match = claims.match_id if claims is not None else None
        size = min(request.page_size or DEFAULT_PAGE, MAX_PAGE)

        def shown(summary: match_pb2.MatchSummary) -> bool:
            if bots:  # to the bots service only the matches it plays seats of, private too
                return has_bot_seats(summary)
            if request.mine:
                return _member(self._views.latest(summary.match_id), player or "")
            if not summary.private or summary.match_id == own_match:
                return True
            return player is not None and _member(self._views.latest(summary.match_id), player)

        # the bots service asks every second for the matches in play it seats bots in
        bot_seated = bots and request.status == match_pb2.MATCH_STATUS_ACTIVE
        matches = sorted(
            (
                s
                for s in (self._views.bot_seated() if bot_seated else self._views.summaries())
                if (not request.game or s.game == request.game)
                and (not request.status or s.status == request.status)
                and s.match_id > request.page_token
                and shown(s)
            ),
            key=lambda s: s.match_id,
        )
        page = matches[:size]
        if request.mine:
            page = [self._with_your_seats(s, player or "") for s in page]
        more = len(matches) > size
        return gateway_pb2.ListMatchesReply(
            matches=page, next_page_token=page[-1].match_id if more else ""
        )
