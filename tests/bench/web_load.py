"""``python -m tests.bench.web_load``: how long the web page takes to show a board.

From navigation start to the board drawn (the picture in the page, or its text when the game
has no picture yet), measured inside headless Chromium (``performance.now()`` polled on
animation frames) against a stack of its own on free ports. Cold: a new browser context
(empty cache) per load; warm: reloads in one context. A measurement, not a test: it prints
the figures (and ``--json`` writes them); nothing asserts a time.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import uuid
from pathlib import Path
from typing import Any

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.common.topics import topic_specs
from tests.integration.test_web_browser import ARGS, CHROMIUM

#: true (the time in ms since navigation start) once the board is on the page
BOARD_SHOWN = """() => {
  const board = document.querySelector('#board');
  const text = document.querySelector('#board-text');
  const drawn = board && !board.hidden
    ? board.querySelector('svg, img')
    : text && text.textContent;
  return drawn ? performance.now() : false;
}"""


def measure(url: str, loads: int) -> dict[str, Any]:
    from playwright.sync_api import sync_playwright

    cold: list[float] = []
    warm: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        for _ in range(loads):
            context = browser.new_context()
            page = context.new_page()
            page.goto(url)
            cold.append(page.wait_for_function(BOARD_SHOWN, polling="raf").json_value())
            context.close()
        context = browser.new_context()
        page = context.new_page()
        page.goto(url)
        page.wait_for_function(BOARD_SHOWN, polling="raf")
        for _ in range(loads):
            page.reload()
            warm.append(page.wait_for_function(BOARD_SHOWN, polling="raf").json_value())
        browser.close()

    def summary(values: list[float]) -> dict[str, float]:
        ordered = sorted(values)
        return {
            "median_ms": round(statistics.median(ordered), 1),
            "p90_ms": round(ordered[max(0, int(len(ordered) * 0.9) - 1)], 1),
            "max_ms": round(ordered[-1], 1),
        }

    return {"loads": loads, "cold": summary(cold), "warm": summary(warm)}


async def _delete_topics(stack: Stack) -> None:
    from aiokafka.admin import AIOKafkaAdminClient

    admin = AIOKafkaAdminClient(**stack.kafka.client_options())
    await admin.start()
    try:
        specs = topic_specs(stack.topic_prefix, stack.partitions)
        await admin.delete_topics([s.name for s in specs])
    finally:
        await admin.close()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.web_load", description=__doc__)
    parser.add_argument("--loads", type=int, default=20)
    parser.add_argument("--game", default="drillit")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as run_dir:
        stack = Stack.ephemeral(Path(run_dir), topic_prefix=f"web{uuid.uuid4().hex[:8]}.")
        try:
            stack.up()
            client = GatewayClient(stack.addr("gateway"))
            seats = ["solo"] if args.game == "crashland" else ["ann", "bob"]
            match_id = client.create(args.game, seats, {})
            client.view(match_id, "", min_version=1)
            figures = {
                "game": args.game,
                **measure(f"{stack.web_url}#match/{match_id}", args.loads),
            }
        finally:
            stack.down()
            asyncio.run(_delete_topics(stack))
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
