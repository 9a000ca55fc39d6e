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

A holder may give its seat up (``LeaveSeat``: SeatLeft): from that event on none of the
seat's tokens acts or sees it, and nobody takes it until it is handed over
(``HandOverSeat``: SeatHandedOver) to a bot at a level (the bots service plays the seats
with a level) or opened for a new player, who joins it as a free seat. Both are board
events, so every player of the match sees them in its history. The creator, or a player
who holds another seat, hands a seat over (a match whose creator left does not stall); a
seat a player holds, a bot's, or one never joined is not handed over, nor the seat of a
solo match (services/games/handover.py says why, and what a new holder sees per game).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.message import Message

from services.board.matches import fold
from services.board.service import SEAT_REJOINED, BoardService, _abort, view_update
from services.common.logging import get_logger
from services.games.commands import Refusal, RefusalKind
from services.games.handover import SOLO_REASON
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
#: what a seat may be handed over to
HAND_OVER_TO = ("bot", "open")
SEAT_LEFT = (
    "this seat's holder left it; the match's creator or another of its players hands it "
    "over (to a bot, or open for a new player)"
)


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


def _check_vacated(match: Match, seat: str, by: str, held: list[str]) -> None:
    """A seat its holder left is joined by no one until it is handed over; an open one by
    a player (its session) who holds no other seat of the match: one person seeing two
    seats' hidden information mid-game is what a hand-over must not make."""
    vacated = match.vacated.get(seat)
    if vacated == "left":
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "SEAT_LEFT", SEAT_LEFT)
    if vacated != "open":
        return
    if by != "free":
        raise Refusal(
            RefusalKind.PERMISSION_DENIED,
            "SEAT_OPEN_TO_PLAYERS",
            "this seat was opened for a new player: join it signed in as a player",
        )
    if held:
        raise Refusal(
            RefusalKind.FAILED_PRECONDITION,
            "ONE_SEAT_EACH",
            "you hold another seat of this match; a seat handed over goes to someone else",
        )


def _left(match: Match, request: board_pb2.BoardLeaveSeatRequest) -> Message:
    """The seat's holder (its newest token, or the player holding it) gives it up."""
    seat = request.seat
    if seat in match.vacated:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "SEAT_LEFT", "this seat was left already")
    if seat in match.bot_levels:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "BOT_SEAT", "a bot plays this seat")
    if seat not in match.seats:
        raise Refusal(
            RefusalKind.FAILED_PRECONDITION, "SEAT_NOT_HELD", "nobody holds this seat to leave it"
        )
    if request.seat_token:
        if match.seat_tokens.get(seat) != request.seat_token:
            raise Refusal(RefusalKind.PERMISSION_DENIED, "SEAT_REJOINED", SEAT_REJOINED)
    elif not request.player_id or match.holders.get(seat) != request.player_id:
        raise Refusal(
            RefusalKind.PERMISSION_DENIED, "NOT_YOUR_SEAT", "only its holder leaves a seat"
        )
    return platform_events_pb2.SeatLeft(
        seat=seat, player_id=match.holders.get(seat, ""), reason="left"
    )


def _handed_over(match: Match, request: board_pb2.BoardHandOverSeatRequest) -> Message:
    """An abandoned seat, given on by the creator or a player holding another seat."""
    seat, player = request.seat, request.player_id
    if request.to not in HAND_OVER_TO or (request.to == "bot") != bool(request.level):
        raise Refusal(
            RefusalKind.INVALID_ARGUMENT,
            "MALFORMED_HAND_OVER",
            "a seat is handed over to a bot at a level, or opened",
        )
    if not player or (player != match.creator and player not in match.holders.values()):
        raise Refusal(
            RefusalKind.PERMISSION_DENIED,
            "NOT_AT_THE_TABLE",
            "only the match's creator or one of its seated players hands a seat over",
        )
    if len(match.players) == 1:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "SOLO_MATCH", SOLO_REASON)
    state = match.seat_state(seat)
    if state == "held":
        raise Refusal(
            RefusalKind.FAILED_PRECONDITION,
            "SEAT_HELD",
            "a player holds this seat; only its holder can give it up",
        )
    if state == "bot":
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "BOT_SEAT", "a bot plays this seat")
    if not state:
        raise Refusal(
            RefusalKind.FAILED_PRECONDITION,
            "SEAT_FREE",
            "nobody has joined this seat yet: it is free to join",
        )
    if state == "open" and request.to == "open":
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "SEAT_OPEN", "this seat is open already")
    return platform_events_pb2.SeatHandedOver(
        seat=seat, to=request.to, level=request.level, by=player
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
                free = [
                    p
                    for p in match.players
                    if (p not in match.seats and p not in match.bots)
                    or match.vacated.get(p) == "open"
                ]
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
            _check_vacated(match, seat, by, held)
            holder = match.holders.get(seat, "")
            if seat in held:
                by = "holder"
            elif (
                seat in match.seats
                and seat not in match.vacated
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

    # -- seats given up and handed over ----------------------------------------------------
    async def LeaveSeat(
        self, request: board_pb2.BoardLeaveSeatRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SeatChangeReply:
        try:
            return await self._change(request.match_id, request.command_id, _left, request)
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused

    async def HandOverSeat(
        self, request: board_pb2.BoardHandOverSeatRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SeatChangeReply:
        try:
            return await self._change(request.match_id, request.command_id, _handed_over, request)
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused

    async def _change(
        self,
        match_id: str,
        command_id: str,
        decide: Callable[[Match, Any], Message],
        request: Any,
    ) -> board_pb2.SeatChangeReply:
        """One seat event ``decide`` makes of the request (or a Refusal), appended and
        folded under the match's lock; a retried command id appends nothing."""
        if not command_id:
            raise Refusal(RefusalKind.INVALID_ARGUMENT, "MALFORMED_CHANGE", "a change needs an id")
        async with self._board.writer.lock(match_id):
            match = await self._board.find(match_id)
            if match is None:
                raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_MATCH", "no such match")
            if command_id in match.replies:
                return board_pb2.SeatChangeReply(version=match.replies[command_id].version)
            if match.finished:
                raise Refusal(RefusalKind.FAILED_PRECONDITION, "MATCH_OVER", "the match is over")
            if request.seat not in match.players:
                raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_SEAT", "no such seat in this match")
            event = decide(match, request)
            envelopes = await self._board.store.append_payloads(
                match.match_id, match.game, [event], command_id, "lobby"
            )
            for envelope in envelopes:
                fold(match, envelope)
            return board_pb2.SeatChangeReply(version=match.version, view_update=view_update(match))

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
