"""The web client in a real browser (Debian's Chromium, driven by Playwright) against the
real stack: two players in one Drillit! match see each other's moves live, a spectator sees
only the spectator's view, a refused move shows its reason, the replay scrubs to step N and
shows what the CLI shows at N, a finished match shows its verification, and every game's
board is saved as a screenshot whose content is checked.

Screenshots and the measured page load times go to $TABLETOP_ARTEFACTS (default
.cache/artefacts/web). Load times are recorded, never asserted.
"""

from __future__ import annotations

import base64
import json
import os
import random
import re
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.cli.client import GatewayClient, play_on, render_view
from services.cli.session import Credential
from services.cli.stack import Stack
from services.games.registry import all_games, get_game
from tabletop.v1 import board_pb2, gateway_pb2, gateway_pb2_grpc
from tests.integration.helpers import play_bot_match, scored

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTEFACTS = Path(os.environ.get("TABLETOP_ARTEFACTS", ROOT / ".cache/artefacts/web"))
TIMEOUT_MS = 20_000


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not (ROOT / "web/dist/index.html").is_file():
        pytest.skip("the web client is not built: run make web")
    if not CHROMIUM.exists():
        pytest.skip("no /usr/bin/chromium: run make tools-web (Debian's chromium)")
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (make install)")
    with sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        except Error as error:
            pytest.skip(f"Chromium does not start here: {str(error).splitlines()[0]}")
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def web(stack: Stack) -> str:
    assert stack.web_port, "the test stack gives the gateway a web port"
    return stack.web_url


@pytest.fixture(scope="module")
def gateway(stack: Stack) -> Iterator[gateway_pb2_grpc.GatewayStub]:
    with grpc.insecure_channel(stack.addr("gateway")) as channel:
        yield gateway_pb2_grpc.GatewayStub(channel)


