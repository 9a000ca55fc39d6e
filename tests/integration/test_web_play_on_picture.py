"""Playing on the board's picture in a real browser (Debian's Chromium, driven by Playwright)
against the real stack, by mouse alone: a whole Crashland match and a round of every other
game, each move made by clicking the marked elements of the SVG (then, where a few moves
share them, one of the menu the page opens there), by dragging from a Dungeon Drop cube to
flick it, or by clicking where on the table a piece goes. A move the picture has no element
for (end the turn, use no ability) is a button of the bar above the picture.

Which element, which menu entry and which drag are chosen by a seeded random generator, so
a run is repeatable and different seeds explore other moves.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.games.dungeon_drop.content import CONTENT
from tests.integration import test_web_browser as page_tests
from tests.integration.test_web_browser import (
    ARTEFACTS,
    TIMEOUT_MS,
    new_page,
    take_seat,
)

pytestmark = pytest.mark.integration

browser = page_tests.browser  # the same Chromium and page, as fixtures of this module
web = page_tests.web


def ready(page: Any) -> bool:
    """The page offers its moves, on the picture of the very version they are legal at."""
    return bool(
        page.evaluate(
            """() => document.querySelector('#turn').textContent.startsWith('Your move')
                 && document.querySelectorAll('#actions button').length > 0
                 && document.querySelector('#board').dataset.moves
                    === document.querySelector('#board-area').dataset.version"""
        )
    )


def finished(page: Any) -> bool:
    return " · finished" in page.inner_text("#match-info")


def wait_for_mover(pages: dict[str, Any]) -> str | None:
    """The seat whose page offers moves (None once the match is over)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        for seat, page in pages.items():
            if ready(page):
                return seat
        if any(finished(page) for page in pages.values()):
            return None
        time.sleep(0.05)
    raise AssertionError("no page offers a move")


def centre(page: Any, selector: str) -> tuple[float, float]:
    element = page.locator(selector).first
    element.scroll_into_view_if_needed()
    box = element.bounding_box()
    assert box, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def hint(page: Any) -> str:
    return str(page.inner_text("#board-hint"))


def played(page: Any) -> bool:
    return str(page.inner_text("#status")).startswith("Played")


def drag_to_flick(page: Any, rng: random.Random, how: Counter[str]) -> None:
    """A drag from the picked cube: the arrow and its values show while dragging."""
    x, y = centre(page, "#board .playable-drag")
    angle = rng.uniform(0, 360)
    length = rng.uniform(30, 160)
    page.mouse.move(x, y)
    page.mouse.down()
    for step in range(1, 6):
        f = step / 5
        page.mouse.move(
            x + f * length * math.cos(math.radians(angle)),
            y - f * length * math.sin(math.radians(angle)),
        )
    shown = page.locator("#board .drag-overlay text").text_content() or ""
    assert re.fullmatch(r"direction \d+°, strength \d+%", shown), shown
    page.mouse.up()
    how["drag"] += 1


def try_move(page: Any, rng: random.Random, how: Counter[str], retry: bool) -> bool:
    """One move with the mouse, as ``one_move``; False when the page redrew meanwhile (a card
    drawn, the turn passed on, the same view again) and ``retry``: a player looks again."""
    try:
        one_move(page, rng, how)
        wait_played(page)
    except (PlaywrightError, ValueError, IndexError):  # an element gone, an empty list
        if retry:
            return False
        raise
    return True


def one_move(page: Any, rng: random.Random, how: Counter[str]) -> None:
    """Makes one move with the mouse; ``how`` counts the ways it was made."""
    page.evaluate("document.querySelector('#status').textContent = ''")
    marked = page.locator("#board .playable")
    if marked.count() == 0:
        buttons = page.locator("#board-bar button")  # the moves made on no element
        labels = buttons.all_inner_texts()
        # a hero uses an ability when there is one: its moves are made on the picture (a
        # flick first, the one dragged; Dungeon Drop offers the race's and the class's)
        use = [i for i, label in enumerate(labels) if label.startswith("use your")]
        use.sort(key=lambda i: "flick" not in labels[i])
        buttons.nth(use[0] if use else rng.randrange(len(labels))).click()
        how["bar"] += 1
        return
    for _ in range(8):  # a few picks make one move (a room's three Pillars)
        marked = page.locator("#board .playable")
        ids = marked.evaluate_all("es => es.map(e => e.id)")
        chosen = rng.choice(ids)
        x, y = centre(page, f"#{chosen}")
        page.mouse.click(x, y)
        how["click"] += 1
        page.wait_for_function(
            """() => document.querySelector('#status').textContent.startsWith('Played')
                 || !document.querySelector('#picked-moves')?.hidden
                 || /^(Drag from|Click where|Picked)/.test(
                      document.querySelector('#board-hint').textContent)"""
        )
        if played(page):
            how["on the picture"] += 1
            return
        menu = page.locator("#picked-moves")
        if menu.is_visible():
            entries = menu.locator("button:not(.cancel)")
            entry = entries.nth(rng.randrange(entries.count()))
            label = entry.inner_text()
            if label.startswith("loot the room") and not label.endswith(": nothing"):
                # the room's cubes are shown before it is confirmed
                assert page.locator("#board .affected").count() > 0, label
                how["room"] += 1
                # A second click on a Pillar unpicks it (the offer goes); picked again, it is back.
                page.mouse.click(x, y)
                page.wait_for_function("document.querySelector('#picked-moves').hidden")
                assert page.locator("#board .affected").count() == 0
                page.mouse.click(x, y)
                menu.wait_for()
                entry = menu.get_by_role("button", name=label, exact=True)
            entry.click()
            how["menu"] += 1
            how["on the picture"] += 1
            return
        if hint(page).startswith("Drag from"):
            page.evaluate(
                "id => document.getElementById(id).classList.add('playable-drag')", chosen
            )
            drag_to_flick(page, rng, how)
            how["on the picture"] += 1
            return
        if hint(page).startswith("Click where"):
            page.locator("#pic-table").scroll_into_view_if_needed()
            box = page.locator("#pic-table").bounding_box()
            assert box
            page.mouse.click(
                box["x"] + rng.uniform(0.2, 0.8) * box["width"],
                box["y"] + rng.uniform(0.2, 0.8) * box["height"],
            )
            how["point"] += 1
            how["on the picture"] += 1
            return
    raise AssertionError(f"no move after eight picks: {hint(page)}")


