"""A seat given up and handed over on the match page, in a real browser against the real
stack: its holder leaves with the Leave button (and watches on as a spectator), another
player at the table opens the seat with the hand-over control, and a new player joins it
from the lobby. Names are isolated for bidirectional text (<bdi>)."""

from __future__ import annotations

from typing import Any

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tests.integration.test_web_browser import browser, new_page, take_seat, web

pytestmark = pytest.mark.integration
__all__ = ["browser", "web"]  # the fixtures, as test_web_browser defines them


def test_a_holder_leaves_a_player_opens_the_seat_and_a_new_player_takes_it(
    browser: Any, web: str, stack: Stack
) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
    ann, bob, cy = (new_page(browser) for _ in range(3))
    take_seat(ann, web, match_id, "ann")
    take_seat(bob, web, match_id, "bob")
    # names are shown isolated
    ann.wait_for_selector("#match-seats bdi")
    assert ann.locator("#match-info bdi").first.inner_text() == "ann"

    bob.once("dialog", lambda dialog: dialog.accept())
    bob.get_by_role("button", name="Leave seat bob").click()
    bob.wait_for_function(
        "() => document.querySelector('#match-info').textContent.endsWith('you: spectator')"
    )
    assert bob.get_by_role("button", name="Leave seat bob").count() == 0

    # the other player sees the seat given up, and opens it
    ann.get_by_role("button", name="Open bob to a new player").click(timeout=30_000)
    ann.wait_for_function(
        "() => document.querySelector('#match-seats').textContent"
        ".includes('bob: open to a new player')",
        timeout=30_000,
    )
    # a new player takes it
    take_seat(cy, web, match_id, "bob")
    assert cy.inner_text("#match-info").endswith("you: bob")
    for page in (ann, bob, cy):
        assert not page.errors, page.errors
