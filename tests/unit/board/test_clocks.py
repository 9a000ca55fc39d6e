"""The board's clocks over in-memory fakes and an injected wall clock: a timeout is recorded
(ClockExpired with its policy's consequence, in one append) only once its deadline has
passed; a command that took the match's lock first wins the race and the timeout records
nothing; deadlines survive eviction and recovery; the clock replayed from the log is the
board's."""

from __future__ import annotations

import asyncio
import time

import grpc
import pytest

from services.adapters.folding import fold_board_events
from services.adapters.game_adapter import messages_for
from services.adapters.views import clock_message, from_update, update_bytes, view
from services.board import service
from services.board.lobby import LobbyService
from services.board.matches import Matches
from services.common.holding import Holding
from services.common.snapshots import Snapshot, pack
from services.games.drillit.actions import EndTurn
from services.games.match import Match
from tabletop.v1 import board_pb2, games_pb2, match_pb2, platform_events_pb2
from tests.unit.board.test_board_service import MATCH, Board, _creator_sits, refused
from tests.unit.board.test_idle_matches_leave_memory import Clock
from tests.unit.fakes import context

EXPIRED = "tabletop.v1.ClockExpired"
ENDED = "tabletop.v1.MatchEnded"


class WallClock:
    """The board's ``now``: the real time unless a test moves it on."""

    def __init__(self) -> None:
        self.ahead = 0.0

    def __call__(self) -> float:
        return time.time() + self.ahead


async def timed(
    options: dict[str, str],
    game: str = "crashland",
    players: tuple[str, ...] = ("ann",),
    holding: Holding | None = None,
) -> tuple[Board, WallClock]:
    board = Board()
    if holding is not None:  # (which matches it lets go of while idle)
        board.service.matches = Matches(holding)
    wall = WallClock()
    board.service.now = wall
    request = board_pb2.CreateMatchRequest(
        game=game,
        players=players,
        match_id=MATCH,
        command_id=f"create:{MATCH}",
        options=options,
        seated=_creator_sits(),
    )
    await board.service.CreateMatch(request, context())
    return board, wall


def held(board: Board) -> Match:
    match = board.service.matches.get(MATCH)
    assert match is not None
    return match


def types(board: Board) -> list[str]:
    return [e.event_type for e in board.event_log.envelopes]


def past_deadline(board: Board, wall: WallClock, match: Match | None = None) -> None:
    """Move the wall clock a second past the match's earliest deadline."""
    found = (match or held(board)).clock
    assert found is not None
    earliest = found.earliest()
    assert earliest is not None
    wall.ahead = earliest[0] - wall() + wall.ahead + 1


async def test_a_bad_time_control_is_refused_and_nothing_is_appended() -> None:
    board = Board()
    request = board_pb2.CreateMatchRequest(
        game="crashland",
        players=["ann"],
        match_id=MATCH,
        command_id="create:x",
        options={"clock": "forever"},
    )
    code, reason = await refused(board.service.CreateMatch(request, context()))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_TIME_CONTROL")
    assert board.event_log.envelopes == []


async def test_the_clock_options_are_recorded_and_the_game_plays_timed() -> None:
    board, _ = await timed({"clock": "live:1m+2s"})
    created = fold_board_events(board.event_log.envelopes[:1])
    assert created.options == {"clock": "live:1m+2s"}
    match = held(board)
    assert match.clock is not None and match.clock.awaited == ("ann",)
    assert await board.legal()


async def test_nothing_is_recorded_before_the_deadline() -> None:
    board, wall = await timed({"clock": "live:1m+2s"})
    before = len(board.event_log.envelopes)
    wall.ahead = 50.0
    assert await board.service.expire_due() == (0, 0)
    assert len(board.event_log.envelopes) == before


async def test_a_forfeit_is_recorded_with_the_match_ending_in_one_append() -> None:
    board, wall = await timed({"clock": "live:1m+2s"})
    appends = board.event_log.appends
    past_deadline(board, wall)
    assert await board.service.expire_due() == (1, 0)
    assert types(board)[-2:] == [EXPIRED, ENDED] and board.event_log.appends == appends + 1
    replayed = fold_board_events(board.event_log.envelopes)
    assert replayed.finished and replayed.results == {"ann": "lost"}
    assert replayed.end_reason == "ann ran out of time"
    assert replayed.clock is not None and replayed.clock.timeouts == {"ann": 1}
    # over: no deadline left, and a late command is refused with nothing appended
    assert board.service.next_deadline() is None
    action = board_pb2.SubmitActionRequest(match_id=MATCH, player="ann", command_id="late")
    code, reason = await refused(board.service.SubmitCommand(action, context()))
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER")
    assert types(board)[-1] == ENDED


