"""tabletop.v1.Lobby on the board: seat joins as board events, and lobbies that close.

Why here: the board is already the single writer of each match, so two gateway replicas
racing for the same free seat are serialised by the match's lock, and the join is a fact
in board.events that every reader (board recovery, the projector's summaries, hence every
gateway replica) folds the same way after any restart. The gateway verifies tokens and
says who claims the seat (``player_id``) and how (``by``); the board decides whether that
claim holds. A seat is held by the player who joined it (``Match.holders``): that player
joins it again from any device; no other player, the creator included, ever takes it.

A match still in its lobby (not every seat joined once) closes ``open_s`` seconds after
its last seat event (MatchLobby.open_s, the gateway's TABLETOP_GATEWAY_LOBBY_TTL_S): the
board appends its end (``MatchEnded.expired``, no results), so the closing is the same
fact for every replica and reader. Each seat event records the lobby's new closing time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

import grpc

from services.board.matches import fold
from services.board.service import BoardService, _abort, view_update
from services.common.logging import get_logger
from services.games.commands import Refusal, RefusalKind
from services.games.match import Match
from tabletop.v1 import board_pb2, board_pb2_grpc, platform_events_pb2

log = get_logger(__name__)

#: how a caller may claim a seat: a free one, one it holds a token for (the only claim on a
#: taken seat), as the creator (a free seat: hot seat, bots its creator plays), or as the
#: bots service ("bots": only a seat reserved for a bot at a level, MatchLobby.bot_levels,
#: which it holds whoever joined it last, so a restarted or another replica takes it again)
CLAIMS = ("free", "holder", "creator", "bots")
#: how often the board looks for lobbies to close
CLOSE_EVERY_S = 5.0
EXPIRED_REASON = "the match never started: its free seats were not taken in time"


def closes_at(match: Match, seat: str, now: float) -> int:
    """The lobby's closing time after ``seat`` is joined at ``now`` (0: it never closes,
    or this join starts the match)."""
    starts = all(p in match.seats or p == seat for p in match.players)
    if starts or match.started or not match.open_s:
        return 0
    return int(now) + match.open_s


def _check_reserved(match: Match, seat: str, by: str) -> None:
    """A seat reserved for the bots service (it has a bot level) is its alone, and it
    takes no other: a person who took a bot's seat would see its hand and play it."""
    reserved = seat in match.bot_levels
    if by == "bots" and not reserved:
        raise Refusal(
            RefusalKind.PERMISSION_DENIED,
            "NOT_A_BOT_SEAT",
            "the bots service plays only seats reserved for bots",
        )
    if by != "bots" and reserved:
        raise Refusal(
            RefusalKind.PERMISSION_DENIED,
            "SEAT_FOR_A_BOT",
            "this seat is reserved for a bot; the bots service plays it",
        )


class LobbyService(board_pb2_grpc.LobbyServicer):
    def __init__(self, board: BoardService, clock: Callable[[], float] = time.time) -> None:
        self._board = board
        self._clock = clock

    async def JoinSeat(
        self, request: board_pb2.JoinSeatRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.JoinSeatReply:
        try:
            return await self._join(request)
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused

    async def _join(self, request: board_pb2.JoinSeatRequest) -> board_pb2.JoinSeatReply:
        if request.by not in CLAIMS or not request.join_id:
            raise Refusal(
                RefusalKind.INVALID_ARGUMENT, "MALFORMED_JOIN", "a join needs a claim and an id"
            )
        async with self._board.writer.lock(request.match_id):
            match = await self._board.find(request.match_id)  # under the lock: see find
            if match is None:
                raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_MATCH", "no such match")
            if match.finished:
                raise Refusal(RefusalKind.FAILED_PRECONDITION, "MATCH_OVER", "the match is over")
            seat, player, by = request.seat, request.player_id, request.by
            held = [p for p in match.players if player and match.holders.get(p) == player]
            if not seat and held:
                seat = held[0]  # the player's own seat, again (from another device, say)
            if not seat:
                free = [p for p in match.players if p not in match.seats and p not in match.bots]
                if not free:
                    raise Refusal(
                        RefusalKind.FAILED_PRECONDITION,
                        "NO_FREE_SEAT",
                        "no free seat left; spectate instead",
                    )
                seat = free[0]
            if seat not in match.players:
                raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_SEAT", "no such seat in this match")
            _check_reserved(match, seat, by)
            holder = match.holders.get(seat, "")
            if seat in held:
                by = "holder"
            elif (
                seat in match.seats
                and by != "bots"
                and (by != "holder" or (holder and holder != player))
            ):
                # not even the creator's: a host who could take a held seat would read its
                # hand and act for its player
                raise Refusal(
                    RefusalKind.PERMISSION_DENIED,
                    "SEAT_TAKEN",
                    "this seat is taken; only the player who holds it can join it again",
                )
            joined = platform_events_pb2.SeatJoined(
                seat=seat,
                display_name=request.display_name,
                join_id=request.join_id,
                by=by,
                open_until=closes_at(match, seat, self._clock()),
                player_id=holder or player,
            )
            envelopes = await self._board.store.append_payloads(
                match.match_id, match.game, [joined], request.join_id, "lobby"
            )
            for envelope in envelopes:
                fold(match, envelope)
            self._board.schedule(match)  # the last seat joined: the clocks start
            return board_pb2.JoinSeatReply(
                seat=seat,
                version=match.version,
                private=match.private,
                view_update=view_update(match),
            )

    # -- lobbies that close -----------------------------------------------------------------
    async def close_due(self) -> int:
        """End every lobby whose closing time has passed; how many were ended."""
        now = self._clock()
        due = [
            m
            for m in list(self._board.matches)
            if not m.started and not m.finished and m.open_until and m.open_until <= now
        ]
        closed = 0
        for match in due:
            try:
                closed += await self._close(match, now)
            except Refusal as refused:  # the log is unavailable: next round
                log.warning("lobby_not_closed", match_id=match.match_id, reason=refused.code)
        return closed

    async def _close(self, match: Match, now: float) -> int:
        async with self._board.writer.lock(match.match_id):
            # a seat may have been taken while this one waited for the lock
            if match.started or match.finished or not match.open_until or match.open_until > now:
                return 0
            command_id = f"expire:{match.match_id}:{match.version}"
            ended = platform_events_pb2.MatchEnded(reason=EXPIRED_REASON, expired=True)
            envelopes = await self._board.store.append_payloads(
                match.match_id, match.game, [ended], command_id, "lobby"
            )
            for envelope in envelopes:
                fold(match, envelope)
            self._board.ended(match, command_id)
            log.info("lobby_closed", match_id=match.match_id)
            return 1

    async def run(self, every_s: float = CLOSE_EVERY_S) -> None:
        """Close due lobbies until cancelled."""
        while True:
            await asyncio.sleep(every_s)
            try:
                await self.close_due()
            except Exception:  # one bad round stops nothing
                log.exception("lobby_closing_failed")
