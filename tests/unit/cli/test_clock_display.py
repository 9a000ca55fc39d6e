"""The CLI's clocks: each seat's time left, counting down where it runs, in text and JSON."""

from __future__ import annotations

from services.cli.client import clock_data, clock_line
from services.cli.commands.play import _with_clock
from tabletop.v1 import match_pb2


def timed_view() -> match_pb2.MatchView:
    return match_pb2.MatchView(
        game="crashland",
        clock=match_pb2.MatchClock(
            control="live:10m+5s",
            on_timeout="bot",
            since_ms=1_000_000,
            seats=[
                match_pb2.SeatClock(seat="ann", remaining_ms=600_000, deadline_ms=1_600_000),
                match_pb2.SeatClock(seat="bob", remaining_ms=75_000, timeouts=1),
            ],
        ),
    )


def test_a_running_seat_counts_down_to_its_deadline_and_the_others_stand() -> None:
    data = clock_data(timed_view(), now_ms=1_019_000)
    assert data is not None and data["control"] == "live:10m+5s"
    assert data["seats"]["ann"]["remaining_ms"] == 581_000 and data["seats"]["ann"]["running"]
    assert data["seats"]["bob"]["remaining_ms"] == 75_000 and not data["seats"]["bob"]["running"]
    assert clock_line(timed_view(), now_ms=1_019_000) == (
        "clock live:10m+5s (bot)  ann ▶ 9:41  bob 1:15 (1 timeouts)"
    )


def test_long_times_read_in_hours_and_days_and_never_below_zero() -> None:
    view = timed_view()
    view.clock.seats[0].deadline_ms = 1_000_000 + 2 * 86_400_000 + 3 * 3_600_000
    assert "ann ▶ 2d03h" in clock_line(view, now_ms=1_000_000)
    assert "ann ▶ 0:00" in clock_line(view, now_ms=10**13)


def test_an_untimed_view_shows_no_clock() -> None:
    assert clock_data(match_pb2.MatchView()) is None and clock_line(match_pb2.MatchView()) == ""


def test_play_puts_the_clock_flags_in_the_options() -> None:
    assert _with_clock({"variant": "solo"}, "turn:24h", "bot") == {
        "variant": "solo",
        "clock": "turn:24h",
        "on_timeout": "bot",
    }
    assert _with_clock({}, "", "") == {}
