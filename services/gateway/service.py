"""tabletop.v1.Gateway: the public API. Commands go to the owning board shard; views come
from the projector's views topic; replay folds a match's events afresh.

Every call is authorised here (services/gateway/auth.py has the tokens): a seat token acts
and sees for its seat only; a spectator token, or no token on a public match, sees what a
spectator may; a token for another match is refused. Quotas and input bounds apply before
anything is forwarded, so a refusal never reaches the board and appends nothing.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from functools import partial
from typing import NoReturn, Protocol, TypeVar

import grpc

from services.adapters.folding import created, fold
from services.adapters.verify import verify_match
from services.adapters.views import view
from services.bots.levels import levels_for
from services.common.calls.channel import CallChannel, StreamBroken
from services.common.config import Config
from services.common.envelope import is_a
from services.common.logging import get_logger
from services.common.metrics import GATEWAY_VIEW_LAG, GATEWAY_WATCHERS
from services.common.server import peer_channel
from services.common.sharding import shard_of
from services.games.registry import all_games
from services.gateway.admission import Admission, Refusal
from services.gateway.auth import (
    MAX_GAME,
    MAX_ID,
    MAX_NAME,
    MAX_PAGE_TOKEN,
    MAX_SEATS,
    BadToken,
    Claims,
    Quota,
    Role,
    Tokens,
    TooLong,
    bearer,
    bounded,
    bounded_names,
    bounded_options,
    creation,
)
from services.gateway.inplay import MatchesInPlay
from services.gateway.pictures import Pictures
from services.gateway.play import AckWithView, Play
from services.gateway.replay import batch_bounds, replay_steps, step_batches
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

log = get_logger(__name__)

Reply = TypeVar("Reply")


class _Versioned(Protocol):
    @property
    def version(self) -> int: ...


Acked = TypeVar("Acked", bound=_Versioned)

#: the longest a GetView may wait for a version
MAX_WAIT_MS = 30_000
#: how long WatchMatch waits for the first view of a match it does not know yet
NEW_MATCH_GRACE_S = 10.0
#: ListMatches pages
DEFAULT_PAGE = 50
MAX_PAGE = 200
#: a create's command id is its proof of a retry: long enough not to be guessed
MIN_COMMAND_ID = 16
#: VerifyMatch lists at most this many problems
MAX_PROBLEMS = 50
#: a refusal passed on from a peer is cut to this many characters
MAX_DETAIL = 300
#: an export or verification of a match just over waits this long for its seeds' reveal
#: (the board reveals them after answering the last command)
REVEAL_WAIT_S = 10.0


class Shard:
    """The services one board shard talks to."""

    def __init__(
        self,
        board: str,
        dice: str,
        decks: str,
        config: Config,
        on_update: Callable[[bytes], None] | None = None,
    ) -> None:
        """``on_update`` takes the match updates the board sends with acknowledgements."""
        self.channels = [peer_channel(a, config) for a in (board, dice, decks)]
        self.board = board_pb2_grpc.BoardStub(self.channels[0])
        self.lobby = board_pb2_grpc.LobbyStub(self.channels[0])
        # Commands go on a Calls stream of their own, and each service's event reads on
        # another (services/common/calls/): a large read holds back no command.
        self._calls = CallChannel(self.channels[0], "board")
        self.commands = board_pb2_grpc.BoardStub(self._calls)
        self._reads = {
            stream: CallChannel(channel, stream)
            for stream, channel in zip(("board", "dice", "decks"), self.channels, strict=True)
        }
        self.events = {s: envelope_pb2_grpc.EventSourceStub(c) for s, c in self._reads.items()}
        self._on_update = on_update

    async def submit(self, request: board_pb2.SubmitActionRequest) -> board_pb2.SubmitActionReply:
        """The board's reply to the command, once its update is in the views (so that the
        caller's watchers see it without waiting for the projector)."""
        acknowledged: board_pb2.AcknowledgedAction = await self.commands.SubmitCommand(request)
        if acknowledged.view_update and self._on_update is not None:
            try:
                self._on_update(acknowledged.view_update)
            except Exception:  # the command is done all the same; its view will come
                log.exception("acknowledged_update_unreadable")
        return acknowledged.reply

    async def close(self) -> None:
        for calls in (self._calls, *self._reads.values()):
            await calls.close()
        for channel in self.channels:
            await channel.close()


