"""A move taken back on the match page, in a real browser against the real stack: in
Imperial Miners, ann keeps her cards while ben has not kept his (nothing is revealed), the
page offers to take the move back, and the Take back button gives her the choice again."""

from __future__ import annotations

from typing import Any

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tabletop.v1 import gateway_pb2
from tests.integration.test_web_browser import browser, new_page, take_seat, web

pytestmark = pytest.mark.integration
__all__ = ["browser", "web"]  # the fixtures, as test_web_browser defines them


def test_a_move_is_taken_back_with_the_undo_button(browser: Any, web: str, stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("imperial_miners", ["ann", "ben"], {})
    client.join(match_id, "ben", "ben")
    ann = new_page(browser)
    take_seat(ann, web, match_id, "ann")
    first = ann.locator("#action-0")
    first.wait_for(timeout=30_000)
    assert ann.locator("#undo-move").count() == 0  # nothing of hers to take back yet
    label = first.inner_text()
    first.click()

    undo = ann.get_by_role("button", name="Take back my last move")
    undo.wait_for(timeout=30_000)  # her move stands alone: ben has still to play
    undo.click()
    ann.locator("#undo-move").wait_for(state="detached", timeout=30_000)
    ann.locator("#action-0").wait_for(timeout=30_000)
    assert ann.locator("#action-0").inner_text() == label  # the same choice, again
    steps = client.stub.ReplayMatch(
        gateway_pb2.ReplayMatchRequest(match_id=match_id), metadata=client.auth(match_id)
    )
    assert [s for s in steps if s.event.event_type.endswith("ActionsUndone")]
    assert not ann.errors, ann.errors
