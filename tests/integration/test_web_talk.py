"""Table talk on the match page, in a real browser against the real stack: two seats talk
to each other live, a spectator's talk reaches spectators and not the seats while the
match is in play, a refused message says why (and the flood's when to come back), and the
replay shows what had been said by each step."""

from __future__ import annotations

from typing import Any

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tests.integration.test_web_browser import ARTEFACTS, browser, new_page, take_seat, web

pytestmark = pytest.mark.integration
__all__ = ["browser", "web"]  # the fixtures, as test_web_browser defines them


def say(page: Any, text: str) -> None:
    page.get_by_label("Message", exact=True).fill(text)
    page.get_by_label("Message", exact=True).press("Enter")  # Enter posts


def log_lines(page: Any, log: str = "#talk-log") -> list[str]:
    return [str(t) for t in page.locator(f"{log} li").all_inner_texts()]


def wait_line(page: Any, line: str, log: str = "#talk-log") -> None:
    page.wait_for_function(
        "([log, line]) => [...document.querySelectorAll(log + ' li')]"
        ".some(li => li.textContent === line)",
        arg=[log, line],
    )


def test_seats_and_spectators_talk_at_the_table(browser: Any, web: str, stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
    pages = {seat: new_page(browser) for seat in ("ann", "bob")}
    for seat, page in pages.items():
        take_seat(page, web, match_id, seat)
        assert "You talk as " + seat in page.inner_text("#talk-who")
        assert not page.locator("#talk-name").is_visible()  # a seat talks under its name
    watcher = new_page(browser)
    watcher.goto(web)
    watcher.get_by_label("Match id", exact=True).fill(match_id)
    watcher.get_by_role("button", name="Watch as a spectator").click()
    watcher.wait_for_selector("#board-text:not(:empty)", state="attached")

    say(pages["ann"], "I dig the left tunnel, you take the goblin")
    for page in (*pages.values(), watcher):
        wait_line(page, "Ann: I dig the left tunnel, you take the goblin")
    assert pages["ann"].input_value("#talk-text") == ""  # said: the line is cleared
    say(pages["bob"], "ok")
    wait_line(pages["ann"], "Bob: ok")

    watcher.get_by_label("Your name (optional)").fill("Fan")
    say(watcher, "the goblin is behind you")
    wait_line(watcher, "Fan (spectator): the goblin is behind you")
    say(pages["bob"], "after the spectator")
    wait_line(pages["ann"], "Bob: after the spectator")
    # the seats never got the spectator's line, though they got bob's later one
    assert not any("spectator" in line.split(":")[0] for line in log_lines(pages["ann"]))

    # refusals say why, and lose what was typed
    say(pages["ann"], "left\u202etfel")
    pages["ann"].wait_for_selector("#talk-error:not(:empty)")
    assert "printable" in pages["ann"].inner_text("#talk-error")
    assert pages["ann"].input_value("#talk-text") == "left\u202etfel"
    pages["ann"].get_by_label("Message", exact=True).fill("é" * 251)
    assert "left" in pages["ann"].inner_text("#talk-left")  # the counter warns before sending
    # a burst of 5 lines refills at a line a second: under load a fixed number of quick
    # lines may come too slowly to empty it, so lines go on until the flood is refused
    flooded = "document.querySelector('#talk-error').textContent.includes('retry after')"
    for i in range(40):
        say(pages["ann"], f"spam {i}")
        # each line ends said (the box cleared) or refused
        pages["ann"].wait_for_function(
            f"document.querySelector('#talk-text').value === '' || ({flooded})"
        )
        if pages["ann"].evaluate(flooded):
            break
    else:
        pytest.fail("40 lines in a row were never refused as a flood")

    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    pages["bob"].screenshot(path=str(ARTEFACTS / "talk-seat.png"), full_page=True)

    # the replay shows what had been said by each step
    watcher.get_by_role("button", name="Step through the match so far").click()
    watcher.wait_for_selector("#replay-talk li")
    said = log_lines(watcher, "#replay-talk")
    assert said[:3] == [
        "Ann: I dig the left tunnel, you take the goblin",
        "Bob: ok",
        "Fan (spectator): the goblin is behind you",
    ]
    for page in (*pages.values(), watcher):
        assert not page.errors, page.errors
        page.context.close()
    client.close()