async def test_a_bot_move_is_recorded_for_the_seat_and_the_match_plays_on() -> None:
    board, wall = await timed({"clock": "turn:1h", "on_timeout": "bot"})
    version = held(board).version
    past_deadline(board, wall)
    assert await board.service.expire_due() == (1, 0)
    recorded = board.event_log.envelopes[version:]
    assert recorded[0].event_type == EXPIRED and len(recorded) > 1
    assert all(e.correlation_id == f"timeout:{MATCH}:{version}" for e in recorded)
    match = held(board)
    assert not match.finished and match.clock is not None
    # the seat's next move has a new hour from the bot's move
    assert match.clock.deadline("ann") == match.clock.since + 3600
    assert clock_message(fold_board_events(board.event_log.envelopes)) == clock_message(match)


async def test_a_pass_ends_the_turn_where_the_rules_have_one() -> None:
    board, wall = await timed(
        {"clock": "turn:1h", "on_timeout": "pass"}, game="drillit", players=("ann", "bob")
    )
    lobby = LobbyService(board.service)
    await lobby.JoinSeat(
        board_pb2.JoinSeatRequest(
            match_id=MATCH, seat="bob", display_name="Bob", join_id="j-2", by="free"
        ),
        context(),
    )
    # the opening choices have no pass (the bot makes them) until a seat may end its turn
    for _ in range(20):
        match = held(board)
        assert match.clock is not None
        earliest = match.clock.earliest()
        assert earliest is not None
        seat = earliest[1]
        if any(isinstance(a, EndTurn) for a in match.game.legal_actions(match.state, seat)):
            break
        past_deadline(board, wall)
        assert await board.service.expire_due() == (1, 0)
    else:
        raise AssertionError("no seat could end its turn")
    ending_turn, _ = match.game.decide_folded(match.state, seat, EndTurn())
    version = match.version
    past_deadline(board, wall)
    assert await board.service.expire_due() == (1, 0)
    recorded = board.event_log.envelopes[version:]
    expired = platform_events_pb2.ClockExpired()
    assert recorded[0].payload.Unpack(expired) and (expired.seat, expired.policy) == (seat, "pass")
    messages = messages_for("drillit")
    played = [messages.event_from_any(e.payload) for e in recorded[1 : 1 + len(ending_turn)]]
    assert played == list(ending_turn)


async def test_a_command_holding_the_lock_wins_the_race_with_its_timeout() -> None:
    """The command reached the board before the timer fired: it holds the match's lock
    while its events are appended; the timeout, due meanwhile, waits for the lock, sees
    the version moved and records nothing."""
    board, wall = await timed({"clock": "live:1m+2s"})
    action = (await board.legal())[0]
    appended = asyncio.Event()
    release = asyncio.Event()

    async def stall() -> None:
        appended.set()
        await release.wait()

    board.event_log.while_appending = stall
    command = asyncio.create_task(board.submit("in-time", action))
    await appended.wait()  # the command is mid-append, under the lock
    past_deadline(board, wall)
    timer = asyncio.create_task(board.service.expire_due())
    await asyncio.sleep(0)  # the timer now waits for the lock
    assert not timer.done()
    release.set()
    reply = await command
    assert reply.version > 0 and not reply.duplicate
    assert await timer == (0, 0)
    assert EXPIRED not in types(board)
    # the move's own new deadline is noted
    match = held(board)
    assert match.clock is not None
    assert board.service.next_deadline() == match.clock.deadline("ann")


async def test_a_command_after_the_recorded_timeout_meets_its_consequence() -> None:
    """The timeout took the lock first: the command then runs against the match the
    timeout left (a forfeit: over), refused with nothing of it appended."""
    board, wall = await timed({"clock": "live:1m+2s"})
    action = (await board.legal())[0]
    past_deadline(board, wall)
    timer = asyncio.create_task(board.service.expire_due())
    await asyncio.sleep(0)
    late = asyncio.create_task(board.submit("late", action))
    assert await timer == (1, 0)
    code, reason = await refused(late)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "MATCH_OVER")
    assert types(board)[-1] == ENDED


async def test_an_evicted_matchs_deadline_still_fires() -> None:
    idle = Clock()
    board, wall = await timed({"clock": "turn:1d"}, holding=Holding(1.0, clock=idle))
    idle.now += 2  # unused for longer than the board holds an idle match
    assert board.service.evict_idle() == 1
    assert board.service.matches.get(MATCH) is None
    deadline = board.service.next_deadline()
    assert deadline is not None
    wall.ahead = deadline - wall() + 1
    assert await board.service.expire_due() == (1, 0)
    assert types(board)[-1] == ENDED


