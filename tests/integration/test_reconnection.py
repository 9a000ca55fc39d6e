"""Reconnection (issue 41 item 4), through the real stack: a live view stream cut by a
gateway restart resumes after the last version it showed, with no view twice and the newest
reached, for a gRPC client, for `tabletop watch` and for an open page in Chromium; a
reloaded page keeps its seat (its token kept by the page) and shows the newest view.

The tests restart a gateway (stop, start, healthy again), as an operator's rolling update
does, on a stack of their own: a restarted gateway reads the views topic back from its
beginning, and the session's stack, with every other test's matches on it, must not be
left catching up."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.cli.client import GatewayClient, TokenStore
from services.cli.stack import Stack
from services.common.kafka_access import KafkaAccess
from tests.integration.helpers import eventually, open_match, remove
from tests.integration.test_web_browser import (
    browser,
    new_page,
    seat_token,
    take_seat,
    wait_version,
)

__all__ = ["browser"]  # the fixture, as test_web_browser defines it
ROOT = Path(__file__).resolve().parents[2]
SEATS = ["ana", "bo"]
EASY = {"difficulty": "easy"}


@pytest.fixture(scope="module")
def stack(kafka_admin: KafkaAccess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """A stack of this module's own (its gateway is restarted)."""
    prefix = f"resume{uuid.uuid4().hex[:8]}."
    own = Stack.ephemeral(tmp_path_factory.mktemp("resume"), topic_prefix=prefix, partitions=1)
    own.kafka = kafka_admin
    own.extra_env = {"TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "0"}
    try:
        own.up()
        yield own
    finally:
        own.down()
        remove(own)


def move(client: GatewayClient, match_id: str, seat: str = SEATS[0]) -> int:
    """One legal move of whoever must move; the version it made."""
    mover = client.legal(match_id, seat).next.players[0]
    legal = client.legal(match_id, mover)
    return client.submit(match_id, mover, legal.actions[0].action, legal.version).version


def restart_gateway(stack: Stack) -> None:
    stack.stop("gateway")
    time.sleep(1.0)  # the clients see it gone
    stack.start("gateway")
    stack.wait_healthy("gateway")


def test_a_watch_cut_by_a_gateway_restart_resumes_without_a_repeat(
    stack: Stack, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.json"
    client = GatewayClient(stack.addr("gateway"), store=TokenStore(tokens))
    match_id = open_match(client, "drillit", SEATS, EASY)
    seen: list[int] = []
    stop = threading.Event()

    def follow() -> None:
        for view in client.follow(match_id, "ana", stop=stop.is_set, max_pause_s=1.0):
            seen.append(view.version)

    threading.Thread(target=follow, daemon=True).start()
    watcher = subprocess.Popen(
        [sys.executable, "-m", "services.cli.main", "--gateway", stack.addr("gateway"),
         "watch", match_id, "--seat", "bo", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
        env={**os.environ, "TABLETOP_TOKENS": str(tokens)},
    )  # fmt: skip
    try:
        before = move(client, match_id)
        eventually(lambda: (seen and seen[-1] >= before) or None)
        restart_gateway(stack)
        after = move(client, match_id)
        assert after > before
        eventually(lambda: (seen and seen[-1] >= after) or None, timeout=60)
        assert seen == sorted(set(seen)), seen  # no view twice, none older than one shown
        assert seen[-1] == client.view(match_id, "ana").version
        # the terminal's watch went through the same restart
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            for text in watcher.stdout or ():
                lines.put(text)

        threading.Thread(target=read, daemon=True).start()
        shown: list[int] = []
        while not shown or shown[-1] < after:
            shown.append(json.loads(lines.get(timeout=60))["version"])
        assert shown == sorted(set(shown)), shown
    finally:
        stop.set()
        watcher.terminate()
        watcher.wait(10)
        client.close()


def test_an_open_page_resumes_after_a_gateway_restart_and_keeps_its_seat_on_reload(
    browser: Any, stack: Stack
) -> None:
    web = stack.web_url
    client = GatewayClient(stack.addr("gateway"))
    match_id = client.create("drillit", ["ann", "bob"], EASY)
    client.join(match_id, "bob", "Bob")
    page = new_page(browser)
    take_seat(page, web, match_id, "ann")
    watches: list[str] = []
    page.on("request", lambda r: watches.append(r.url) if r.url.endswith("/WatchMatch") else None)
    # ann's moves are made with the page's own token (the page holds it)
    client.tokens.put(client.address, match_id, "ann", seat_token(page, match_id))
    before = move(client, match_id, "bob")
    wait_version(page, before)

    restart_gateway(stack)
    after = move(client, match_id, "bob")
    wait_version(page, after)  # the page's stream came back by itself
    assert watches, "the page opened its stream again"

    # a reload keeps the seat: its token is kept by the page, per match
    page.reload()
    page.wait_for_selector("#board-text:not(:empty)", state="attached")
    page.wait_for_function("document.querySelector('#match-info').textContent.endsWith('you: ann')")
    newest = client.view(match_id, "bob").version
    wait_version(page, newest)
    mover = client.legal(match_id, "bob").next.players[0]
    if mover == "ann":  # its moves are offered again, as before the reload
        page.wait_for_selector("#actions button")
    assert not page.errors, page.errors
    page.context.close()
    client.close()
