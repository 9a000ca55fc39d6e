"""A match nobody joins closes within minutes (services/board/lobby.py): its board appends
its end (MatchEnded.expired, no results) once its lobby time has passed since its last
seat event; a join moves that time on, a match with every seat joined has started and never
closes, and a lobby time of 0 never closes. Given events, when time passes, then events."""

from __future__ import annotations

import time

from services.adapters.folding import fold_board_events
from services.board.lobby import EXPIRED_REASON, LobbyService
from services.projector.folder import WHOLE, ProjectionFolder
from tabletop.v1 import board_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import context

OPEN_S = 300


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


async def _lobby(open_s: int = OPEN_S) -> tuple[Board, LobbyService, Clock]:
    board = Board()
    await board.service.CreateMatch(
        board_pb2.CreateMatchRequest(
            game="drillit",
            players=["ann", "bob"],
            match_id=MATCH,
            command_id=f"create:{MATCH}",
            lobby=platform_events_pb2.MatchLobby(creator="c", open_s=open_s),
        ),
        context(),
    )
    clock = Clock()  # the board recorded the closing time from its own clock, just before
    return board, LobbyService(board.service, clock), clock


async def _join(lobby: LobbyService, seat: str) -> board_pb2.JoinSeatReply:
    return await lobby.JoinSeat(
        board_pb2.JoinSeatRequest(
            match_id=MATCH, seat=seat, display_name=seat, join_id=f"j-{seat}", by="free"
        ),
        context(),
    )


def _ended(board: Board) -> list[platform_events_pb2.MatchEnded]:
    out = []
    for envelope in board.event_log.envelopes:
        if envelope.event_type == "tabletop.v1.MatchEnded":
            ended = platform_events_pb2.MatchEnded()
            envelope.payload.Unpack(ended)
            out.append(ended)
    return out


async def test_a_lobby_nobody_joins_closes_after_its_time_with_a_recorded_end() -> None:
    board, lobby, clock = await _lobby()
    clock.now += OPEN_S - 2
    assert await lobby.close_due() == 0
    clock.now += 3
    assert await lobby.close_due() == 1
    [ended] = _ended(board)
    assert ended.expired and ended.reason == EXPIRED_REASON and not ended.results
    match = fold_board_events(board.event_log.envelopes)
    assert match.finished and not match.started and not match.results
    assert await lobby.close_due() == 0  # once
    # every reader sees it over: the projector's summary, as the gateways list it
    folder = ProjectionFolder()
    for envelope in board.event_log.envelopes:
        folder.fold(envelope)
    assert folder.match(MATCH).finished


async def test_a_join_moves_the_closing_time_on() -> None:
    board, lobby, clock = await _lobby()
    clock.now += 200
    await _join(lobby, "ann")
    clock.now += OPEN_S - 1  # 499 s after the create, 299 after the join
    assert await lobby.close_due() == 0
    clock.now += 2
    assert await lobby.close_due() == 1
    assert fold_board_events(board.event_log.envelopes).seats == {"ann": "ann"}


async def test_a_match_with_every_seat_joined_has_started_and_never_closes() -> None:
    board, lobby, clock = await _lobby()
    await _join(lobby, "ann")
    joined = await _join(lobby, "bob")
    match = fold_board_events(board.event_log.envelopes)
    assert match.started and match.open_until == 0
    folder = ProjectionFolder()
    for envelope in board.event_log.envelopes:
        if folder.fold(envelope) == WHOLE:
            pass
    assert folder.match(MATCH).started
    assert joined.version == match.version
    clock.now += 10 * OPEN_S
    assert await lobby.close_due() == 0
    assert _ended(board) == []


async def test_a_lobby_time_of_zero_never_closes() -> None:
    board, lobby, clock = await _lobby(open_s=0)
    clock.now += 100 * OPEN_S
    assert await lobby.close_due() == 0
    assert _ended(board) == []
