"""Messages written at the same moment go as one: a caller's calls made since its last
write, a server's answers to the calls that finished in the same step of its loop (calls
that shared a Kafka transaction finish together). The first message of a group carries the
others in its ``more`` field, within ``GROUP_BYTES``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from google.protobuf.message import Message as ProtoMessage

#: a message carrying a group stays under this size (a larger member goes alone): far below
#: gRPC's 4 MiB default receive limit, with commands of up to 64 KiB and updates of states
GROUP_BYTES = 1024 * 1024


Request = TypeVar("Request")
Reply = TypeVar("Reply")
Message = TypeVar("Message", bound=ProtoMessage)


def in_groups(messages: Sequence[Message], limit: int = GROUP_BYTES) -> Iterator[list[Message]]:
    """``messages`` in order, cut into groups of at most ``limit`` bytes each (a message
    larger than that makes a group of its own)."""
    group: list[Message] = []
    size = 0
    for message in messages:
        length = message.ByteSize()
        if group and size + length > limit:
            yield group
            group, size = [], 0
        group.append(message)
        size += length
    if group:
        yield group


def grouped(messages: Sequence[Message]) -> Iterator[Message]:
    """One message per group of ``messages`` (Call or Answer), the others of its group in
    its ``more``."""
    for group in in_groups(messages):
        first: Any = group[0]
        first.more.extend(group[1:])
        yield group[0]


async def each(messages: AsyncIterator[Any]) -> AsyncIterator[Any]:
    """Every message a stream's messages carry: each, then those in its ``more``."""
    async for message in messages:
        yield message
        for member in message.more:
            yield member


async def batches_as_finished(
    requests: AsyncIterator[Request],
    answer: Callable[[Request], Awaitable[Sequence[Reply]]],
) -> AsyncIterator[list[Reply]]:
    """The replies of ``answer`` to each request, in groups as they became ready: every
    reply of the requests that finished since the last group, in their order. Each request
    is answered in a task of its own, so a slow one holds back no other; once the caller
    stops sending, what is under way is answered and the replies end. ``answer`` must not
    raise: a request's fault is a reply (it would end every other's stream)."""
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
        over = False
        while not over:
            replies = await answers.get()
            if replies is None:
                break
            ready = list(replies)
            while not answers.empty():
                more = answers.get_nowait()
                if more is None:
                    over = True
                    break
                ready.extend(more)
            if ready:
                yield ready
        await taker
    finally:
        # The caller went away: requests under way still finish (a command's append
        # settles), only their replies have nowhere to go.
        taker.cancel()