async def test_an_evicted_match_leaves_nothing_with_chance_and_reveals_only_its_seeds() -> None:
    """The services a match committed seeds with leave memory with it, and are recalled
    from its commitments when it is read back: its end reveals only the decks' seed
    (Crashland rolls no dice)."""
    idle = Clock()
    board, wall = await timed({"clock": "turn:1d"}, holding=Holding(1.0, clock=idle))
    idle.now += 2
    assert board.service.evict_idle() == 1
    assert MATCH not in board.service._chance._committed
    deadline = board.service.next_deadline()
    assert deadline is not None
    wall.ahead = deadline - wall() + 1
    assert await board.service.expire_due() == (1, 0)  # (the match read back to time out)
    assert types(board)[-1] == ENDED
    assert not await board.service.reveals.drain_once()
    assert "Reveal" in board.decks.calls and "Reveal" not in board.dice.calls


async def test_deadlines_are_rebuilt_when_a_board_recovers_its_matches() -> None:
    board, wall = await timed({"clock": "turn:1d"})
    recovered = Board()
    recovered.service.now = wall
    recovered.service.begin_recovery()
    for envelope in board.event_log.envelopes:
        recovered.service.apply(envelope)
    recovered.service.end_recovery()
    assert recovered.service.next_deadline() == board.service.next_deadline()


async def test_the_clock_shows_in_the_views_and_the_replay_agrees() -> None:
    board, _ = await timed({"clock": "live:1m+2s"})
    await board.submit("c1", (await board.legal())[0])
    match = held(board)
    shown = clock_message(match)
    assert shown is not None and shown.control == "live:1m+2s"
    (seat,) = shown.seats
    assert seat.seat == "ann" and 0 < seat.remaining_ms <= 62_000
    assert clock_message(fold_board_events(board.event_log.envelopes)) == shown
    # a gateway's match, decoded from the update the board sent, shows the same clocks
    update = match_pb2.ViewUpdate.FromString(update_bytes(match))
    assert clock_message(from_update(update, match.state)) == shown
    assert view(match, "ann").clock == shown


async def test_a_move_the_rules_refuse_for_a_timed_out_seat_forfeits_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The match never waits forever on a bot that chose wrong: the seat forfeits."""
    board, wall = await timed({"clock": "turn:1h", "on_timeout": "bot"})
    monkeypatch.setattr(service, "_move_for", lambda *_: games_pb2.GameAction())
    past_deadline(board, wall)
    assert await board.service.expire_due() == (1, 0)
    assert types(board)[-2:] == [EXPIRED, ENDED]
    assert fold_board_events(board.event_log.envelopes).results == {"ann": "lost"}


async def test_an_evicted_matchs_deadline_survives_a_restart_from_a_snapshot() -> None:
    """The snapshot holds only the matches in memory; an evicted turn-based match's
    deadline is kept beside them, and fires after the restart."""
    idle = Clock()
    board, wall = await timed({"clock": "turn:1d"}, holding=Holding(1.0, clock=idle))
    idle.now += 2  # unused for longer than the board holds an idle match
    assert board.service.evict_idle() == 1
    deadline = board.service.next_deadline()
    assert deadline is not None
    parts = board.writer.snapshot() + board.service.snapshot()
    snapshot = Snapshot("s-1", 0, pack(parts))

    restarted = Board()
    restarted.service.now = wall
    restarted.event_log.envelopes = board.event_log.envelopes  # the same log
    restarted.service.begin_recovery()
    restarted.service.restore(snapshot)
    restarted.writer.restore_snapshot(snapshot, restarted.service.apply)
    tail = restarted.event_log.records(restarted.writer.tail_starts())
    await restarted.writer.restore(tail, restarted.service.apply)
    restarted.service.end_recovery()
    assert restarted.service.matches.get(MATCH) is None  # not in memory
    assert restarted.service.next_deadline() == deadline
    wall.ahead = deadline - wall() + 1
    assert await restarted.service.expire_due() == (1, 0)
    assert types(restarted)[-2:] == [EXPIRED, ENDED]


async def test_a_timeout_the_log_could_not_take_is_recorded_at_the_next_round() -> None:
    board, wall = await timed({"clock": "live:1m+2s"})
    before = len(board.event_log.envelopes)
    past_deadline(board, wall)
    board.event_log.down = True
    assert await board.service.expire_due() == (0, 1)
    assert len(board.event_log.envelopes) == before and not held(board).finished
    board.event_log.down = False
    assert await board.service.expire_due() == (1, 0)
    assert types(board)[before:] == [EXPIRED, ENDED]
