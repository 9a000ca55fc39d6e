"""What goes together on a Calls stream: a server's answers that become ready in one step of
its loop go out as one message (``batches_as_finished``, ``in_groups``); a caller's calls
made while no write is under way go out in one write, and a write that meets the stream's
end goes once more on a new one (``CallChannel``). Pure asyncio: the streams are stand-ins
(the transport's side is in test_calls)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.common.calls.channel import CallChannel, StreamBroken
from services.common.calls.groups import batches_as_finished, in_groups
from tabletop.v1 import calls_pb2, dice_pb2, dice_pb2_grpc


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


def test_groups_stay_under_their_size_and_a_larger_message_goes_alone() -> None:
    def sized(n: int) -> calls_pb2.Call:
        return calls_pb2.Call(id=n, method="/m", request=b"x" * 90)

    messages = [sized(n) for n in range(1, 6)]
    size = messages[0].ByteSize()
    cut = [[m.id for m in group] for group in in_groups(messages, limit=2 * size)]
    assert cut == [[1, 2], [3, 4], [5]]
    assert [[m.id for m in g] for g in in_groups(messages, limit=size // 2)] == [
        [n] for n in range(1, 6)
    ]


class Stream:
    """A Calls stream's stand-in: records what is written (the calls each message carries),
    or fails every write as a stream that ended does; answers when told to."""

    def __init__(self, ended: bool = False) -> None:
        self.written: list[list[int]] = []
        self.ended = ended
        self.wrote = asyncio.Event()
        self.answers: asyncio.Queue[calls_pb2.Answer | None] = asyncio.Queue()

    async def write(self, message: calls_pb2.Call) -> None:
        await asyncio.sleep(0.005)
        if self.ended:
            raise asyncio.InvalidStateError("the stream ended")
        self.written.append([c.id for c in (message, *message.more)])
        self.wrote.set()

    def done(self) -> bool:
        return False  # its reader sees its end

    def cancel(self) -> None:
        self.answers.put_nowait(None)

    async def __aiter__(self) -> AsyncIterator[calls_pb2.Answer]:
        while not self.ended and (answer := await self.answers.get()) is not None:
            yield answer


class Channel:
    """Opens the given streams one after another."""

    def __init__(self, *streams: Stream) -> None:
        self.streams = list(streams)
        self.opened: list[Stream] = []

    def stream_stream(self, method: str, **_: Any) -> Any:
        def open_stream() -> Stream:
            self.opened.append(self.streams.pop(0))
            return self.opened[-1]

        return open_stream


async def writes(stream: Stream, count: int) -> list[list[int]]:
    """What ``stream`` has written once it wrote ``count`` messages."""
    while len(stream.written) < count:
        stream.wrote.clear()
        await stream.wrote.wait()
    return stream.written


def roll(calls: CallChannel, request_id: str) -> asyncio.Task[Any]:
    request = dice_pb2.RollRequest(match_id="m", request_id=request_id)
    return asyncio.ensure_future(dice_pb2_grpc.DiceStub(calls).Roll(request))


async def test_calls_made_in_one_step_go_out_in_one_write() -> None:
    stream = Stream()
    calls = CallChannel(Channel(stream), "dice")
    asked = [roll(calls, n) for n in "abc"]
    assert await asyncio.wait_for(writes(stream, 1), 5) == [[1, 2, 3]]
    later = roll(calls, "d")
    assert (await asyncio.wait_for(writes(stream, 2), 5))[1:] == [[4]]
    stream.answers.put_nowait(
        calls_pb2.Answer(id=2, reply=dice_pb2.RollReply(values=[5]).SerializeToString())
    )
    assert list((await asyncio.wait_for(asked[1], 5)).values) == [5]
    await calls.close()  # the others are never answered: closing fails them
    for task in (asked[0], asked[2], later):
        with pytest.raises(grpc.aio.AioRpcError):
            await task


async def test_a_call_whose_caller_gave_up_before_the_write_is_not_written() -> None:
    stream = Stream()
    calls = CallChannel(Channel(stream), "dice")
    first = roll(calls, "x")
    await asyncio.sleep(0)  # the writer is writing x
    given_up, kept = roll(calls, "a"), roll(calls, "b")
    await asyncio.sleep(0)  # a and b wait for the next write
    given_up.cancel()
    assert await asyncio.wait_for(writes(stream, 2), 5) == [[1], [3]]
    await calls.close()
    for task in (first, kept):
        with pytest.raises(grpc.aio.AioRpcError):
            await task


async def test_a_write_that_meets_the_streams_end_goes_once_more_on_a_new_stream() -> None:
    fresh = Stream()
    channel = Channel(Stream(ended=True), fresh)
    calls = CallChannel(channel, "dice")
    asked = [roll(calls, n) for n in "ab"]
    assert await asyncio.wait_for(writes(fresh, 1), 5) == [[1, 2]]
    assert len(channel.opened) == 2
    await calls.close()
    for task in asked:
        with pytest.raises(grpc.aio.AioRpcError):
            await task


async def test_a_call_whose_streams_keep_ending_fails_unavailable() -> None:
    channel = Channel(Stream(ended=True), Stream(ended=True), Stream())
    calls = CallChannel(channel, "dice")
    with pytest.raises(StreamBroken) as broken:
        await asyncio.wait_for(roll(calls, "a"), 5)
    assert broken.value.code() == grpc.StatusCode.UNAVAILABLE
    assert len(channel.opened) == 2
    await calls.close()


async def test_a_streams_end_fails_only_the_calls_sent_on_it() -> None:
    first, second = Stream(), Stream()
    calls = CallChannel(Channel(first, second), "dice")
    sent = roll(calls, "a")
    await asyncio.wait_for(writes(first, 1), 5)
    first.cancel()  # the stream ends, its call unanswered
    with pytest.raises(StreamBroken):
        await asyncio.wait_for(sent, 5)
    again = roll(calls, "b")
    assert await asyncio.wait_for(writes(second, 1), 5) == [[2]]
    second.answers.put_nowait(calls_pb2.Answer(id=2, reply=b""))
    assert list((await asyncio.wait_for(again, 5)).values) == []
    await calls.close()
