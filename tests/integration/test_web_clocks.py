"""Clocks on the match page, in a real browser against the real stack: a time control set
in the lobby (a bad one refused with the gateway's reason), and each seat's clock shown,
the running one counting down."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.test_web_browser import browser, new_page, take_seat, web

pytestmark = pytest.mark.integration
SEATS = ("ann", "bob")
__all__ = ["browser", "web"]  # the fixtures, as test_web_browser defines them


def create_timed(page: Any, web: str, clock: str, on_timeout: str) -> None:
    page.goto(web)
    page.get_by_label("Game").select_option("drillit")
    page.get_by_label("Seats, in turn order (comma-separated)").fill("ann, bob")
    page.get_by_label("Clock (optional): live:BANK+INCREMENT or turn:TIME per move").fill(clock)
    page.get_by_label("When a seat's time runs out").select_option(on_timeout)
    page.get_by_role("button", name="Create the match").click()


def test_a_bad_clock_is_refused_with_its_reason(browser: Any, web: str) -> None:
    page = new_page(browser)
    create_timed(page, web, "ten minutes", "forfeit")
    page.wait_for_function(
        "() => document.querySelector('#status').textContent.includes('Could not create')"
    )
    assert "live:BANK+INCREMENT" in page.inner_text("#status")
    page.context.close()


def test_each_seats_clock_counts_down_and_a_timeout_ends_the_match(browser: Any, web: str) -> None:
    # the shortest bank, and a forfeit: the match ends within the test (a match left to
    # time out later would append while other tests count the log)
    creator = new_page(browser)
    create_timed(creator, web, "live:10s", "forfeit")
    creator.get_by_role("button", name="Play as ann").wait_for()
    match_id = creator.get_by_label("Match id", exact=True).input_value()
    pages = {seat: new_page(browser) for seat in ("ann", "bob")}
    for seat, page in pages.items():
        take_seat(page, web, match_id, seat)
    page = pages["ann"]
    # both seats joined: the match started, and the seat to act has its clock running
    page.wait_for_selector("#match-clock .seat-clock.running")
    assert page.inner_text("#match-clock").startswith("Clock live:10s+0s (on timeout: forfeit):")
    # (each name isolated for bidirectional text: FSI … PDI)
    shown = [
        page.inner_text(f'#match-clock [data-seat="{s}"]').split()[0].strip("\u2068\u2069")
        for s in SEATS
    ]
    assert shown == list(SEATS)
    running = page.locator("#match-clock .seat-clock.running").first
    before = running.inner_text()
    assert "▶ 0:" in before
    # the page counts it down by itself, with no new view
    page.wait_for_function(
        "t => document.querySelector('#match-clock .seat-clock.running').textContent !== t",
        arg=before,
    )
    # nobody moves: the seat's time runs out, and the page shows how the match ended
    page.wait_for_function(
        "() => document.querySelector('#match-info').textContent.includes('ran out of time')",
        timeout=30_000,
    )
    ended = page.inner_text("#match-info")
    assert "ann lost" in ended and "bob lost" in ended  # a team game: the team lost
    assert "1 timeouts" in page.inner_text("#match-clock")
    for opened in (creator, *pages.values()):
        assert not opened.errors
        opened.context.close()
