"""Clocks on the match page, in a real browser against the real stack: a time control set
in the lobby (a bad one refused with the gateway's reason), and each seat's clock shown,
the running one counting down."""

from __future__ import annotations

from typing import Any

import pytest

from tests.integration.test_web_browser import browser, new_page, take_seat, web

pytestmark = pytest.mark.integration
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


def test_each_seats_clock_shows_and_the_running_one_counts_down(browser: Any, web: str) -> None:
    creator = new_page(browser)
    create_timed(creator, web, "live:10m+5s", "pass")
    creator.get_by_role("button", name="Play as ann").wait_for()
    match_id = creator.get_by_label("Match id", exact=True).input_value()
    pages = {seat: new_page(browser) for seat in ("ann", "bob")}
    for seat, page in pages.items():
        take_seat(page, web, match_id, seat)
    page = pages["ann"]
    # both seats joined: the match started, and the seat to act has its clock running
    page.wait_for_selector("#match-clock .seat-clock.running")
    line = page.inner_text("#match-clock")
    assert line.startswith("Clock live:10m+5s (on timeout: pass):")
    assert [
        page.inner_text(f'#match-clock [data-seat="{s}"]').split()[0] for s in ("ann", "bob")
    ] == [
        "ann",
        "bob",
    ]
    running = page.locator("#match-clock .seat-clock.running")
    before = running.inner_text()
    assert "▶ 9:5" in before or "▶ 10:0" in before  # ten minutes, a few seconds gone
    # the page counts it down by itself, with no new view
    page.wait_for_function(
        "t => document.querySelector('#match-clock .seat-clock.running').textContent !== t",
        arg=before,
    )
    for opened in (creator, *pages.values()):
        assert not opened.errors
        opened.context.close()