def new_page(browser: Any) -> Any:
    # The page's CSP forbids eval; Playwright's wait_for_function evaluates strings.
    context = browser.new_context(viewport={"width": 1280, "height": 900}, bypass_csp=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.errors = errors
    return page


#: the calls that read one match (JoinMatch is the lobby's)
MATCH_RPCS = {
    "GetView",
    "WatchMatch",
    "GetPicture",
    "ReplayMatch",
    "ReplayMatchBatches",
    "VerifyMatch",
}


def claims(token: str) -> dict[str, Any]:
    """A JWT's payload, unverified (the test only reads what the page sent)."""
    payload = token.split(".")[1]
    decoded: dict[str, Any] = json.loads(base64.urlsafe_b64decode(payload + "=" * 4))
    return decoded


def board_text(page: Any) -> str:
    """The board as text (shown, or folded away under the picture)."""
    return str(page.text_content("#board-text") or "")


def version_of(page: Any) -> int:
    return int(page.get_attribute("#board-area", "data-version") or 0)


def wait_version(page: Any, at_least: int) -> None:
    page.wait_for_function(
        "v => Number(document.querySelector('#board-area').dataset.version) >= v", arg=at_least
    )


#: str.translate table dropping the first-strong-isolate marks the page puts around names
UNISOLATED = {0x2068: None, 0x2069: None}


def moves_listed(page: Any, at_least: int, timeout_ms: float = TIMEOUT_MS) -> None:
    """Until the page lists the seat's moves for version ``at_least`` or later (#actions
    carries the version its moves are legal at; none while the seat waits)."""
    page.wait_for_function(
        "v => Number(document.querySelector('#actions').dataset.version ?? -1) >= v"
        " && document.querySelector('#turn').textContent.startsWith('Your move')",
        arg=at_least,
        timeout=timeout_ms,
    )


def wait_info_version(page: Any, at_least: int) -> None:
    """Until the match's line (#match-info, "game · version N · …") shows ``at_least``."""
    page.wait_for_function(
        "v => Number((document.querySelector('#match-info').textContent"
        ".match(/version (\\d+)/) || [0, 0])[1]) >= v",
        arg=at_least,
    )


def take_seat(page: Any, web: str, match_id: str, seat: str) -> None:
    page.goto(web)
    page.get_by_label("Match id", exact=True).fill(match_id)
    page.get_by_label("Seat (empty: the first free one)").fill(seat)
    page.get_by_label("Your name", exact=True).fill(seat.title())
    page.get_by_role("button", name="Take the seat").click()
    page.wait_for_selector("#board-text:not(:empty)", state="attached")


def seat_token(page: Any, match_id: str) -> str:
    tokens = json.loads(page.evaluate(f"localStorage.getItem('tabletop.tokens.{match_id}')"))
    return str(tokens["seatToken"])


def mover(pages: dict[str, Any]) -> str:
    """The seat whose page offers moves (waits until one does)."""
    deadline = time.monotonic() + TIMEOUT_MS / 1000
    while time.monotonic() < deadline:
        for seat, page in pages.items():
            if page.locator("#actions button").count() and page.inner_text("#turn").startswith(
                "Your move"
            ):
                return seat
        time.sleep(0.1)
    raise AssertionError("no page offers a move")


def played_version(page: Any) -> int:
    page.wait_for_function("document.querySelector('#status').textContent.startsWith('Played')")
    found = re.search(r"\(version (\d+)\)", page.inner_text("#status"))
    assert found, page.inner_text("#status")
    return int(found.group(1))


#: match id → the client that created it (it holds the creator token)
CREATORS: dict[str, GatewayClient] = {}


@pytest.fixture(scope="module")
def drillit(stack: Stack) -> str:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
    CREATORS[match_id] = client
    return match_id


def test_two_players_see_each_other_move_live(browser: Any, web: str, drillit: str) -> None:
    pages = {seat: new_page(browser) for seat in ("ann", "bob")}
    for seat, page in pages.items():
        take_seat(page, web, drillit, seat)
        assert page.inner_text("#match-info").endswith(f"you: {seat}")
    moved: set[str] = set()
    for _ in range(12):
        seat = mover(pages)
        page = pages[seat]
        buttons = page.locator("#actions button")
        end = page.get_by_role("button", name="end the turn")
        # One move each, then hand the turn on, so both seats move.
        (end if seat in moved and end.count() else buttons.first).focus()
        page.keyboard.press("Enter")  # keyboard only
        version = played_version(page)
        page.evaluate("document.querySelector('#status').textContent = ''")
        for other in pages.values():  # the other seat's page updates by itself
            wait_version(other, version)
        # The keyboard focus stays in the moves (or on the turn line when none is left).
        page.wait_for_function(
            "() => ['actions', 'turn'].some(id =>"
            " document.getElementById(id).contains(document.activeElement))"
        )
        moved.add(seat)
        if moved == {"ann", "bob"}:
            break
    assert moved == {"ann", "bob"}, f"only {moved} moved"
    for page in pages.values():
        assert not page.errors, page.errors
        page.context.close()


def test_the_lobby_creates_lists_and_joins_by_keyboard(browser: Any, web: str) -> None:
    page = new_page(browser)
    page.goto(web)
    # Every control has a name a screen reader reads out (a label or its text).
    unnamed = page.evaluate(
        """() => [...document.querySelectorAll('#lobby input, #lobby select, #lobby button')]
          .filter(e => !(e.labels && e.labels.length) && !e.textContent.trim()
                       && !e.getAttribute('aria-label'))
          .map(e => e.id || e.outerHTML)"""
    )
    assert not unnamed, unnamed
    page.get_by_label("Game").select_option("drillit")
    page.get_by_label("Seats, in turn order (comma-separated)").fill("ann, bob")
    page.get_by_label("Seats, in turn order (comma-separated)").press("Enter")  # submits
    page.get_by_role("button", name="Play as ann").wait_for()
    match_id = page.get_by_label("Match id", exact=True).input_value()
    # Another person finds it in the public list and takes the free seat.
    other = new_page(browser)
    other.goto(web)
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    row = other.get_by_role("row").filter(has_text=match_id)
    # The list shows projected matches: a match created a moment ago may need another look,
    # as a person would press Refresh again.
    deadline = time.monotonic() + 20
    while True:
        other.get_by_role("button", name="Refresh the list").click()
        try:
            row.get_by_role("button", name="Join as bob").wait_for(timeout=1000)
            break
        except PlaywrightTimeout:
            if time.monotonic() > deadline:
                raise
    row.get_by_role("button", name="Join as bob").focus()
    other.keyboard.press("Enter")
    other.wait_for_selector("#board-text:not(:empty)", state="attached")
    assert other.inner_text("#match-info").endswith("you: bob")
    assert "#match/" in other.url
    page.context.close()
    other.context.close()


def test_the_lobby_shows_standings_by_player_with_the_players_own_row(
    browser: Any, web: str, stack: Stack
) -> None:
    page = new_page(browser)
    page.goto(web)
    # the page signs up as a device of its own (the lobby lists "Your matches" as it)
    page.wait_for_function("() => localStorage.getItem('tabletop.player.session') !== null")
    secret = page.evaluate("() => localStorage.getItem('tabletop.player.secret')")
    player = json.loads(page.evaluate("() => localStorage.getItem('tabletop.player.session')"))
    # the same player plays a Crashland match from another device (its secret): a seat it
    # holds, not a bot's
    elsewhere = GatewayClient(stack.addr("gateway"), credential=Credential(secret=secret))
    assert elsewhere.player_id == player["playerId"]
    rng = random.Random(2)
    match_id = elsewhere.create("crashland", ["astro"], {})
    elsewhere.join(match_id, "astro", "Ann \u05d0")  # a name with a right-to-left letter
    _, end = play_on(elsewhere, match_id, "astro", lambda _, legal: rng.choice(list(legal.actions)))
    assert end.next.finished
    scored(elsewhere, "crashland", 1)
    page.get_by_label("of").select_option("crashland")
    mine = page.locator("#standings tr.mine")
    deadline = time.monotonic() + 30
    while mine.count() == 0:  # scoring folds the end a moment after the board
        assert time.monotonic() < deadline, page.inner_text("#standings")
        page.get_by_role("button", name="Refresh the list").click()
        page.wait_for_timeout(500)
    cells = mine.locator("td").all_inner_texts()
    assert cells[1] == "Ann \u05d0 (you)" and int(cells[2]) >= 1, cells
    assert mine.locator("bdi").inner_text() == "Ann \u05d0"  # isolated from the columns
    assert not page.errors
    page.context.close()


@pytest.mark.parametrize("game", ["drillit", "imperial_miners", "dungeon_drop"])
def test_a_whole_match_against_a_hard_bot_from_the_lobby(browser: Any, web: str, game: str) -> None:
    """A person asks the lobby for a bot seat at a level and plays the match to its end on
    the page: the bots service (running in the stack) takes the seat and moves at ``hard``;
    the lobby and the table show the bot's level; the end is shown and verified."""
    page = new_page(browser)
    page.goto(web)
    page.get_by_label("Game").select_option(game)
    page.get_by_label("Seats, in turn order (comma-separated)").fill("ann, bob")
    page.get_by_label("Seats bots play (comma-separated, optional)").fill("bob")
    page.get_by_label("Bots' level (the bots service plays them)").select_option("hard")
    page.get_by_role("button", name="Create the match").click()
    page.get_by_role("button", name="Play as ann").wait_for()
    assert page.get_by_role("button", name="Play as bob").count() == 0  # the bot's seat
    match_id = page.get_by_label("Match id", exact=True).input_value()
    # the public list (the creator's own list, "your matches", shows it too)
    row = page.locator("#matches").get_by_role("row").filter(has_text=match_id)
    deadline = time.monotonic() + 20
    while not row.count() or "bob: bot (hard)" not in row.inner_text():
        assert time.monotonic() < deadline, "the lobby does not list the match with its bot"
        page.get_by_role("button", name="Refresh the list").click()
        time.sleep(0.5)
    page.get_by_role("button", name="Play as ann").click()
    page.wait_for_selector("#board-text:not(:empty)", state="attached")
    page.wait_for_function(
        "document.querySelector('#match-seats').textContent.includes('bob: bot (hard)')"
    )
    moves = bot_turns = played = 0
    while not finished_on_page(page):
        assert moves < 300, f"{game}: no end after {moves} of ann's moves"
        # her moves as listed for the match after her last one (never an older list's), or
        # the end; the bot's turns come in between (60 s: a hard move is up to 1 s of CPU)
        page.wait_for_function(
            "v => Number(document.querySelector('#actions').dataset.version ?? -1) >= v"
            " || document.querySelector('#match-info').textContent.includes(' · finished')",
            arg=played,
            timeout=60_000,
        )
        if finished_on_page(page):
            break
        if "bob" in page.inner_text("#match-info").translate(UNISOLATED).split("next: ")[-1]:
            bot_turns += 1  # a simultaneous step: the bot chooses beside her
        end = page.get_by_role("button", name="end the turn")
        (end if end.count() else page.locator("#actions button").first).click()
        page.wait_for_function(
            "document.querySelector('#status').textContent.startsWith('Played')"
            " || document.querySelector('#error').textContent !== ''"
        )
        if page.inner_text("#error"):  # the bot moved first and the move went stale
            page.evaluate("document.querySelector('#error').textContent = ''")
            played += 1
            continue
        played, moves = played_version(page), moves + 1
        page.evaluate("document.querySelector('#status').textContent = ''")
        wait_info_version(page, played)
        if "next: bob" in page.inner_text("#match-info").translate(UNISOLATED):
            bot_turns += 1
            played += 1  # her moves come back only after the bot's
    assert bot_turns >= 1 and moves >= 1, (bot_turns, moves)
    assert "bob: bot (hard)" in page.inner_text("#match-seats")
    page.wait_for_function("document.querySelector('#turn').textContent === 'The match is over.'")
    page.wait_for_function(
        "document.querySelector('#verify-result').textContent.startsWith('The revealed')"
        " || document.querySelector('#verify-result').textContent.startsWith('Verified')",
        timeout=60_000,
    )
    assert page.locator("#verify-result.ok").count() == 1, page.inner_text("#verify-result")
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / f"{game}-against-a-hard-bot.png"))
    assert not page.errors, page.errors
    page.context.close()


