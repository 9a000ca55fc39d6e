"""The board's seed-reveal outbox: retried until dice and decks confirm."""

from __future__ import annotations

import asyncio

import grpc

from services.board.chance import ChanceFailed
from services.board.reveals import RevealOutbox


class FlakyReveal:
    def __init__(self, failures: dict[str, list[grpc.StatusCode]]) -> None:
        self.failures = failures
        self.calls: list[str] = []
        self.revealed: set[str] = set()

    async def __call__(self, match_id: str, correlation_id: str) -> None:
        self.calls.append(match_id)
        pending = self.failures.get(match_id, [])
        if pending:
            code = pending.pop(0)
            raise ChanceFailed(code, f"{code.name}", "X")
        self.revealed.add(match_id)


def test_a_reveal_is_retried_until_it_succeeds_and_a_hopeless_one_is_dropped() -> None:
    unavailable = grpc.StatusCode.UNAVAILABLE

    async def run() -> tuple[FlakyReveal, set[str]]:
        reveal = FlakyReveal({"m1": [unavailable, unavailable], "m2": [grpc.StatusCode.INTERNAL]})
        outbox = RevealOutbox(reveal, first_delay=0.01, max_delay=0.02)
        drainer = asyncio.create_task(outbox.run())
        outbox.add("m1", "c1")
        outbox.add("m2", "c2")
        outbox.add("m3", "c3")
        for _ in range(200):
            if not outbox.pending():
                break
            await asyncio.sleep(0.01)
        drainer.cancel()
        return reveal, outbox.pending()

    reveal, pending = asyncio.run(run())
    assert pending == set()
    assert reveal.revealed == {"m1", "m3"}
    assert reveal.calls.count("m1") == 3
    assert reveal.calls.count("m2") == 1  # INTERNAL: retrying cannot help


def test_a_match_stays_pending_while_dice_is_down() -> None:
    async def run() -> set[str]:
        reveal = FlakyReveal({"m": [grpc.StatusCode.UNAVAILABLE] * 100})
        outbox = RevealOutbox(reveal)
        outbox.add("m", "c")
        await outbox.drain_once()
        await outbox.drain_once()
        return outbox.pending()

    assert asyncio.run(run()) == {"m"}


def test_matches_that_just_ended_are_revealed_at_once_and_together() -> None:
    async def run() -> tuple[list[str], int, set[str]]:
        started: list[str] = []
        most_at_once = 0
        waiting: set[str] = set()

        async def slow_reveal(match_id: str, correlation_id: str) -> None:
            nonlocal most_at_once
            started.append(match_id)
            waiting.add(match_id)
            most_at_once = max(most_at_once, len(waiting))
            await asyncio.sleep(0.05)
            waiting.discard(match_id)

        outbox = RevealOutbox(slow_reveal, first_delay=10.0)  # a backoff would show
        drainer = asyncio.create_task(outbox.run())
        for match_id in ("m1", "m2", "m3"):
            outbox.add(match_id, f"end:{match_id}")
        await asyncio.sleep(0.3)
        drainer.cancel()
        return started, most_at_once, outbox.pending()

    started, most_at_once, pending = asyncio.run(run())
    assert sorted(started) == ["m1", "m2", "m3"] and pending == set()
    assert most_at_once == 3  # one slow service does not queue the reveals one by one