async def read_events(
    source: envelope_pb2_grpc.EventSourceStub, match_id: str
) -> list[envelope_pb2.EventEnvelope]:
    """Every event of one match's stream; raises AioRpcError. Reads change nothing: a read
    whose stream broke is made once more (on a new stream)."""
    request = envelope_pb2.ListEventsRequest(match_id=match_id)
    try:
        return [e async for batch in source.ListEventBatches(request) for e in batch.events]
    except StreamBroken:
        return [e async for batch in source.ListEventBatches(request) for e in batch.events]


async def _refuse(
    context: grpc.aio.ServicerContext, code: grpc.StatusCode, message: str
) -> NoReturn:
    await context.abort(code, message)
    raise AssertionError  # abort raises


async def _exhausted(context: grpc.aio.ServicerContext, refusal: Refusal) -> NoReturn:
    context.set_trailing_metadata((("retry-after-ms", str(refusal.retry_after_ms)),))
    await _refuse(context, grpc.StatusCode.RESOURCE_EXHAUSTED, refusal.message)


async def _forward(context: grpc.aio.ServicerContext, refused: grpc.aio.AioRpcError) -> NoReturn:
    """Pass a downstream refusal to the client (code, reason, a bounded message)."""
    reason = dict(refused.trailing_metadata() or ()).get("tabletop-reason", "")
    if reason:
        context.set_trailing_metadata((("tabletop-reason", str(reason)),))
    code = refused.code()
    if code in (grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL):
        # A peer's bug is not the client's business; its log has the detail.
        await _refuse(context, grpc.StatusCode.UNAVAILABLE, "the service failed; try again")
    if code in (
        grpc.StatusCode.UNAVAILABLE,
        grpc.StatusCode.DEADLINE_EXCEEDED,
        grpc.StatusCode.CANCELLED,
    ):
        # Infrastructure trouble (its message may name internals): the reason code stays.
        code = grpc.StatusCode.UNAVAILABLE if code == grpc.StatusCode.CANCELLED else code
        await _refuse(context, code, "a service is unavailable; retry with the same command id")
    await _refuse(context, code, (refused.details() or "")[:MAX_DETAIL])


async def _relay(context: grpc.aio.ServicerContext, call: Awaitable[Reply]) -> Reply:
    """The downstream service's reply, or its refusal passed on."""
    try:
        return await call
    except grpc.aio.AioRpcError as error:
        await _forward(context, error)


def _all_revealed(provenance: match_pb2.Provenance) -> bool:
    """Every seed the match committed to is revealed (a game commits only with the
    chance services it uses: no commitment, nothing to wait for)."""
    return bool(
        (provenance.dice_seed or not provenance.dice_commitment)
        and (provenance.decks_seed or not provenance.decks_commitment)
    )


def _revealed(update: match_pb2.ViewUpdate) -> bool:
    return _all_revealed(update.provenance)


def _over(view: match_pb2.MatchView) -> bool:
    """The last view a watch sends: the match is over and its seeds are revealed."""
    finished = view.status == match_pb2.MATCH_STATUS_FINISHED
    return finished and _all_revealed(view.provenance)


def _peer_host(context: grpc.aio.ServicerContext) -> str:
    """The client's address without its port ("ipv4:10.0.0.7:5123" → "ipv4:10.0.0.7").

    gRPC-Web calls (services/gateway/web.py) give the same form from the HTTP connection.
    """
    peer = context.peer() or "unknown"
    return peer.rsplit(":", 1)[0] if peer.count(":") >= 2 else peer