def finished_on_page(page: Any) -> bool:
    return " · finished" in page.inner_text("#match-info")


def test_a_spectator_sees_no_private_information(
    browser: Any, web: str, drillit: str, gateway: gateway_pb2_grpc.GatewayStub
) -> None:
    page = new_page(browser)
    calls: list[tuple[str, str]] = []
    page.on(
        "request",
        lambda r: calls.append((r.url.rsplit("/", 1)[-1], r.headers.get("authorization", ""))),
    )
    page.goto(web)
    page.get_by_label("Match id", exact=True).fill(drillit)
    page.get_by_role("button", name="Watch as a spectator").click()
    page.wait_for_selector("#board-text:not(:empty)", state="attached")
    spectator = gateway.GetPicture(gateway_pb2.GetPictureRequest(match_id=drillit))
    assert spectator.viewer == "" and spectator.version == version_of(page)
    assert sorted(board_text(page).split()) == sorted(spectator.text.split())
    assert "as a spectator sees it" in page.inner_text("#board-caption")
    assert page.locator("#actions button").count() == 0
    assert page.inner_text("#turn") == "Spectators watch; only seats move."
    # Every call about the match carried the spectator token (never a seat's), and the page
    # asked for no seat's moves: it can only show what the spectator view holds.
    tokens = json.loads(page.evaluate(f"localStorage.getItem('tabletop.tokens.{drillit}')"))
    assert set(tokens) <= {"spectator", "watching"}
    about_match = [(rpc, auth) for rpc, auth in calls if rpc in MATCH_RPCS]
    assert {rpc for rpc, _ in about_match} >= {"WatchMatch", "GetPicture"}
    assert all(auth == f"Bearer {tokens['spectator']}" for _, auth in about_match), calls
    assert claims(tokens["spectator"])["r"] == "spectator"
    assert not any(rpc in ("GetLegalActions", "SubmitAction") for rpc, _ in calls)
    page.context.close()


