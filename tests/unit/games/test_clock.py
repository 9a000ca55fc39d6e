"""The time control, clause by clause: the options that set it (and the reasons a bad one is
refused), and the clock given recorded commands (time, actor, who is awaited after) → then
each seat's bank, deadline and time left."""

from __future__ import annotations

import pytest

from services.games import clock
from services.games.clock import BadTimeControl, Clock, TimeControl, parse

LIVE_10M_5S = TimeControl(clock.LIVE, bank_s=600, increment_s=5)
TURN_24H = TimeControl(clock.TURN, per_move_s=86400)


# -- the options -----------------------------------------------------------------------------
def test_no_clock_option_is_an_untimed_match() -> None:
    assert parse("crashland", {}) is None


@pytest.mark.parametrize(
    ("text", "control"),
    [
        ("live:10m+5s", LIVE_10M_5S),
        ("live:1h", TimeControl(clock.LIVE, bank_s=3600)),
        ("turn:24h", TURN_24H),
        ("turn:3d", TimeControl(clock.TURN, per_move_s=3 * 86400)),
    ],
)
def test_a_clock_option_reads_as_its_control(text: str, control: TimeControl) -> None:
    assert parse("dungeon_drop", {"clock": text}) == control
    # described as a player reads it, and read back as the same control
    assert parse("dungeon_drop", {"clock": control.describe()}) == control


def test_the_policy_is_forfeit_unless_given() -> None:
    control = parse("drillit", {"clock": "turn:1d", "on_timeout": "pass"})
    assert control is not None and control.on_timeout == clock.PASS
    plain = parse("drillit", {"clock": "turn:1d"})
    assert plain is not None and plain.on_timeout == clock.FORFEIT


@pytest.mark.parametrize(
    ("game", "options", "reason"),
    [
        ("crashland", {"clock": "10 minutes"}, "live:BANK+INCREMENT"),
        ("crashland", {"clock": "live:10000h"}, "between 10s and 6h"),
        ("crashland", {"clock": "live:1s"}, "between 10s and 6h"),
        ("crashland", {"clock": "live:10m+1h"}, "at most 10m a move"),
        ("crashland", {"clock": "turn:30s"}, "between 1m and 14d"),
        ("crashland", {"on_timeout": "bot"}, "needs a clock"),
        # a pass only where the rulebook has one: Crashland's has none
        ("crashland", {"clock": "turn:1d", "on_timeout": "pass"}, "forfeit, bot"),
        ("imperial_miners", {"clock": "turn:1d", "on_timeout": "nap"}, "not offered"),
    ],
)
def test_a_bad_option_is_refused_with_a_reason(
    game: str, options: dict[str, str], reason: str
) -> None:
    with pytest.raises(BadTimeControl) as refused:
        parse(game, options)
    assert reason in str(refused.value)


def test_the_games_options_are_the_rest() -> None:
    options = {"clock": "turn:1d", "on_timeout": "bot", "variant": "solo"}
    assert clock.game_options(options) == {"variant": "solo"}


def test_a_forfeit_loses_for_the_seat_and_for_a_cooperative_team() -> None:
    assert clock.forfeit_results("dungeon_drop", ["ann", "bob", "cy"], "bob") == {
        "ann": "won",
        "bob": "lost",
        "cy": "won",
    }
    assert clock.forfeit_results("drillit", ["ann", "bob"], "bob") == {
        "ann": "lost",
        "bob": "lost",
    }


# -- the live clock ----------------------------------------------------------------------------
def started_live(at: float = 1000.0) -> Clock:
    """Given: a two-seat live match that started at ``at`` with ann to move."""
    ticking = Clock.start(LIVE_10M_5S, ["ann", "bob"])
    ticking.recorded(at, "lobby", ["ann"])
    return ticking


def test_before_any_wait_nothing_is_charged() -> None:
    ticking = started_live()
    assert ticking.banks == {"ann": 600, "bob": 600}
    assert ticking.deadline("ann") == 1600 and ticking.deadline("bob") is None
    assert ticking.earliest() == (1600, "ann")


def test_a_move_charges_its_seat_the_time_taken_and_adds_the_increment() -> None:
    ticking = started_live()
    ticking.recorded(1030.0, "ann", ["bob"])  # ann took 30 s
    assert ticking.banks == {"ann": 575, "bob": 600}
    assert ticking.deadline("bob") == 1630 and ticking.deadline("ann") is None
    assert ticking.remaining("ann", 5000) == 575  # not running: its bank stands


def test_a_seat_moving_again_keeps_its_clock_running() -> None:
    ticking = started_live()
    ticking.recorded(1010.0, "ann", ["ann"])  # a turn of several actions
    assert ticking.banks["ann"] == 595 and ticking.deadline("ann") == 1605


def test_a_chance_outcome_or_a_join_by_someone_else_charges_but_adds_nothing() -> None:
    ticking = started_live()
    ticking.recorded(1100.0, "lobby", ["ann"])  # e.g. a spectator's seat joined again
    assert ticking.banks["ann"] == 500


def test_simultaneous_seats_are_all_charged() -> None:
    ticking = Clock.start(LIVE_10M_5S, ["ann", "bob"])
    ticking.recorded(0.0, "lobby", ["ann", "bob"])
    ticking.recorded(20.0, "ann", ["bob"])
    assert ticking.banks == {"ann": 585, "bob": 580}
    assert ticking.earliest() == (600, "bob")


def test_a_timeout_empties_the_bank_then_the_move_made_for_it_adds_the_increment() -> None:
    ticking = started_live()
    ticking.expired("ann")
    ticking.recorded(1601.0, "ann", ["bob"])  # a bot's move for ann, recorded late by 1 s
    assert ticking.banks["ann"] == 5 and ticking.timeouts == {"ann": 1}


def test_time_left_counts_down_to_the_deadline() -> None:
    ticking = started_live()
    assert ticking.remaining("ann", 1100.0) == 500
    assert ticking.remaining("ann", 9999.0) == 0


def test_controls_are_described_in_their_largest_whole_unit() -> None:
    assert LIVE_10M_5S.describe() == "live:10m+5s"
    assert TURN_24H.describe() == "turn:1d"
    assert TimeControl(clock.LIVE, bank_s=90).describe() == "live:90s+0s"


# -- the turn-based clock ----------------------------------------------------------------------
def test_each_move_has_its_own_time() -> None:
    ticking = Clock.start(TURN_24H, ["ann", "bob"])
    ticking.recorded(0.0, "lobby", ["ann"])
    assert ticking.deadline("ann") == 86400
    ticking.recorded(80000.0, "ann", ["bob"])
    assert ticking.deadline("bob") == 80000 + 86400
    ticking.recorded(90000.0, "bob", ["bob"])  # bob acts again: a new move's time
    assert ticking.deadline("bob") == 90000 + 86400


def test_a_waiting_seat_keeps_its_moves_start_while_another_acts() -> None:
    ticking = Clock.start(TURN_24H, ["ann", "bob"])
    ticking.recorded(0.0, "lobby", ["ann", "bob"])
    ticking.recorded(500.0, "ann", ["ann", "bob"])
    assert ticking.deadline("ann") == 500 + 86400 and ticking.deadline("bob") == 86400
    assert ticking.earliest() == (86400, "bob")


def test_a_finished_match_waits_for_nobody() -> None:
    ticking = Clock.start(TURN_24H, ["ann"])
    ticking.recorded(0.0, "lobby", ["ann"])
    ticking.recorded(10.0, "ann", [])
    assert ticking.earliest() is None
