"""Serving many requests on one bidirectional stream (the board's SubmitActions, every
EventSource's StreamEventBatches): each request answered in a task of its own, its replies
sent together as it finishes, so a slow one holds back no other. A caller that reads
groups gets every reply ready in the same step in one message (DESIGN-NOTES 37)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from typing import Any, TypeVar

from google.protobuf.message import Message as ProtoMessage

#: the metadata a caller sends on a stream whose grouped replies it reads (each message
#: carries the others ready with it, e.g. SubmitActionsReply.more)
BATCHED_REPLIES = ("tabletop-replies", "batched")
#: the initial metadata a service sends on a stream whose grouped requests it reads
#: (e.g. SubmitActionsRequest.more)
BATCHED_REQUESTS = ("tabletop-requests", "batched")

#: a message carrying a group stays under this size (a larger member goes alone): far below
#: gRPC's 4 MiB default receive limit, with commands of up to 64 KiB and updates of states
GROUP_BYTES = 1024 * 1024

Request = TypeVar("Request")
Reply = TypeVar("Reply")
Message = TypeVar("Message", bound=ProtoMessage)


async def replies_as_finished(
    requests: AsyncIterator[Request],
    answer: Callable[[Request], Awaitable[Sequence[Reply]]],
) -> AsyncIterator[Reply]:
    """The replies of ``answer`` to each request, in the order the requests finish. Once
    the caller stops sending, what is under way is answered and the stream ends. ``answer``
    must not raise: a request's fault is a reply (it would end every other's stream)."""
    async for ready in batches_as_finished(requests, answer):
        for reply in ready:
            yield reply


async def batches_as_finished(
    requests: AsyncIterator[Request],
    answer: Callable[[Request], Awaitable[Sequence[Reply]]],
) -> AsyncIterator[list[Reply]]:
    """``replies_as_finished``, the replies grouped as they became ready: every reply of
    the requests that finished since the last group, in their order (requests that shared
    a Kafka transaction finish in one step of the loop), so a caller may send each group
    as one message."""
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


async def grouped_replies(
    requests: AsyncIterator[Any],
    answer: Callable[[Any], Awaitable[Sequence[Any]]],
    context: Any,
) -> AsyncIterator[Any]:
    """``replies_as_finished`` for a stream whose messages have a ``more`` field: says in
    its initial metadata that it reads grouped requests and reads each one's ``more``;
    sends every reply ready in one step as one message (the first, the others in its
    ``more``) to a caller that said it reads groups, one per message to any other."""
    await context.send_initial_metadata((BATCHED_REQUESTS,))
    each = _each(requests)
    if not batched_replies(context):
        async for reply in replies_as_finished(each, answer):
            yield reply
        return
    async for ready in batches_as_finished(each, answer):
        for group in in_groups(ready):
            group[0].more.extend(group[1:])
            yield group[0]


async def _each(requests: AsyncIterator[Any]) -> AsyncIterator[Any]:
    async for request in requests:
        yield request
        for grouped in request.more:
            yield grouped


def batched_replies(context: Any) -> bool:
    """Whether the caller of this stream (a grpc.aio servicer context) reads grouped
    replies: a caller that does not say so gets one reply per message."""
    key, value = BATCHED_REPLIES
    return any(k == key and v == value for k, v in context.invocation_metadata() or ())


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