def wait_played(page: Any) -> None:
    page.wait_for_function(
        """() => document.querySelector('#status').textContent.startsWith('Played')
             || document.querySelector('#error').textContent.length > 0"""
    )
    assert played(page), page.inner_text("#error")


#: a game's count of rounds (its view's field) and how much it grows in a round of play
ROUND = {
    "drillit": ("turn", 2),  # a turn each, two seats
    "imperial_miners": ("round", 2),  # the cards kept at the start, then a whole round
    "dungeon_drop": ("round", 1),
}


def round_of(client: GatewayClient, match_id: str, game: str) -> int:
    view = client.view(match_id)
    return int(getattr(getattr(view.game_view, game), ROUND[game][0]))


def flicking(client: GatewayClient, seats: list[str]) -> str:
    """A Dungeon Drop match where a hero's ability flicks cubes (heroes are dealt at random:
    a few matches are created until one has such a hero)."""
    for _ in range(40):
        match_id = client.create("dungeon_drop", seats, {})
        heroes = client.view(match_id).game_view.dungeon_drop.seats
        abilities = {CONTENT.classes[h.hero_class].ability.primitive for h in heroes} | {
            CONTENT.races[h.race].ability.primitive for h in heroes
        }
        if "flick" in abilities:
            return match_id
    raise AssertionError("no hero who flicks in 40 matches")


def play_by_mouse(
    browser: Any,
    web: str,
    stack: Stack,
    game: str,
    seats: list[str],
    seed: int,
    whole: bool,
    until: Callable[[Counter[str]], bool] = lambda how: True,
) -> Counter[str]:
    """Plays the match by mouse to its end (``whole``), or its first round and on until
    ``until`` holds of the ways moves were made (or the match ends)."""
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create(game, seats, {}) if game != "dungeon_drop" else flicking(client, seats)
    pages = {seat: new_page(browser) for seat in seats}
    for seat, page in pages.items():
        take_seat(page, web, match_id, seat)
    rng = random.Random(seed)
    how: Counter[str] = Counter()
    first_round = 0 if whole else round_of(client, match_id, game)
    moved: list[str] = []
    retries = 0  # in a row, at one position
    for _ in range(600):
        mover = wait_for_mover(pages)
        if mover is None:
            break
        if (
            not whole
            and round_of(client, match_id, game) >= first_round + ROUND[game][1]
            and until(how)
        ):
            break
        try:
            if not try_move(pages[mover], rng, how, retry=retries < 3):
                retries += 1
                continue
            retries = 0
        except Exception:
            page = pages[mover]
            ARTEFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTEFACTS / f"mouse-{game}-failed.png"), full_page=True)
            print("hint:", hint(page), "| status:", page.inner_text("#status"))
            print("error:", page.inner_text("#error"), "| turn:", page.inner_text("#turn"))
            print(
                page.evaluate(
                    """() => [...document.querySelectorAll('#board .playable')].map(e => {
                      const r = e.getBoundingClientRect();
                      return [e.id, r.x, r.y, r.width, r.height,
                        document.elementsFromPoint(r.x + r.width / 2, r.y + r.height / 2)
                          .slice(0, 4).map(u => u.tagName + '#' + u.id)];
                    }).slice(0, 5)"""
                )
            )
            raise
        moved.append(mover)
    else:
        raise AssertionError(f"{game}: no end after 600 moves")
    if whole:
        assert all(finished(page) for page in pages.values())
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    for seat, page in pages.items():
        page.locator("#board-area").screenshot(path=str(ARTEFACTS / f"mouse-{game}-{seat}.png"))
        assert not page.errors, page.errors
        page.context.close()
    print(f"{game}: {len(moved)} moves by mouse, {dict(how)}")
    assert how["on the picture"] > 0, how
    return how


def test_a_whole_crashland_match_by_mouse(browser: Any, web: str, stack: Stack) -> None:
    how = play_by_mouse(browser, web, stack, "crashland", ["solo"], seed=1, whole=True)
    assert how["on the picture"] > how["bar"], how  # the cards, the hand


@pytest.mark.parametrize(
    ("game", "seats"),
    [
        ("drillit", ["ann", "bob"]),
        ("imperial_miners", ["ann", "bob"]),
        ("dungeon_drop", ["ann", "bob"]),
    ],
)
def test_a_round_by_mouse(
    browser: Any, web: str, stack: Stack, game: str, seats: list[str]
) -> None:
    # Dungeon Drop: the flicking hero's ability may not come up in the first round (heroes
    # and cubes are the match's chance), so it plays on until a flick was dragged
    def flicked(how: Counter[str]) -> bool:
        return game != "dungeon_drop" or how["drag"] >= 1

    how = play_by_mouse(browser, web, stack, game, seats, seed=2, whole=False, until=flicked)
    if game == "dungeon_drop":
        assert how["drag"] >= 1, how  # cubes were flicked by dragging
