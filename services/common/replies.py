"""Serving many requests on one bidirectional stream (the board's SubmitActions, every
EventSource's StreamEventBatches): each request answered in a task of its own, its replies
sent together as it finishes, so a slow one holds back no other."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import TypeVar

Request = TypeVar("Request")
Reply = TypeVar("Reply")


async def replies_as_finished(
    requests: AsyncIterator[Request],
    answer: Callable[[Request], Awaitable[Sequence[Reply]]],
) -> AsyncIterator[Reply]:
    """The replies of ``answer`` to each request, in the order the requests finish. Once
    the caller stops sending, what is under way is answered and the stream ends. ``answer``
    must not raise: a request's fault is a reply (it would end every other's stream)."""
    answers: asyncio.Queue[Sequence[Reply] | None] = asyncio.Queue()
    running: set[asyncio.Task[None]] = set()

    async def one(request: Request) -> None:
        answers.put_nowait(await answer(request))

    async def take() -> None:
        async for request in requests:
            task = asyncio.create_task(one(request))
            running.add(task)
            task.add_done_callback(running.discard)
        if running:
            await asyncio.wait(set(running))
        answers.put_nowait(None)

    taker = asyncio.create_task(take())
    try:
        while (replies := await answers.get()) is not None:
            for reply in replies:
                yield reply
        await taker
    finally:
        # The caller went away: requests under way still finish (a command's append
        # settles), only their replies have nowhere to go.
        taker.cancel()
