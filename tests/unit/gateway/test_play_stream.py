"""The merging of a PlayMatch stream (services/gateway/play_stream.py), without a server: answers
by id, the bound on actions in flight, faults, and the end once the views are over."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from services.common.metrics import INTERNAL_DETAILS
from services.gateway.play_stream import (
    MAX_IN_FLIGHT,
    MAX_UNREAD,
    AckWithView,
    Play,
    refusal_answer,
)
from services.gateway.refusals import Refused
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2

MATCH = "m1"


async def _requests(queue: asyncio.Queue[gateway_pb2.PlayRequest | None]) -> AsyncIterator[Any]:
    while (request := await queue.get()) is not None:
        yield request


async def _views(queue: asyncio.Queue[match_pb2.ViewUpdate]) -> AsyncIterator[Any]:
    while True:
        yield await queue.get()


def _action(ident: int, command: str = "c") -> gateway_pb2.PlayRequest:
    return gateway_pb2.PlayRequest(
        id=ident, action=board_pb2.SubmitActionRequest(player="p", command_id=command)
    )


def _update(version: int) -> match_pb2.ViewUpdate:
    update = match_pb2.ViewUpdate()
    update.summary.version = version
    return update


class Harness:
    def __init__(self, submit: Any, latest: Any = None) -> None:
        self.requests: asyncio.Queue[gateway_pb2.PlayRequest | None] = asyncio.Queue()
        self.views: asyncio.Queue[match_pb2.ViewUpdate] = asyncio.Queue()
        self.play = Play(MATCH, submit, latest)
        self.out = self.play.run(_requests(self.requests), _views(self.views))

    async def next(self) -> Any:
        return await asyncio.wait_for(anext(self.out), 5)


async def test_actions_are_answered_by_id_with_the_match_filled_in() -> None:
    seen: list[str] = []

    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        seen.append(request.match_id)
        return board_pb2.SubmitActionReply(version=int(request.command_id))

    harness = Harness(submit)
    harness.requests.put_nowait(_action(7, "3"))
    answer = await harness.next()
    assert answer.id == 7 and answer.ack.version == 3
    assert seen == [MATCH]
    await harness.out.aclose()


async def test_an_ack_brings_the_newest_update_when_it_has_the_acks_version() -> None:
    newest = {"update": _update(1)}

    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        version = int(request.command_id)
        if version <= 3:  # the board's update reaches the view store before its ack
            newest["update"] = _update(version)
        return board_pb2.SubmitActionReply(version=version)

    harness = Harness(submit, latest=lambda: newest["update"])
    first = newest["update"]
    harness.views.put_nowait(first)
    assert await harness.next() is first
    harness.requests.put_nowait(_action(7, "2"))
    with_view = await harness.next()
    assert isinstance(with_view, AckWithView)
    assert with_view.answer.id == 7 and with_view.update.summary.version == 2
    # the follower's copy of that update does not go out again; a newer one does
    harness.views.put_nowait(with_view.update)
    harness.views.put_nowait(_update(3))
    later = await harness.next()
    assert isinstance(later, match_pb2.ViewUpdate) and later.summary.version == 3
    # an ack the newest update has not reached goes alone (its view will follow)
    harness.requests.put_nowait(_action(8, "9"))
    alone = await harness.next()
    assert isinstance(alone, gateway_pb2.PlayUpdate) and alone.ack.version == 9
    await harness.out.aclose()


async def test_without_latest_acks_and_views_go_apart() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        return board_pb2.SubmitActionReply(version=int(request.command_id))

    harness = Harness(submit)
    harness.requests.put_nowait(_action(7, "2"))
    answer = await harness.next()
    assert isinstance(answer, gateway_pb2.PlayUpdate) and answer.ack.version == 2
    await harness.out.aclose()


async def test_a_refusal_is_an_answer_with_its_retry_after_and_the_stream_goes_on() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        if request.command_id == "no":
            raise Refused(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "too many requests",
                (("retry-after-ms", "250"),),
            )
        return board_pb2.SubmitActionReply(version=9)

    harness = Harness(submit)
    harness.requests.put_nowait(_action(1, "no"))
    refused = (await harness.next()).refused
    assert (refused.code, refused.message, refused.retry_after_ms) == (
        "RESOURCE_EXHAUSTED",
        "too many requests",
        250,
    )
    harness.requests.put_nowait(_action(2, "yes"))
    assert (await harness.next()).ack.version == 9
    await harness.out.aclose()


async def test_past_the_bound_an_action_is_refused_not_queued() -> None:
    release = asyncio.Event()

    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        await release.wait()
        return board_pb2.SubmitActionReply(version=1)

    harness = Harness(submit)
    for ident in range(1, MAX_IN_FLIGHT + 2):
        harness.requests.put_nowait(_action(ident))
    over = await harness.next()
    assert over.id == MAX_IN_FLIGHT + 1 and over.refused.code == "RESOURCE_EXHAUSTED"
    release.set()
    answered = {(await harness.next()).id for _ in range(MAX_IN_FLIGHT)}
    assert answered == set(range(1, MAX_IN_FLIGHT + 1))
    await harness.out.aclose()


async def test_a_fault_is_internal_with_a_fixed_sentence() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        raise KeyError("level_4")

    harness = Harness(submit)
    harness.requests.put_nowait(_action(1))
    refused = (await harness.next()).refused
    assert refused.code == "INTERNAL" and refused.message == INTERNAL_DETAILS
    assert "KeyError" not in refused.message and "level_4" not in refused.message
    await harness.out.aclose()


async def test_once_the_views_are_over_it_sends_the_answers_owed_and_ends() -> None:
    release = asyncio.Event()

    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        await release.wait()
        return board_pb2.SubmitActionReply(version=5)

    harness = Harness(submit)
    harness.views.put_nowait(_update(4))
    assert (await harness.next()).summary.version == 4
    harness.requests.put_nowait(_action(1))
    await asyncio.sleep(0.01)  # the action is in flight
    harness.play.views_ended()
    harness.views.put_nowait(_update(5))  # after the last view: never sent
    release.set()
    assert (await harness.next()).ack.version == 5
    with pytest.raises(StopAsyncIteration):
        await harness.next()


def test_a_refusal_answers_what_submit_action_would_have_ended_with() -> None:
    refusal = Refused(
        grpc.StatusCode.FAILED_PRECONDITION,
        "not your turn",
        (("tabletop-reason", "NOT_YOUR_TURN"),),
    )
    answer = refusal_answer(3, refusal)
    assert answer.id == 3
    assert (answer.refused.code, answer.refused.message, answer.refused.reason) == (
        "FAILED_PRECONDITION",
        "not your turn",
        "NOT_YOUR_TURN",
    )
    assert answer.refused.retry_after_ms == 0


async def test_views_are_coalesced_to_the_newest_for_a_slow_reader() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        raise AssertionError("no action is sent")

    harness = Harness(submit)
    harness.views.put_nowait(_update(1))
    assert (await harness.next()).summary.version == 1
    for version in (2, 3):
        harness.views.put_nowait(_update(version))
    await asyncio.sleep(0.01)  # 2 and 3 arrive while the client reads nothing
    assert (await harness.next()).summary.version == 3
    harness.views.put_nowait(_update(4))
    assert (await harness.next()).summary.version == 4
    await harness.out.aclose()


async def test_a_client_that_does_not_read_is_not_read_either() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        raise AssertionError("no action is sent")

    harness = Harness(submit)
    sent = MAX_UNREAD * 3
    for ident in range(1, sent + 1):  # each refused (a second watch): an answer apiece
        harness.requests.put_nowait(
            gateway_pb2.PlayRequest(id=ident, watch=gateway_pb2.WatchMatchRequest())
        )
    first = await harness.next()
    await asyncio.sleep(0.05)
    # one answer taken; then the reader stopped once MAX_UNREAD waited (holding one more)
    assert harness.requests.qsize() == sent - (1 + MAX_UNREAD + 1)
    answers = [first, *[await harness.next() for _ in range(sent - 1)]]
    assert [a.id for a in answers] == list(range(1, sent + 1))
    assert {a.refused.code for a in answers} == {"INVALID_ARGUMENT"}
    await harness.out.aclose()


async def test_an_undo_is_answered_by_id_and_a_refused_one_too() -> None:
    async def submit(request: board_pb2.SubmitActionRequest) -> Any:
        raise AssertionError("an undo is no action")

    taken: list[str] = []

    async def undo(request: gateway_pb2.UndoActionRequest) -> Any:
        taken.append(request.match_id)
        if len(taken) > 1:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "nothing to take back")
        return gateway_pb2.UndoActionReply(version=9)

    harness = Harness(submit)
    harness.play = Play(MATCH, submit, None, undo)
    harness.out = harness.play.run(_requests(harness.requests), _views(harness.views))
    harness.requests.put_nowait(gateway_pb2.PlayRequest(id=4, undo=gateway_pb2.UndoActionRequest()))
    answer = await harness.next()
    assert answer.id == 4 and answer.undone.version == 9
    harness.requests.put_nowait(gateway_pb2.PlayRequest(id=5, undo=gateway_pb2.UndoActionRequest()))
    answer = await harness.next()
    assert answer.id == 5 and answer.refused.code == "FAILED_PRECONDITION"
    assert taken == [MATCH, MATCH]  # the stream's match filled in
    other = gateway_pb2.UndoActionRequest(match_id="elsewhere")
    harness.requests.put_nowait(gateway_pb2.PlayRequest(id=6, undo=other))
    answer = await harness.next()
    assert answer.id == 6 and answer.refused.code == "INVALID_ARGUMENT"
    await harness.out.aclose()