class GatewayService(gateway_pb2_grpc.GatewayServicer):
    def __init__(
        self,
        shards: Sequence[Shard],
        scoring: grpc.aio.Channel,
        views: ViewStore,
        config: Config,
    ) -> None:
        self._shards = list(shards)
        self._scoring = scoring_pb2_grpc.ScoringStub(scoring)
        self._scoring_calls = CallChannel(scoring, "scoring")
        self._scoring_events = envelope_pb2_grpc.EventSourceStub(self._scoring_calls)
        self._views = views
        self._pictures = Pictures()
        self._key = config.token_key
        self._tokens = Tokens(config.token_key, config.token_ttl_seconds)
        #: matches and joins per client address; actions per token subject
        self._creates = Quota(config.create_rate, config.create_burst)
        self._actions = Quota(config.action_rate, config.action_burst)
        self._admission = Admission(config.max_in_flight, config.max_view_lag_ms)
        views.projector_listeners.append(self._admission.viewed)
        GATEWAY_VIEW_LAG.set_function(self._admission.view_lag_s)
        self._in_play = MatchesInPlay(config.max_matches_in_play, config.match_idle_s)
        self._in_play.follow(views)

    async def close(self) -> None:
        """Closes what the service opened on its channels (the caller closes them)."""
        await self._scoring_calls.close()

    def _show(self, update: bytes) -> None:
        """The match's update that came with the board's acknowledgement, to the views."""
        if update:
            self._views.acknowledged(update)

    def _shard(self, match_id: str) -> Shard:
        return self._shards[shard_of(match_id, len(self._shards))]

    # -- identity, quotas, bounds -----------------------------------------------------------
    async def _claims(self, context: grpc.aio.ServicerContext) -> Claims | None:
        """The verified token of the call; None without one. A bad one is refused."""
        try:
            token = bearer(context.invocation_metadata())
            return None if token is None else self._tokens.verify(token)
        except BadToken as bad:
            await _refuse(context, grpc.StatusCode.UNAUTHENTICATED, str(bad))

    async def _quota(self, context: grpc.aio.ServicerContext, quota: Quota, client: str) -> None:
        wait = quota.take(client)
        if wait > 0:
            retry_ms = max(1, int(wait * 1000))
            context.set_trailing_metadata((("retry-after-ms", str(retry_ms)),))
            await _refuse(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"too many requests; retry after {retry_ms} ms",
            )

    async def _admitted(
        self,
        context: grpc.aio.ServicerContext,
        match_id: str,
        call: Callable[[], Awaitable[Acked]],
        new_match: bool = False,
    ) -> Acked:
        """The board's reply to a command, unless the stack is too far behind to take it."""
        refusal = self._admission.refusal(new_match)
        if refusal is not None:
            await _exhausted(context, refusal)
        self._admission.in_flight += 1
        try:
            reply = await _relay(context, call())
        finally:
            self._admission.in_flight -= 1
        self._admission.acknowledged(match_id, reply.version)
        return reply

    async def _bounded(self, context: grpc.aio.ServicerContext, *checks: tuple[str, str]) -> None:
        try:
            for field, value in checks:
                bounded(field, value, MAX_ID)
        except TooLong as long:
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(long))

    def _public(self, match_id: str) -> bool:
        update = self._views.latest(match_id)
        return update is not None and not update.summary.private

    def _superseded(self, claims: Claims) -> bool:
        """A newer join of the seat is projected (one not projected yet cannot be judged:
        the token's join version tells which)."""
        update = self._views.latest(claims.match_id)
        if update is None or update.summary.version < claims.version:
            return False
        newest = update.seat_tokens.get(claims.seat)
        return newest is not None and newest != claims.token_id

    async def _viewer(
        self, context: grpc.aio.ServicerContext, match_id: str, requested: str
    ) -> str:
        """The seat whose view the caller may see ("" for the spectator view)."""
        await self._bounded(context, ("match_id", match_id), ("viewer", requested))
        claims = await self._claims(context)
        if claims is None:
            if requested:
                await _refuse(
                    context, grpc.StatusCode.UNAUTHENTICATED, "a seat's view needs its seat token"
                )
            if not self._public(match_id):
                await _refuse(
                    context,
                    grpc.StatusCode.UNAUTHENTICATED,
                    "present a token of this match (private, or not known yet)",
                )
            return ""
        if claims.match_id != match_id:
            await _refuse(
                context, grpc.StatusCode.PERMISSION_DENIED, "the token is for another match"
            )
        seat = claims.seat if claims.role == Role.SEAT else ""
        if seat and self._superseded(claims):
            await _refuse(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                "this seat was joined again elsewhere; join again to see it here",
            )
        if requested and requested != seat:
            await _refuse(
                context, grpc.StatusCode.PERMISSION_DENIED, "the token is not for that seat"
            )
        return seat

    async def _seat(self, context: grpc.aio.ServicerContext, match_id: str, player: str) -> Claims:
        """The caller's seat token for acting in this match (as ``player``, if named)."""
        await self._bounded(context, ("match_id", match_id), ("player", player))
        claims = await self._claims(context)
        if claims is None:
            await _refuse(context, grpc.StatusCode.UNAUTHENTICATED, "acting needs a seat token")
        if claims.match_id != match_id:
            await _refuse(
                context, grpc.StatusCode.PERMISSION_DENIED, "the token is for another match"
            )
        if claims.role != Role.SEAT or (player and player != claims.seat):
            await _refuse(
                context, grpc.StatusCode.PERMISSION_DENIED, "the token does not act for that seat"
            )
        return claims

    # -- lobby ----------------------------------------------------------------------------
    async def CreateMatch(
        self, request: gateway_pb2.OpenMatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.OpenMatchReply:
        claims = await self._claims(context)
        await self._quota(context, self._creates, _peer_host(context))
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
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(long))
        if request.game not in all_games():
            await _refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown game; choose one of {', '.join(sorted(all_games()))}",
            )
        if len(set(players)) != len(players) or not all(players):
            await _refuse(
                context, grpc.StatusCode.INVALID_ARGUMENT, "seat names must be distinct, not empty"
            )
        if not set(bots) <= set(players):
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, "a bot seat is not a seat")
        if not set(bot_levels) <= set(bots):
            await _refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "a seat with a bot level is not a bot seat",
            )
        offered = levels_for(request.game)
        if not set(bot_levels.values()) <= set(offered):
            await _refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"unknown bot level; {request.game} offers {', '.join(offered)}",
            )
        if request.seat and request.seat not in players:
            await _refuse(
                context, grpc.StatusCode.INVALID_ARGUMENT, "the seat to take is not a seat"
            )
        if 0 < len(request.command_id) < MIN_COMMAND_ID:
            await _refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                f"command_id must have at least {MIN_COMMAND_ID} random characters (or none)",
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
                private=request.private, bots=bots, bot_levels=bot_levels, creator=subject
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
        board = self._shard(match_id).board
        full = self._in_play.reserve(match_id)
        if full is not None:
            await _exhausted(context, full)
        try:
            reply = await self._admitted(
                context, match_id, lambda: board.CreateMatch(forwarded), new_match=True
            )
        except BaseException:
            self._in_play.release(match_id)
            raise
        self._show(reply.view_update)
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

    async def JoinMatch(
        self, request: gateway_pb2.JoinMatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.JoinMatchReply:
        claims = await self._claims(context)
        await self._quota(context, self._creates, _peer_host(context))
        await self._bounded(context, ("match_id", request.match_id), ("seat", request.seat))
        try:
            bounded("display_name", request.display_name, MAX_NAME)
        except TooLong as long:
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(long))
        own = claims is not None and claims.match_id == request.match_id
        subject = claims.subject if claims is not None else uuid.uuid4().hex
        if request.spectate:
            if not own:
                await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
                if not self._public(request.match_id):
                    await _refuse(
                        context,
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
        token_id = uuid.uuid4().hex
        joined = await _relay(
            context,
            self._shard(request.match_id).lobby.JoinSeat(
                board_pb2.JoinSeatRequest(
                    match_id=request.match_id,
                    seat=request.seat,
                    display_name=request.display_name or request.seat,
                    join_id=token_id,
                    by=by,
                )
            ),
        )
        self._show(joined.view_update)
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

    async def ListMatches(
        self, request: gateway_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.ListMatchesReply:
        claims = await self._claims(context)
        try:
            bounded("game", request.game, MAX_GAME)
            bounded("page_token", request.page_token, MAX_PAGE_TOKEN)
        except TooLong as long:
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(long))
        mine = claims.match_id if claims is not None else None
        size = min(request.page_size or DEFAULT_PAGE, MAX_PAGE)
        matches = sorted(
            (
                s
                for s in self._views.summaries()
                if (not s.private or s.match_id == mine)
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

    # -- views ----------------------------------------------------------------------------
    async def _view(
        self, match_id: str, viewer: str, context: grpc.aio.ServicerContext
    ) -> match_pb2.MatchView:
        update = self._views.latest(match_id)
        if update is None:
            await _refuse(
                context, grpc.StatusCode.NOT_FOUND, "no such match (or not projected yet)"
            )
        view = await self._render(update, viewer, context)
        if view is None:
            await _refuse(context, grpc.StatusCode.NOT_FOUND, "no such seat in this match")
        return view

    async def _render(
        self, update: match_pb2.ViewUpdate, viewer: str, context: grpc.aio.ServicerContext
    ) -> match_pb2.MatchView | None:
        """The viewer's view of ``update``; a view that cannot be drawn (a game's bug, a
        state this gateway's code cannot read) is refused plainly, logged with its cause."""
        if not update.state:
            # Published by a projector older than rendering at the gateway (views, no
            # state): there is nothing to draw until a rebuild republishes the match.
            await _refuse(
                context,
                grpc.StatusCode.UNAVAILABLE,
                "this match's view is being rebuilt; try again shortly",
            )
        try:
            return self._views.view(update, viewer)
        except Exception:
            log.exception("view_render_failed", match_id=update.summary.match_id)
            await _refuse(
                context,
                grpc.StatusCode.INTERNAL,
                "this match's view could not be drawn; the operators have been told",
            )

    async def GetView(
        self, request: gateway_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> match_pb2.MatchView:
        if request.min_version:
            await self._bounded(context, ("match_id", request.match_id))
            if await self._claims(context) is not None:
                # a token is judged before waiting: a refused caller holds no wait
                await self._viewer(context, request.match_id, request.viewer)
            wait_ms = min(request.wait_ms, MAX_WAIT_MS)
            remaining = context.time_remaining()
            wait = min(wait_ms / 1000, remaining) if remaining is not None else wait_ms / 1000
            if await self._views.wait_for(request.match_id, request.min_version, wait) is None:
                await _refuse(
                    context,
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"the view has not reached version {request.min_version} yet; try again",
                )
        viewer = await self._viewer(context, request.match_id, request.viewer)
        return await self._view(request.match_id, viewer, context)

    async def GetLegalActions(
        self, request: board_pb2.GetLegalActionsRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.GetLegalActionsReply:
        claims = await self._seat(context, request.match_id, request.player)
        forwarded = board_pb2.GetLegalActionsRequest(
            match_id=request.match_id, player=claims.seat, seat_token=claims.token_id
        )
        return await _relay(context, self._shard(request.match_id).board.GetLegalActions(forwarded))

    async def SubmitAction(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SubmitActionReply:
        return await self._submit(request, context)

    async def _submit(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SubmitActionReply:
        claims = await self._seat(context, request.match_id, request.player)
        await self._bounded(context, ("command_id", request.command_id))
        await self._quota(context, self._actions, claims.subject)
        forwarded = board_pb2.SubmitActionRequest()
        forwarded.CopyFrom(request)
        forwarded.player = claims.seat
        forwarded.seat_token = claims.token_id
        shard = self._shard(request.match_id)
        return await self._admitted(context, request.match_id, lambda: shard.submit(forwarded))

    async def WatchMatch(
        self, request: gateway_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[match_pb2.MatchView]:
        viewer = await self._watched(request, context)
        GATEWAY_WATCHERS.inc()
        try:
            async for update in self._views.follow(request.match_id):
                view = await self._render(update, viewer, context)
                if view is None:  # judged up front: players never change
                    return
                yield view
                if _over(view):
                    return
        finally:
            GATEWAY_WATCHERS.dec()

    async def _watched(
        self, request: gateway_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext
    ) -> str:
        """The viewer a watch of the match follows, judged up front (refusals end it)."""
        await self._bounded(context, ("match_id", request.match_id))
        # A match created a moment ago may not be projected yet: give it a little time.
        await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
        viewer = await self._viewer(context, request.match_id, request.viewer)
        await self._view(request.match_id, viewer, context)  # NOT_FOUND etc. up front
        return viewer

    async def PlayMatch(
        self,
        requests: AsyncIterator[gateway_pb2.PlayRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[gateway_pb2.PlayUpdate]:
        first = await anext(aiter(requests), None)
        if first is None:
            return
        if first.WhichOneof("kind") != "watch":
            await _refuse(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                "a PlayMatch stream begins with watch (which match, whose view)",
            )
        viewer = await self._watched(first.watch, context)
        match_id = first.watch.match_id
        latest = partial(self._views.latest, match_id) if first.views_with_acks else None
        play = Play(match_id, context, self._submit, latest)
        GATEWAY_WATCHERS.inc()
        try:
            async for item in play.run(requests, self._views.follow(match_id)):
                if isinstance(item, gateway_pb2.PlayUpdate):
                    yield item
                    continue
                update = item.update if isinstance(item, AckWithView) else item
                view = await self._render(update, viewer, context)
                if view is None:  # judged up front: players never change
                    return
                if isinstance(item, AckWithView):
                    item.answer.view_with_ack.CopyFrom(view)
                    yield item.answer
                else:
                    yield gateway_pb2.PlayUpdate(view=view)
                if _over(view):
                    play.views_ended()
        finally:
            GATEWAY_WATCHERS.dec()

    async def ReplayMatch(
        self, request: gateway_pb2.ReplayMatchRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[gateway_pb2.ReplayStep]:
        events, viewer, finished = await self._replay(request.match_id, request.viewer, context)
        for step in replay_steps(events, viewer, payloads=finished):
            yield step

    async def ReplayMatchBatches(
        self, request: gateway_pb2.ReplayMatchBatchesRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[gateway_pb2.ReplayStepBatch]:
        try:
            max_steps, max_bytes = batch_bounds(request)
        except ValueError as bad:
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(bad))
        events, viewer, finished = await self._replay(request.match_id, request.viewer, context)
        for batch in step_batches(events, viewer, finished, max_steps, max_bytes):
            yield batch

    async def _replay(
        self, match_id: str, viewer: str, context: grpc.aio.ServicerContext
    ) -> tuple[list[envelope_pb2.EventEnvelope], str, bool]:
        """(board events, viewer, finished) of a replay the caller may see; a match in play
        replays as a spectator sees it, without payloads (hidden information)."""
        await self._bounded(context, ("match_id", match_id))
        await self._views.wait_for(match_id, 1, 0)
        viewer = await self._viewer(context, match_id, viewer)
        events = await self._board_events(match_id, context)
        # from the end: a finished match's MatchEnded is among its last events
        finished = any(is_a(e, platform_events_pb2.MatchEnded) for e in reversed(events))
        return events, viewer if finished else "", finished

    async def GetPicture(
        self, request: gateway_pb2.GetPictureRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.Picture:
        await self._bounded(context, ("match_id", request.match_id))
        viewer = await self._viewer(context, request.match_id, "")
        if not request.HasField("version"):
            return self._pictures.draw(await self._view(request.match_id, viewer, context))
        # A match in play replays as a spectator sees it (like ReplayMatch): a kept picture
        # is served without folding again only when the live view says the match is over.
        update = self._views.latest(request.match_id)
        over = update is not None and update.summary.status == match_pb2.MATCH_STATUS_FINISHED
        kept = self._pictures.get(request.match_id, request.version, viewer if over else "")
        if kept is not None:
            return kept
        events = await self._board_events(request.match_id, context)
        if not 1 <= request.version <= events[-1].sequence:
            await _refuse(
                context,
                grpc.StatusCode.OUT_OF_RANGE,
                f"version must be between 1 and {events[-1].sequence}",
            )
        if not any(is_a(e, platform_events_pb2.MatchEnded) for e in events):
            viewer = ""
        match = created(events[0])
        for envelope in events[1:]:
            if envelope.sequence > request.version:
                break
            fold(match, envelope)
        return self._pictures.draw(view(match, viewer))

    async def _board_events(
        self, match_id: str, context: grpc.aio.ServicerContext
    ) -> list[envelope_pb2.EventEnvelope]:
        try:
            events = await read_events(self._shard(match_id).events["board"], match_id)
        except grpc.aio.AioRpcError as error:
            await _forward(context, error)
        if not events:
            await _refuse(context, grpc.StatusCode.NOT_FOUND, "no such match")
        return events

    async def _export(
        self, match_id: str, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MatchLog:
        await self._viewer(context, match_id, "")
        board = await self._board_events(match_id, context)
        if not any(is_a(e, platform_events_pb2.MatchEnded) for e in board):
            await _refuse(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                "a match can be exported once it is over (its log holds hidden cards)",
            )
        # Its seeds are revealed just after its last command (a reveal deferred by a service
        # that is down is not waited for beyond this: the log then says what is missing).
        remaining = context.time_remaining()
        wait = REVEAL_WAIT_S if remaining is None else max(0.0, min(REVEAL_WAIT_S, remaining - 1))
        await self._views.wait_until(match_id, _revealed, wait)
        shard = self._shard(match_id)
        try:
            others = [
                *await read_events(shard.events["dice"], match_id),
                *await read_events(shard.events["decks"], match_id),
                *await read_events(self._scoring_events, match_id),
            ]
        except grpc.aio.AioRpcError as error:
            await _forward(context, error)
        return gateway_pb2.MatchLog(match_id=match_id, game=board[0].game, events=[*board, *others])

    async def ExportMatch(
        self, request: gateway_pb2.ExportMatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MatchLog:
        return await self._export(request.match_id, context)

    async def VerifyMatch(
        self, request: gateway_pb2.VerifyMatchRequest, context: grpc.aio.ServicerContext
    ) -> gateway_pb2.MatchVerification:
        log = await self._export(request.match_id, context)
        result = verify_match(list(log.events))
        return gateway_pb2.MatchVerification(
            match_id=request.match_id,
            ok=result.ok,
            checked=result.checked,
            problems=result.problems[:MAX_PROBLEMS],
        )

    async def GetStandings(
        self, request: scoring_pb2.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> scoring_pb2.GetStandingsReply:
        await self._claims(context)  # standings are public, but a bad token is refused
        try:
            bounded("game", request.game, MAX_GAME)
        except TooLong as long:
            await _refuse(context, grpc.StatusCode.INVALID_ARGUMENT, str(long))
        return await _relay(context, self._scoring.GetStandings(request))