def test_a_refused_move_shows_its_reason(
    browser: Any, web: str, stack: Stack, gateway: gateway_pb2_grpc.GatewayStub
) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("drillit", ["ann", "bob"], {"difficulty": "easy"})
    pages = {seat: new_page(browser) for seat in ("ann", "bob")}
    for seat, page in pages.items():
        take_seat(page, web, match_id, seat)
    seat = mover(pages)
    page = pages[seat]
    token = seat_token(page, match_id)
    label = page.locator("#actions button").last.inner_text()

    # The same move from the seat's other device reaches the board first: the page's
    # request is held until then, so the rules refuse it (deterministically, no race).
    def other_device_first(route: Any) -> None:
        metadata = (("authorization", f"Bearer {token}"),)
        legal = gateway.GetLegalActions(
            board_pb2.GetLegalActionsRequest(match_id=match_id), metadata=metadata
        )
        same = next(a for a in legal.actions if a.label == label)
        gateway.SubmitAction(
            board_pb2.SubmitActionRequest(
                match_id=match_id, action=same.action, command_id=uuid.uuid4().hex
            ),
            metadata=metadata,
        )
        route.continue_()

    page.route("**/tabletop.v1.Gateway/SubmitAction", other_device_first)
    page.locator("#actions button").last.click()
    alert = page.get_by_role("alert")
    alert.wait_for()
    page.wait_for_function("document.querySelector('#error').textContent.length > 0")
    text = alert.inner_text()
    assert text.startswith("Refused: ") and re.search(r"\[[A-Z_]+\]$", text), text
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(ARTEFACTS / "refused-move.png"), full_page=True)
    for p in pages.values():
        p.context.close()


