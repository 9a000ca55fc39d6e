"""Grouping on long-lived streams: a service's replies that become ready in one step of the
loop go out together (``batches_as_finished``), and a caller's requests made while no write
is under way go out in one write (``StreamCalls``' outbox). Pure asyncio, no gRPC: the
transport's side is in test_command_stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from services.common.replies import batches_as_finished, in_groups, replies_as_finished
from services.common.stream_calls import Pending, StreamCalls
from tabletop.v1 import board_pb2


async def each(*items: asyncio.Future[str]) -> AsyncIterator[asyncio.Future[str]]:
    for item in items:
        yield item


async def answer(request: asyncio.Future[str]) -> list[str]:
    return [await request]


async def test_replies_ready_in_one_step_come_as_one_group() -> None:
    loop = asyncio.get_running_loop()
    first, second, third = (loop.create_future() for _ in range(3))
    groups: list[list[str]] = []

    async def collect() -> None:
        async for group in batches_as_finished(each(first, second, third), answer):
            groups.append(group)

    collecting = asyncio.create_task(collect())
    await asyncio.sleep(0)
    third.set_result("c")
    first.set_result("a")  # c and a finish in the same step
    await asyncio.sleep(0.01)
    second.set_result("b")
    await asyncio.wait_for(collecting, 5)
    assert [sorted(group) for group in groups] == [["a", "c"], ["b"]]


async def test_replies_as_finished_gives_the_same_replies_one_by_one() -> None:
    loop = asyncio.get_running_loop()
    first, second = loop.create_future(), loop.create_future()
    second.set_result("b")
    first.set_result("a")
    replies = [reply async for reply in replies_as_finished(each(first, second), answer)]
    assert sorted(replies) == ["a", "b"] and len(replies) == 2


def test_groups_stay_under_their_size_and_a_larger_message_goes_alone() -> None:
    def sized(n: int) -> board_pb2.SubmitActionsRequest:
        return board_pb2.SubmitActionsRequest(
            id=n, command=board_pb2.SubmitActionRequest(command_id="x" * 90)
        )

    messages = [sized(n) for n in range(1, 6)]
    size = messages[0].ByteSize()
    cut = [[m.id for m in group] for group in in_groups(messages, limit=2 * size)]
    assert cut == [[1, 2], [3, 4], [5]]
    assert [[m.id for m in g] for g in in_groups(messages, limit=size // 2)] == [
        [n] for n in range(1, 6)
    ]


class Call:
    """A stream call's writing side: records each message, or fails every write."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.written: list[Any] = []
        self.error = error
        self.ended = asyncio.Event()
        self.wrote = asyncio.Event()

    async def write(self, message: Any) -> None:
        await asyncio.sleep(0.005)
        if self.error is not None:
            raise self.error
        self.written.append(message)
        self.wrote.set()

    def done(self) -> bool:
        return False

    def cancel(self) -> None:
        self.ended.set()

    def __aiter__(self) -> Call:
        return self

    async def __anext__(self) -> Any:
        await self.ended.wait()  # no replies: the stream ends when cancelled
        raise StopAsyncIteration


async def writes(call: Call, count: int) -> list[Any]:
    """What ``call`` has written once it wrote ``count`` messages."""
    while len(call.written) < count:
        call.wrote.clear()
        await call.wrote.wait()
    return call.written


def request(name: str) -> Callable[[int], tuple[int, str]]:
    return lambda ident: (ident, name)


class Calls(StreamCalls):
    """Writes what it is asked as (id, request); a message carries a group when ``groups``."""

    def __init__(self, call: Call, groups: bool) -> None:
        super().__init__(lambda: call)
        self.groups = groups

    async def send(self, call: Any, requests: list[Any]) -> None:
        if self.groups:
            await call.write(requests)
        else:
            await super().send(call, requests)

    def settle(self, reply: Any, pending: Pending) -> None:
        pending.answer.set_result(reply)

    def failure(self, error: Any, stopping: bool) -> Exception:
        return RuntimeError("the stream ended")


async def test_requests_made_in_one_step_go_out_in_one_write() -> None:
    call = Call()
    calls = Calls(call, groups=True)
    asks = [asyncio.create_task(calls.ask(request(n))) for n in "abc"]
    assert await asyncio.wait_for(writes(call, 1), 5) == [[(1, "a"), (2, "b"), (3, "c")]]
    later = asyncio.create_task(calls.ask(lambda ident: (ident, "d")))
    assert (await asyncio.wait_for(writes(call, 2), 5))[1:] == [[(4, "d")]]
    for task in [*asks, later]:
        task.cancel()
    await calls.close()


async def test_a_service_that_reads_no_groups_gets_one_message_per_request() -> None:
    call = Call()
    calls = Calls(call, groups=False)
    asks = [asyncio.create_task(calls.ask(request(n))) for n in "ab"]
    assert await asyncio.wait_for(writes(call, 2), 5) == [(1, "a"), (2, "b")]
    for task in asks:
        task.cancel()
    await calls.close()


async def test_a_failed_write_fails_every_request_it_carried_with_the_writes_error() -> None:
    calls = Calls(Call(error=asyncio.InvalidStateError("the stream ended")), groups=True)
    outcomes = await asyncio.gather(
        calls.ask(lambda ident: (ident, "a")),
        calls.ask(lambda ident: (ident, "b")),
        return_exceptions=True,
    )
    assert [type(outcome) for outcome in outcomes] == [asyncio.InvalidStateError] * 2
    await calls.close()


async def test_a_request_whose_caller_gave_up_before_the_write_is_not_written() -> None:
    call = Call()
    calls = Calls(call, groups=True)
    first = asyncio.create_task(calls.ask(lambda ident: (ident, "x")))
    await asyncio.sleep(0)  # the writer is writing x
    given_up = asyncio.create_task(calls.ask(lambda ident: (ident, "a")))
    kept = asyncio.create_task(calls.ask(lambda ident: (ident, "b")))
    await asyncio.sleep(0)  # a and b wait in the outbox
    given_up.cancel()
    assert await asyncio.wait_for(writes(call, 2), 5) == [[(1, "x")], [(3, "b")]]
    with pytest.raises(asyncio.CancelledError):
        await given_up
    first.cancel()
    kept.cancel()
    await calls.close()
