"""tabletop.v1.Lobby on the board: seat joins as board events.

Why here: the board is already the single writer of each match, so two gateway replicas
racing for the same free seat are serialised by the match's lock, and the join is a fact
in board.events that every reader (board recovery, the projector's summaries, hence every
gateway replica) folds the same way after any restart. The gateway verifies tokens and
says how the caller claims the seat (``by``); the board decides whether that claim holds.
"""

from __future__ import annotations

import grpc

from services.board.matches import fold
from services.board.service import BoardService, _abort, view_update
from services.games.commands import Refusal, RefusalKind
from tabletop.v1 import board_pb2, board_pb2_grpc, platform_events_pb2

#: how a caller may claim a seat: a free one, one it holds a token for, or as the creator
CLAIMS = ("free", "holder", "creator")


class LobbyService(board_pb2_grpc.LobbyServicer):
    def __init__(self, board: BoardService) -> None:
        self._board = board

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
        match = await self._board.find(request.match_id)
        if match is None:
            raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_MATCH", "no such match")
        async with self._board.writer.lock(request.match_id):
            if match.finished:
                raise Refusal(RefusalKind.FAILED_PRECONDITION, "MATCH_OVER", "the match is over")
            seat = request.seat
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
            if request.by == "free" and seat in match.seats:
                raise Refusal(
                    RefusalKind.PERMISSION_DENIED,
                    "SEAT_TAKEN",
                    "this seat is taken; only its token or the match's creator can re-join it",
                )
            joined = platform_events_pb2.SeatJoined(
                seat=seat, display_name=request.display_name, join_id=request.join_id, by=request.by
            )
            envelopes = await self._board.store.append_payloads(
                match.match_id, match.game, [joined], request.join_id, "lobby"
            )
            for envelope in envelopes:
                fold(match, envelope)
            return board_pb2.JoinSeatReply(
                seat=seat,
                version=match.version,
                private=match.private,
                view_update=view_update(match),
            )
