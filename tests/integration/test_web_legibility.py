"""Every game's picture read at a glance in Chromium: at a 1280 px wide window, each text of
the board renders at 11 px or more, but for the small print of ``zoom`` pieces (Imperial
Miners' cards, Drillit's hexes), which the page magnifies beside the pointer to 11 px or
more; at a phone's size (390x844) the page fits the screen's width and a match is played by
tapping the picture. Screenshots go to $TABLETOP_ARTEFACTS (default .cache/artefacts/web).
"""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.games.registry import all_games, get_game
from tests.integration import test_web_browser as page_tests
from tests.integration.helpers import play_bot_match
from tests.integration.test_web_browser import ARTEFACTS, new_page

pytestmark = pytest.mark.integration

browser = page_tests.browser  # the same Chromium and page, as fixtures of this module
web = page_tests.web

#: the smallest text a player reads without leaning in (CSS px)
LEGIBLE_PX = 11.0

#: each text of ROOT (with CLIP, only those within its box): its rendered size (font-size
#: times the picture's scale on screen), its words, and the zoom piece it lies in (-1: none)
TEXT_SIZES = """([root, clip]) => {
  const frame = clip ? document.querySelector(root).getBoundingClientRect()
                     : {left: -Infinity, right: Infinity, top: -Infinity, bottom: Infinity};
  const pieces = [...document.querySelectorAll(root + ' .zoom')];
  return [...document.querySelectorAll(root + ' text')].filter(t => {
    const r = t.getBoundingClientRect();
    const [x, y] = [r.x + r.width / 2, r.y + r.height / 2];
    return t.textContent.trim() && r.width > 0
      && x > frame.left && x < frame.right && y > frame.top && y < frame.bottom;
  }).map(t => {
    const m = t.getScreenCTM();
    const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
    return {text: t.textContent.trim(), px: parseFloat(getComputedStyle(t).fontSize) * scale,
            piece: pieces.indexOf(t.closest('.zoom'))};
  });
}"""


def open_match(browser: Any, stack: Stack, web: str, game: str, viewport: dict[str, int]) -> Any:
    client = GatewayClient(stack.addr("gateway"))
    rules = get_game(game)
    players = ["ann", "bob", "cy", "dee"][: min(max(2, rules.min_players), rules.max_players)]
    match_id = client.create(game, players, {})
    page = new_page(browser)
    page.set_viewport_size(viewport)
    page.goto(f"{web}#match/{match_id}")
    page.wait_for_selector("#board svg")
    return page


@pytest.mark.parametrize("game", sorted(all_games()))
def test_every_picture_reads_at_1280_px(browser: Any, web: str, stack: Stack, game: str) -> None:
    page = open_match(browser, stack, web, game, {"width": 1280, "height": 900})
    sizes = page.evaluate(TEXT_SIZES, ["#board", False])
    assert sizes, "the picture has text"
    small = [s for s in sizes if s["px"] < LEGIBLE_PX and s["piece"] < 0]
    plain = min(s["px"] for s in sizes if s["piece"] < 0)
    smallest = min(s["px"] for s in sizes)
    print(f"{game}: smallest text {smallest:.1f} px, {plain:.1f} px outside zoom pieces")
    assert not small, small[:5]
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#board-area").screenshot(path=str(ARTEFACTS / f"legible-{game}.png"))
    # Small print is magnified beside the pointer: each zoom piece with small text, hovered.
    pieces = sorted({s["piece"] for s in sizes if s["piece"] >= 0 and s["px"] < LEGIBLE_PX})
    for n in pieces[:6]:
        piece = page.locator("#board .zoom").nth(n)
        piece.scroll_into_view_if_needed()
        piece.hover()
        page.wait_for_selector("#zoom-lens:not([hidden])")
        lens = page.evaluate(TEXT_SIZES, ["#zoom-lens", True])
        assert lens, "the lens shows the piece's text"
        assert min(s["px"] for s in lens) >= LEGIBLE_PX, lens
    if pieces:
        page.screenshot(path=str(ARTEFACTS / f"legible-{game}-zoom.png"))
    page.context.close()


@pytest.mark.parametrize("game", sorted(all_games()))
def test_a_finished_match_reads_at_1280_px(browser: Any, web: str, stack: Stack, game: str) -> None:
    """The end of a match, where a picture is at its fullest (an Imperial Miners Mine grows
    wide): it scrolls sideways in its box rather than shrink its text below 11 px."""
    rules = get_game(game)
    players = ["ann", "bob"][: min(max(2, rules.min_players), rules.max_players)]
    match_id, _ = play_bot_match(GatewayClient(stack.addr("gateway")), game, players, seed=3)
    page = new_page(browser)
    page.goto(f"{web}#match/{match_id}")
    page.wait_for_selector("#board svg")
    sizes = page.evaluate(TEXT_SIZES, ["#board", False])
    plain = [s["px"] for s in sizes if s["piece"] < 0]
    print(f"{game}, finished: smallest text {min(plain):.1f} px outside zoom pieces")
    assert min(plain) >= LEGIBLE_PX, [s for s in sizes if s["piece"] < 0 and s["px"] < 11][:5]
    assert page.evaluate("document.scrollingElement.scrollWidth") <= 1280  # the page does not
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.locator("#board-area").screenshot(path=str(ARTEFACTS / f"legible-{game}-end.png"))
    page.context.close()


def test_a_phone_plays_by_tapping_the_picture(browser: Any, web: str, stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("crashland", ["solo"], {})
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True, bypass_csp=True
    )
    context.set_default_timeout(page_tests.TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page_tests.take_seat(page, web, match_id, "solo")
    # The page fits the phone's width: no sideways scrolling, the picture as wide as it.
    width = page.evaluate("document.scrollingElement.scrollWidth")
    assert width <= 390, width
    board = page.locator("#board svg").bounding_box()
    assert board and board["width"] >= 300 and board["x"] + board["width"] <= 390, board
    played = 0
    for _ in range(40):
        if played == 6:
            break
        page.wait_for_function(
            """() => document.querySelector('#turn').textContent.startsWith('Your move')
                 && document.querySelector('#board').dataset.moves
                    === document.querySelector('#board-area').dataset.version"""
        )
        page.evaluate("document.querySelector('#status').textContent = ''")
        marked = page.locator("#board .playable")
        if marked.count() == 0:
            page.locator("#board-bar button").first.tap()  # above the picture
        else:
            marked.first.scroll_into_view_if_needed()
            box = marked.first.bounding_box()
            assert box
            page.touchscreen.tap(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            menu = page.locator("#picked-moves button:not(.cancel)")
            try:
                menu.first.wait_for(timeout=1500)
                box = menu.first.bounding_box()
                assert box and box["x"] >= 0 and box["x"] + box["width"] <= 390, box
                menu.first.tap()
            except PlaywrightTimeout:
                pass  # played at once
        page.wait_for_function("document.querySelector('#status').textContent.startsWith('Played')")
        played += 1
    assert played == 6
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / "phone-crashland.png"), full_page=True)
    assert not errors, errors
    context.close()