def test_the_replay_scrubs_to_step_n_as_the_cli_shows_it(
    browser: Any, web: str, drillit: str, stack: Stack
) -> None:
    page = new_page(browser)
    page.goto(f"{web}#match/{drillit}")  # a public match: no token, the spectator's view
    page.wait_for_selector("#board-text:not(:empty)", state="attached")
    page.get_by_role("button", name="Step through the match so far").click()
    scrubber = page.get_by_label("Replay step")
    scrubber.wait_for()
    n = 5
    scrubber.focus()  # keyboard: Home, then right arrow to step n
    page.keyboard.press("Home")
    for _ in range(n - 1):
        page.keyboard.press("ArrowRight")
    page.wait_for_function(
        "n => document.querySelector('#replay-label').textContent.startsWith(`Step ${n} of`)",
        arg=n,
    )
    # What `tabletop replay` prints at step n (render_view of the replayed view).
    client = GatewayClient(stack.addr("gateway"))
    steps = list(client.stub.ReplayMatch(gateway_pb2.ReplayMatchRequest(match_id=drillit)))
    expected = steps[n - 1]
    page.wait_for_function(
        "v => document.querySelector('#board-area').dataset.version == v",
        arg=str(expected.view.version),
    )
    # The same view, word for word. (Map entries — e.g. Drillit's crystals — may come in
    # another order from a view folded afresh than from one parsed off the wire.)
    assert sorted(board_text(page).split()) == sorted(render_view(expected.view).split())
    assert expected.description in page.inner_text("#replay-label")
    page.get_by_role("button", name="Step back").click()
    wait_label = "document.querySelector('#replay-label').textContent.startsWith('Step 4 of')"
    page.wait_for_function(wait_label)
    page.context.close()


