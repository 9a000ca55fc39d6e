"""Admission control: refuse new commands early when the stack is behind, with a retry-after;
a match whose views never come holds nobody back."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any, cast

import grpc
import pytest
from prometheus_client import REGISTRY

from services.gateway.admission import LAG_REFRESH_S, Admission
from services.gateway.service import GatewayService
from services.gateway.shards import Shard
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, match_pb2
from tests.unit.fakes import Aborted, FakeContext, Served
from tests.unit.gateway.test_scoring_and_gateway import CONFIG, seat_token


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_commands_past_the_in_flight_bound_are_refused() -> None:
    admission = Admission(max_in_flight=2, max_view_lag_ms=0)
    admission.in_flight = 1
    assert admission.refusal(new_match=False) is None
    admission.in_flight = 2
    refusal = admission.refusal(new_match=False)
    assert refusal is not None and refusal.retry_after_ms > 0
    assert admission.refusal(new_match=True) is not None


def lagging(lag_s: float, clock: Clock, admission: Admission, match_id: str = "m") -> None:
    admission.acknowledged(match_id, 1)
    clock.now += lag_s
    admission.viewed(match_id, 1)


def test_views_arriving_late_refuse_new_matches_then_actions_until_forgotten() -> None:
    clock = Clock()
    admission = Admission(max_in_flight=0, max_view_lag_ms=250, window_s=1.0, clock=clock)
    lagging(0.1, clock, admission)
    assert admission.refusal(new_match=True) is None  # 100 ms behind: within the bound
    lagging(0.6, clock, admission, "n")
    lagging(0.6, clock, admission, "o")  # the median of the last second: 600 ms
    refusal = admission.refusal(new_match=True)
    assert refusal is not None and "600 ms" in refusal.message and refusal.retry_after_ms >= 50
    assert admission.refusal(new_match=False) is None  # matches in play go on
    lagging(1.1, clock, admission, "p")
    lagging(1.1, clock, admission, "q")
    assert admission.refusal(new_match=False) is not None  # past four times the bound
    clock.now += 1.5
    assert admission.refusal(new_match=True) is None


def test_the_median_is_worked_out_again_at_most_every_refresh_period() -> None:
    clock = Clock()
    admission = Admission(max_in_flight=0, max_view_lag_ms=250, clock=clock)
    admission.acknowledged("m", 1)
    clock.now += 0.9
    assert admission.refusal(new_match=True) is None  # no view yet: 0 ms behind
    admission.viewed("m", 1)  # 900 ms after its acknowledgement
    assert admission.refusal(new_match=True) is None  # the last median still stands
    clock.now += LAG_REFRESH_S
    refusal = admission.refusal(new_match=True)
    assert refusal is not None and "900 ms" in refusal.message


def test_a_match_whose_views_never_come_holds_nobody_back() -> None:
    clock = Clock()
    admission = Admission(max_in_flight=0, max_view_lag_ms=250, clock=clock)
    for version in range(1, 100):
        admission.acknowledged("dead-lettered", version)
    clock.now += 10
    admission.acknowledged("m", 1)
    clock.now += 0.01
    admission.viewed("m", 1)
    assert admission.refusal(new_match=True) is None


class SlowBoard:
    """A board shard whose commands are answered when told to."""

    def __init__(self) -> None:
        self.release = asyncio.Event()
        self.calls = 0

    async def submit(self, request: board_pb2.SubmitActionRequest) -> Any:
        self.calls += 1
        await self.release.wait()
        return board_pb2.SubmitActionReply(version=7)


#: ann's seat token, and her command to match m-1 (whose view is at version 6)
TOKEN = (("authorization", f"Bearer {seat_token('ann')}"),)
REQUEST = board_pb2.SubmitActionRequest(match_id="m-1", player="ann", command_id="c" * 16)


async def _gateway(
    board: SlowBoard, max_in_flight: int, max_view_lag_ms: int
) -> tuple[Served, ViewStore]:
    """A gateway with these admission bounds in front of ``board``, match m-1 in its views."""
    shard = cast(Shard, board)
    views = ViewStore()
    await views.put(match_pb2.ViewUpdate(summary=match_pb2.MatchSummary(match_id="m-1", version=6)))
    config = dataclasses.replace(
        CONFIG, max_in_flight=max_in_flight, max_view_lag_ms=max_view_lag_ms
    )
    service = GatewayService([shard], grpc.aio.insecure_channel("127.0.0.1:9"), views, config)
    return Served(service), views


async def test_the_gateway_refuses_with_a_retry_after_and_forwards_nothing() -> None:
    board = SlowBoard()
    service, _ = await _gateway(board, max_in_flight=1, max_view_lag_ms=0)
    token, request = TOKEN, REQUEST
    first = asyncio.create_task(service.SubmitAction(request, FakeContext(token)))
    await asyncio.sleep(0.01)
    refused = FakeContext(token)
    with pytest.raises(Aborted) as aborted:
        await service.SubmitAction(request, refused)
    assert aborted.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert int(dict(refused.trailing)["retry-after-ms"]) > 0
    assert board.calls == 1
    board.release.set()
    assert (await first).version == 7
    assert (await service.SubmitAction(request, FakeContext(token))).version == 7


async def test_the_view_lag_gauge_shows_the_lag_the_gateway_judges() -> None:
    board = SlowBoard()
    board.release.set()
    service, views = await _gateway(board, max_in_flight=0, max_view_lag_ms=250)
    assert (await service.SubmitAction(REQUEST, FakeContext(TOKEN))).version == 7
    await asyncio.sleep(0.06)
    await views.put(match_pb2.ViewUpdate(summary=match_pb2.MatchSummary(match_id="m-1", version=7)))
    lag = REGISTRY.get_sample_value("tabletop_gateway_view_lag_seconds")
    assert lag is not None and 0.06 <= lag < 1
