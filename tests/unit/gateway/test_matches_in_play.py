"""The matches in play are bounded: past the bound a new match is refused with a
retry-after and a reason a player understands; finished and abandoned matches free their
place; the count comes from the views, so a restarted gateway counts the same."""

from __future__ import annotations

import dataclasses
import heapq
import random
from typing import Any, cast

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.config import Config
from services.gateway import inplay
from services.gateway.inplay import MAX_RETRY_MS, RETRY_JITTER, MatchesInPlay
from services.gateway.service import GatewayService
from services.gateway.shards import Shard
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.unit.fakes import Aborted, Served, player_context
from tests.unit.gateway.test_admission import Clock
from tests.unit.gateway.test_scoring_and_gateway import CONFIG


def summary(match_id: str, finished: bool = False) -> match_pb2.ViewUpdate:
    status = match_pb2.MATCH_STATUS_FINISHED if finished else match_pb2.MATCH_STATUS_ACTIVE
    return match_pb2.ViewUpdate(
        summary=match_pb2.MatchSummary(match_id=match_id, version=1, status=status, started=True)
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


def test_a_match_in_its_lobby_holds_no_place() -> None:
    in_play = MatchesInPlay(limit=1, idle_s=600, clock=Clock())
    assert in_play.reserve("lobby") is None  # counted until its first view says
    in_play.viewed("lobby", finished=False, started=False)
    assert in_play.count() == 0
    assert in_play.reserve("honest") is None
    in_play.viewed("honest", finished=False, started=True)
    in_play.viewed("lobby", finished=False, started=True)  # its seats taken later: it plays
    assert in_play.count() == 2  # admitted before the bound was reached: not taken back
    assert in_play.reserve("third") is not None


def test_with_no_match_ending_lately_the_retry_after_is_when_one_will_have_idled() -> None:
    clock = Clock()
    in_play = MatchesInPlay(limit=2, idle_s=20, clock=clock)
    in_play.viewed("a", finished=False)
    clock.now += 8
    in_play.viewed("b", finished=False)
    clock.now += 2
    refusal = in_play.reserve("c")
    assert refusal is not None
    # "a" leaves play 20 s after its last view, 10 s from now (not a guess of 5 s), jittered
    low, high = 1 - RETRY_JITTER, 1 + RETRY_JITTER
    assert 10_000 * low <= refusal.retry_after_ms <= 10_000 * high


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


def _ending_every_second(limit: int, rng: random.Random | None = None) -> tuple[Clock, Any]:
    """A full MatchesInPlay whose matches have been ending one a second for 30 s."""
    clock = Clock()
    in_play = MatchesInPlay(limit=limit, idle_s=600, clock=clock, rng=rng or random.Random(1))
    for i in range(30):
        in_play.viewed(f"old{i}", finished=False)
        clock.now += 1
        in_play.viewed(f"old{i}", finished=True)
    for i in range(limit):
        assert in_play.reserve(f"playing{i}") is None
    return clock, in_play


def _wait_ms(in_play: MatchesInPlay, match_id: str) -> int:
    refusal = in_play.reserve(match_id)
    assert refusal is not None
    return refusal.retry_after_ms


def test_the_retry_after_grows_with_the_clients_waiting_jittered_and_bounded() -> None:
    _, in_play = _ending_every_second(limit=5)
    low, high = 1 - RETRY_JITTER, 1 + RETRY_JITTER
    assert 1_000 * low <= _wait_ms(in_play, "w0") <= 1_000 * high  # alone: a place a second
    for i in range(1, 39):
        _wait_ms(in_play, f"w{i}")
    # 39 others waiting: eight of them come back per freed place, not 39
    assert 5_000 * low <= _wait_ms(in_play, "w39") <= 5_000 * high
    for i in range(40, 1_000):
        _wait_ms(in_play, f"w{i}")
    assert _wait_ms(in_play, "w1000") == MAX_RETRY_MS
    _, fresh = _ending_every_second(limit=5, rng=random.Random(2))
    assert len({_wait_ms(fresh, "same") for _ in range(20)}) > 10  # spread, not one value


def test_a_client_asking_again_counts_once_and_the_message_says_how_many_wait() -> None:
    _, in_play = _ending_every_second(limit=5)
    for i in range(24):
        _wait_ms(in_play, f"w{i}")
    refusal = in_play.reserve("w0")  # w0 again: 23 others wait, not 24
    assert refusal is not None
    assert "23 other players are waiting" in refusal.message
    assert "try again in about 3 s" in refusal.message  # 1 s × 24 / 8, ± a quarter
    assert in_play.waiting() == 24


def test_clients_admitted_or_long_gone_no_longer_count_as_waiting() -> None:
    clock, in_play = _ending_every_second(limit=5)
    for i in range(40):
        _wait_ms(in_play, f"w{i}")
    in_play.viewed("playing0", finished=True)
    assert in_play.reserve("w0") is None  # admitted: no longer waiting
    assert in_play.waiting() == 39
    clock.now += 2 * MAX_RETRY_MS / 1000 + 2  # nobody came back
    assert in_play.waiting() == 0


def _simulate(per_place: int, seconds: float = 300) -> tuple[int, float]:
    """Closed-loop clients as the bench's bots: 100 of them, 20 places, each match lasting
    20 s; a refused client waits its retry-after (jittered ±50%, as the bots do) and asks
    again, a client whose match ended asks for a new one 0-30 s later. Returns the refusals
    and the mean share of the places in play."""
    inplay.RETRIES_PER_PLACE = per_place
    clock = Clock()
    in_play = MatchesInPlay(limit=20, idle_s=600, clock=clock, rng=random.Random(3))
    rng = random.Random(4)
    start = clock.now
    queue: list[tuple[float, int, str, str]] = []  # (when, order, what, client)
    order = 0
    for number in range(100):
        queue.append((start + number / 100, order, "create", str(number)))
        order += 1
    heapq.heapify(queue)
    refusals, generation, filled, last = 0, dict.fromkeys(map(str, range(100)), 0), 0.0, start
    while queue and queue[0][0] < start + seconds:
        when, _, what, client = heapq.heappop(queue)
        filled += in_play.count() * (when - last)
        clock.now = last = when
        match_id = f"{client}-{generation[client]}"
        if what == "create":
            refusal = in_play.reserve(match_id)
            if refusal is None:
                in_play.viewed(match_id, finished=False)
                heapq.heappush(queue, (when + 20, order, "end", client))
            else:
                refusals += 1
                wait = refusal.retry_after_ms / 1000 * rng.uniform(0.5, 1.5)
                heapq.heappush(queue, (when + wait, order, "create", client))
        else:
            in_play.viewed(match_id, finished=True)
            generation[client] += 1
            pause = rng.uniform(0, 30)  # so that freed places go to the waiting too
            heapq.heappush(queue, (when + pause, order, "create", client))
        order += 1
    return refusals, filled / (last - start) / 20


def test_with_many_clients_waiting_far_fewer_retries_are_refused_and_places_stay_filled(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(inplay, "RETRIES_PER_PLACE", inplay.RETRIES_PER_PLACE)
    shipped = inplay.RETRIES_PER_PLACE
    fixed_refusals, fixed_filled = _simulate(per_place=10**9)  # the retry-after of before
    refusals, filled = _simulate(per_place=shipped)
    assert refusals * 5 < fixed_refusals
    assert filled > 0.97 * fixed_filled


def test_a_bound_of_zero_admits_everything() -> None:
    in_play = MatchesInPlay(limit=0, idle_s=600, clock=Clock())
    assert all(in_play.reserve(f"m{i}") is None for i in range(1000))


def test_with_no_bound_matches_idle_past_the_timeout_are_not_kept() -> None:
    """With the bound off nothing calls count(): the views alone must let abandoned
    matches go, or the gateway keeps every unfinished match it ever saw."""
    clock = Clock()
    in_play = MatchesInPlay(limit=0, idle_s=600, clock=clock)
    for i in range(100):
        in_play.viewed(f"abandoned{i}", finished=False)
    clock.now += 601
    in_play.viewed("live", finished=False)
    assert in_play.reserve("new") is None
    assert REGISTRY.get_sample_value("tabletop_gateway_matches_in_play") == 1


def test_as_shipped_a_quiet_evening_of_100_tables_is_never_refused_by_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Admission goes by load (view lag, commands in flight), not by a count of matches
    that says nothing about it: the 33rd table was refused when the bound was 32."""
    monkeypatch.delenv("TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY", raising=False)
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    config = Config.from_env("gateway")
    in_play = MatchesInPlay(config.max_matches_in_play, config.match_idle_s, clock=Clock())
    for i in range(100):
        assert in_play.reserve(f"table{i}") is None
        in_play.viewed(f"table{i}", finished=False)


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
    service = Served(
        GatewayService([shard], grpc.aio.insecure_channel("127.0.0.1:9"), views, config)
    )

    def opening() -> gateway_pb2.OpenMatchRequest:
        return gateway_pb2.OpenMatchRequest(game="crashland", players=["ann"])

    first = await service.CreateMatch(opening(), player_context(CONFIG.token_key))
    refused = player_context(CONFIG.token_key)
    with pytest.raises(Aborted) as aborted:
        await service.CreateMatch(opening(), refused)
    assert aborted.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "full" in aborted.value.details
    assert int(dict(refused.trailing)["retry-after-ms"]) > 0
    assert board.created == [first.match_id]
    await views.put(summary(first.match_id, finished=True))
    await service.CreateMatch(opening(), player_context(CONFIG.token_key))
    assert len(board.created) == 2
