"""Clocks through the real gateway, board and Kafka: a bad time control is refused at the
edge; a seat that lets its time run out is recorded as timed out (ClockExpired, then its
policy's consequence, in one transaction on board.events), and the views show it; a move
made just before the deadline is accepted and no timeout is recorded for it."""

from __future__ import annotations

import time

import grpc
import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import match_pb2, platform_events_pb2
from tests.integration.helpers import eventually, topic_events

pytestmark = pytest.mark.integration

#: the shortest bank a live clock allows (services/games/clock.py)
BANK = "live:10s"


def seat_clock(view: match_pb2.MatchView, seat: str) -> match_pb2.SeatClock:
    (found,) = [s for s in view.clock.seats if s.seat == seat]
    return found


def board_events(stack: Stack, match_id: str) -> list[str]:
    return [e.event_type for e in topic_events(stack)["board"].get(match_id, [])]


def finished_view(client: GatewayClient, match_id: str) -> match_pb2.MatchView:
    def probe() -> match_pb2.MatchView | None:
        view = client.view(match_id, "", wait_ms=1000)
        return view if view.status == match_pb2.MATCH_STATUS_FINISHED else None

    return eventually(probe, timeout=60.0)


def test_a_bad_time_control_is_refused_at_the_edge(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    try:
        for options, reason in (
            ({"clock": "ten minutes"}, "live:BANK+INCREMENT"),
            ({"clock": "turn:1d", "on_timeout": "pass"}, "not offered for this game"),
        ):
            with pytest.raises(grpc.RpcError) as refused:
                client.create("crashland", ["ann"], options, seat="ann", name="Ann")
            assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert reason in (refused.value.details() or "")
    finally:
        client.close()


def test_a_timeout_is_recorded_and_a_move_just_in_time_wins(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    try:
        match_id = client.create("crashland", ["ann"], {"clock": BANK}, seat="ann", name="Ann")
        view = client.view(match_id, "ann")
        running = seat_clock(view, "ann")
        assert view.clock.control == "live:10s+0s" and running.deadline_ms
        # a move two seconds before the deadline (a margin for a loaded machine's round
        # trip) is accepted, and recorded as the seat's move
        time.sleep(max(0.0, running.deadline_ms / 1000 - time.time() - 2.0))
        action = client.legal(match_id, "ann").actions[0].action
        reply = client.submit(match_id, "ann", action)
        assert reply.version > view.version
        after = client.view(match_id, "ann", min_version=reply.version)
        left = seat_clock(after, "ann")
        assert 0 < left.remaining_ms < 3000 and left.timeouts == 0
        # then the rest of the bank runs out: the forfeit is recorded, after the move
        final = finished_view(client, match_id)
        assert final.end_reason == "ann ran out of time"
        assert dict(final.results) == {"ann": "lost"}
        assert seat_clock(final, "ann").timeouts == 1
        recorded = board_events(stack, match_id)
        assert recorded[-2:] == ["tabletop.v1.ClockExpired", "tabletop.v1.MatchEnded"]
        assert recorded.count("tabletop.v1.ClockExpired") == 1
        assert len(recorded) - 2 == reply.version  # the move's events all came before
    finally:
        client.close()


def test_a_deadline_passed_while_the_board_was_down_fires_after_its_restart(
    stack: Stack,
) -> None:
    """The board rebuilds its deadlines when it loads its matches: a timeout that fell
    while it was stopped is recorded once it is back, with the deadline it had. (A forfeit:
    the match ends, so it appends nothing while other tests count the log.)"""
    client = GatewayClient(stack.addr("gateway"))
    try:
        options = {"clock": BANK, "on_timeout": "forfeit"}
        match_id = client.create("crashland", ["ann"], options, seat="ann", name="Ann")
        deadline_ms = seat_clock(client.view(match_id, "ann"), "ann").deadline_ms
        stack.stop("board")
        time.sleep(max(0.0, deadline_ms / 1000 - time.time() + 0.5))  # (it passes, unseen)
        stack.start("board")
        stack.wait_healthy("board")
        final = finished_view(client, match_id)
        assert final.end_reason == "ann ran out of time"
        recorded = topic_events(stack)["board"][match_id]
        expired = [e for e in recorded if e.event_type == "tabletop.v1.ClockExpired"]
        assert len(expired) == 1 and recorded[-1].event_type == "tabletop.v1.MatchEnded"
        event = platform_events_pb2.ClockExpired()
        assert expired[0].payload.Unpack(event)
        assert (event.seat, event.policy, event.deadline_ms) == ("ann", "forfeit", deadline_ms)
        # recorded after the restart, not before the stop
        assert expired[0].occurred_at.ToMilliseconds() > deadline_ms
    finally:
        client.close()
