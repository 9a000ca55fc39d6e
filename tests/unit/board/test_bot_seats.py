"""Seats reserved for bots (a bot level, MatchLobby.bot_levels) are the bots service's alone
(services/board/lobby.py): the ``bots`` claim takes them, again after a replica took them
before it, and no other seat; no other claim takes them, not even the creator's. A refused
join appends nothing. Given a lobby, when a claim, then events or a refusal."""

from __future__ import annotations

import grpc
import pytest

from services.board.lobby import LobbyService
from tabletop.v1 import board_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board
from tests.unit.fakes import Aborted, context


async def _lobby() -> tuple[Board, LobbyService]:
    board = Board()
    await board.service.CreateMatch(
        board_pb2.CreateMatchRequest(
            game="drillit",
            players=["ann", "bob", "cy"],
            match_id=MATCH,
            command_id=f"create:{MATCH}",
            lobby=platform_events_pb2.MatchLobby(
                creator="c", bots=["bob", "cy"], bot_levels={"bob": "hard"}
            ),
        ),
        context(),
    )
    return board, LobbyService(board.service)


async def _join(lobby: LobbyService, seat: str, by: str, join_id: str) -> board_pb2.JoinSeatReply:
    return await lobby.JoinSeat(
        board_pb2.JoinSeatRequest(
            match_id=MATCH, seat=seat, display_name=seat, join_id=join_id, by=by
        ),
        context(),
    )


def _joins(board: Board) -> list[tuple[str, str]]:
    out = []
    for envelope in board.event_log.envelopes:
        if envelope.event_type == "tabletop.v1.SeatJoined":
            joined = platform_events_pb2.SeatJoined()
            envelope.payload.Unpack(joined)
            out.append((joined.seat, joined.by))
    return out


@pytest.mark.parametrize("by", ["free", "creator", "holder"])
async def test_nobody_but_the_bots_service_takes_a_seat_reserved_for_a_bot(by: str) -> None:
    board, lobby = await _lobby()
    with pytest.raises(Aborted) as refused:
        await _join(lobby, "bob", by, "j1")
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "SEAT_FOR_A_BOT",
    )
    assert _joins(board) == []


@pytest.mark.parametrize("seat", ["ann", "cy"])
async def test_the_bots_service_takes_no_other_seat(seat: str) -> None:
    """Not a person's seat, nor a bot seat without a level (its creator plays that one)."""
    board, lobby = await _lobby()
    with pytest.raises(Aborted) as refused:
        await _join(lobby, seat, "bots", "j1")
    assert (refused.value.code, refused.value.reason) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_A_BOT_SEAT",
    )
    assert _joins(board) == []


async def test_the_bots_service_takes_its_seat_and_takes_it_again() -> None:
    """A restarted replica, or another one, joins the seat again: the newest token acts."""
    board, lobby = await _lobby()
    first = await _join(lobby, "bob", "bots", "j1")
    second = await _join(lobby, "bob", "bots", "j2")
    assert first.seat == second.seat == "bob" and second.version > first.version
    assert _joins(board) == [("bob", "bots"), ("bob", "bots")]
    match = await board.service.find(MATCH)
    assert match is not None
    assert match.superseded("bob", "j1") and not match.superseded("bob", "j2")


async def test_a_free_join_without_a_seat_never_lands_on_a_bot_seat() -> None:
    _, lobby = await _lobby()
    joined = await _join(lobby, "", "free", "j1")
    assert joined.seat == "ann"


async def test_the_creator_cannot_sit_at_a_reserved_seat_with_the_create() -> None:
    board = Board()
    with pytest.raises(Aborted) as refused:
        await board.service.CreateMatch(
            board_pb2.CreateMatchRequest(
                game="drillit",
                players=["ann", "bob"],
                match_id=MATCH,
                command_id=f"create:{MATCH}",
                lobby=platform_events_pb2.MatchLobby(bots=["bob"], bot_levels={"bob": "easy"}),
                seated=platform_events_pb2.SeatJoined(seat="bob", join_id="j", by="creator"),
            ),
            context(),
        )
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert board.event_log.envelopes == []
