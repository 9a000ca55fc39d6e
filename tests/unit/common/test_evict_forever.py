"""A pass of eviction that fails is logged and the next one runs: the loop is a background
task nobody awaits, so an exception that ended it would stop eviction silently for the
life of the process."""

from __future__ import annotations

import asyncio

from services.common.holding import Holding, evict_forever


def test_a_failed_pass_does_not_end_eviction() -> None:
    async def main() -> int:
        passes = 0
        third = asyncio.Event()

        def evict() -> int:
            nonlocal passes
            passes += 1
            if passes == 1:
                raise RuntimeError("a match could not be let go of")
            if passes == 3:
                third.set()
            return 0

        task = asyncio.create_task(evict_forever(Holding(idle_held_s=0.002), evict))
        waiting = asyncio.create_task(third.wait())
        await asyncio.wait([task, waiting], timeout=10, return_when=asyncio.FIRST_COMPLETED)
        ended = task.done()
        task.cancel()
        waiting.cancel()
        assert not ended, task.exception()
        return passes

    assert asyncio.run(main()) >= 3
