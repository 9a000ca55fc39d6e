"""The matches in play are bounded: past the bound a new match is refused with a
retry-after and a reason a player understands; finished and abandoned matches free their
place; the count comes from the views, so a restarted gateway counts the same."""

from __future__ import annotations

import dataclasses
from typing import Any, cast

import grpc
import pytest

from services.gateway.inplay import MatchesInPlay
from services.gateway.service import GatewayService, Shard
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.unit.platform.fakes import Aborted, FakeContext
from tests.unit.platform.test_admission import Clock
from tests.unit.platform.test_scoring_and_gateway import CONFIG


def summary(match_id: str, finished: bool = False) -> match_pb2.ViewUpdate:
    status = match_pb2.MATCH_STATUS_FINISHED if finished else match_pb2.MATCH_STATUS_ACTIVE
    return match_pb2.ViewUpdate(
        summary=match_pb2.MatchSummary(match_id=match_id, version=1, status=status)
    )


def test_past_the_bound_a_new_match_is_refused_until_one_finishes() -> None:
    clock = Clock()
    in_play = MatchesInPlay(limit=2, idle_s=600, clock=clock)
    assert in_play.reserve("a") is None
    assert in_play.reserve("b") is None
    refusal = in_play.reserve("c")
    assert refusal is not None
    assert "full" in refusal.message and "2 matches" in refusal.message
    assert refusal.retry_after_ms > 0
    assert in_play.reserve("a") is None  # a retried create of a match in play: no new place
    in_play.viewed("a", finished=False)
    in_play.viewed("a", finished=True)
    assert in_play.reserve("c") is None
    assert in_play.count() == 2


def test_a_match_without_a_view_for_the_idle_timeout_frees_its_place() -> None:
    clock = Clock()
    in_play = MatchesInPlay(limit=1, idle_s=60, clock=clock)
    in_play.viewed("abandoned", finished=False)
    assert in_play.reserve("new") is not None
    clock.now += 30
    assert in_play.reserve("new") is not None
    clock.now += 31
    assert in_play.reserve("new") is None


def test_a_create_that_failed_frees_its_place() -> None:
    in_play = MatchesInPlay(limit=1, idle_s=600, clock=Clock())
    assert in_play.reserve("x") is None
    in_play.release("x")
    assert in_play.reserve("y") is None


def test_the_retry_after_follows_how_often_matches_finish() -> None:
    clock = Clock()
    in_play = MatchesInPlay(limit=10, idle_s=600, clock=clock)
    assert in_play.retry_after_ms() == 5_000  # nothing finished lately: a guess
    for i in range(30):  # a match ends every second
        in_play.viewed(f"m{i}", finished=False)
        clock.now += 1
        in_play.viewed(f"m{i}", finished=True)
    assert 900 <= in_play.retry_after_ms() <= 1_100


def test_a_bound_of_zero_admits_everything() -> None:
    in_play = MatchesInPlay(limit=0, idle_s=600, clock=Clock())
    assert all(in_play.reserve(f"m{i}") is None for i in range(1000))


async def test_the_count_comes_from_the_views_so_a_new_gateway_counts_the_same() -> None:
    views = ViewStore()
    in_play = MatchesInPlay(limit=2, idle_s=600, clock=Clock())
    in_play.follow(views)
    for update in (summary("a"), summary("b"), summary("c"), summary("c", finished=True)):
        await views.put(update)  # what a gateway reads back from the views topic at start
    assert in_play.count() == 2
    assert in_play.reserve("d") is not None


class Board:
    def __init__(self) -> None:
        self.created: list[str] = []

    async def CreateMatch(self, request: board_pb2.CreateMatchRequest) -> Any:
        self.created.append(request.match_id)
        return board_pb2.CreateMatchReply(match_id=request.match_id, version=1)


async def test_the_gateway_refuses_create_match_past_the_bound_and_forwards_nothing() -> None:
    board = Board()
    shard = cast(Shard, type("FakeShard", (), {"board": board})())
    config = dataclasses.replace(CONFIG, max_matches_in_play=1, max_view_lag_ms=0)
    views = ViewStore()
    service = GatewayService([shard], grpc.aio.insecure_channel("127.0.0.1:9"), views, config)

    def opening() -> gateway_pb2.OpenMatchRequest:
        return gateway_pb2.OpenMatchRequest(game="crashland", players=["ann"])

    first = await service.CreateMatch(opening(), FakeContext())
    refused = FakeContext()
    with pytest.raises(Aborted) as aborted:
        await service.CreateMatch(opening(), refused)
    assert aborted.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "full" in aborted.value.details
    assert int(dict(refused.trailing)["retry-after-ms"]) > 0
    assert board.created == [first.match_id]
    await views.put(summary(first.match_id, finished=True))
    await service.CreateMatch(opening(), FakeContext())
    assert len(board.created) == 2