def test_a_finished_match_shows_its_verification(browser: Any, web: str, stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    match_id, _ = play_bot_match(client, "crashland", ["solo"], seed=7)
    page = new_page(browser)
    page.goto(f"{web}#match/{match_id}")
    result = page.locator("#verify-result")
    page.wait_for_function(  # a verdict, not the wait for the seeds
        "['ok', 'bad'].includes(document.querySelector('#verify-result').className)"
    )
    text = result.inner_text()
    assert "Verified:" in text and "match their commitments" in text, text
    assert result.get_attribute("class") == "ok"
    assert "finished" in page.inner_text("#match-info")
    page.context.close()


HOSTILE_SVG = """<svg xmlns="http://www.w3.org/2000/svg"
     xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 100 100" onload="window.pwned=1">
  <script>window.pwned = 2</script>
  <style>rect { fill: url(https://evil.example/x) }</style>
  <defs><linearGradient id="shade"><stop offset="0" stop-color="#123"/></linearGradient></defs>
  <g id="board"><rect id="room-1" width="10" height="10" fill="url(#shade)"
       onclick="window.pwned=3" style="fill:red"><title>Room 1</title></rect></g>
  <a href="javascript:window.pwned=4"><text x="1" y="20">link</text></a>
  <foreignObject><div xmlns="http://www.w3.org/1999/xhtml">html</div></foreignObject>
  <image href="https://evil.example/y.png"/>
  <use href="#room-1" x="20"/><use xlink:href="https://evil.example/z.svg#a"/>
</svg>"""


def test_the_board_sanitiser_keeps_drawing_and_drops_everything_else(browser: Any) -> None:
    esbuild = ROOT / "web/node_modules/.bin/esbuild"
    if not esbuild.exists():
        pytest.skip("web tools not installed: run make web")
    bundle = subprocess.run(
        [str(esbuild), "src/sanitize.ts", "--bundle", "--format=iife", "--global-name=S"],
        cwd=ROOT / "web",
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    page = new_page(browser)
    page.set_content("<div id=board></div>")
    page.add_script_tag(content=bundle)
    result = page.evaluate(
        """svg => {
          const clean = S.sanitizeSvg(svg, 'pic-');
          document.getElementById('board').replaceChildren(clean);
          const b = document.getElementById('board');
          return {
            html: b.innerHTML,
            ids: [...b.querySelectorAll('[id]')].map(e => e.id),
            titles: [...b.querySelectorAll('title')].map(e => e.textContent),
            uses: [...b.querySelectorAll('use')].map(e => e.getAttribute('href')),
            fill: b.querySelector('rect').getAttribute('fill'),
            pwned: window.pwned ?? 0,
            notSvg: S.sanitizeSvg('<html><body>x</body></html>', 'pic-'),
          };
        }""",
        HOSTILE_SVG,
    )
    page.locator("#board rect").click()  # its onclick is gone: nothing runs
    assert page.evaluate("window.pwned ?? 0") == 0 and result["pwned"] == 0
    html = result["html"]
    for gone in ("script", "onload", "onclick", "style", "javascript", "foreignObject",
                 "<image", "<a ", "evil.example"):  # fmt: skip
        assert gone not in html, gone
    assert result["ids"] == ["pic-shade", "pic-board", "pic-room-1"]  # never the page's ids
    assert result["titles"] == ["Room 1"]
    assert result["uses"] == ["#pic-room-1", None]
    assert result["fill"] == "url(#pic-shade)"
    assert result["notSvg"] is None
    page.context.close()


COUNT_INK = """async (png) => {
  const img = new Image();
  img.src = 'data:image/png;base64,' + png;
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data;
  let ink = 0; const colours = new Set();
  for (let i = 0; i < data.length; i += 4) {
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (r + g + b < 600) ink++;
    colours.add((r >> 4) << 8 | (g >> 4) << 4 | (b >> 4));
  }
  return {ink, colours: colours.size, pixels: data.length / 4};
}"""


@pytest.mark.parametrize("game", sorted(all_games()))
def test_every_game_board_is_drawn(browser: Any, web: str, stack: Stack, game: str) -> None:
    ARTEFACTS.mkdir(parents=True, exist_ok=True)
    client = GatewayClient(stack.addr("gateway"))
    rules = get_game(game)
    count = min(max(2, rules.min_players), rules.max_players)
    players = ["ann", "bob", "cy", "dee", "eve", "fay"][:count]
    match_id = client.create(game, players, {})
    page = new_page(browser)
    started = time.perf_counter()
    page.goto(f"{web}#match/{match_id}")
    page.wait_for_selector("#board-text:not(:empty)", state="attached")
    has_svg = page.locator("#board svg").count() > 0
    load_ms = (time.perf_counter() - started) * 1000
    shot = page.locator("#board-area").screenshot(path=str(ARTEFACTS / f"board-{game}.png"))
    ink = page.evaluate(COUNT_INK, base64.b64encode(shot).decode())
    # Drawn content, not a blank box: dark pixels (lines, labels) and several colours.
    assert ink["ink"] > 0.01 * ink["pixels"], ink
    if has_svg:
        assert ink["colours"] >= 4, ink
        assert game in (page.get_attribute("#board", "aria-label") or "")
        # Inline and sanitised: the pieces' titles are there, nothing that could run.
        assert page.locator("#board svg title").count() > 0
        assert page.locator("#board script, #board foreignObject").count() == 0
    else:  # no picture yet: the readable text rendering is shown instead
        assert len(board_text(page).splitlines()) >= 3
    with (ARTEFACTS / "page-load.jsonl").open("a") as out:
        out.write(json.dumps({"game": game, "svg": has_svg, "load_ms": round(load_ms)}) + "\n")
    page.context.close()
