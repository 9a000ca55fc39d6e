"""The gateway's view store keeps a match's state only while it is used: finished matches
leave after a grace, idle ones after a longer time, the least recently used past a bound;
an evicted match keeps its summary and is fetched again for its next view (a fake clock,
a loader standing in for the board's events)."""

from __future__ import annotations

import asyncio

import pytest

from services.adapters import views
from services.adapters.folding import created
from services.common.envelope import Cause, make_envelope
from services.gateway.viewstore import Holding, ViewStore
from tabletop.v1 import match_pb2
from tabletop.v1 import platform_events_pb2 as pe

FINISHED_S, IDLE_S = 60.0, 600.0


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Authority:
    """The newest update of each match, as fetching it from its events gives it."""

    def __init__(self) -> None:
        self.updates: dict[str, match_pb2.ViewUpdate] = {}
        self.fetched: list[str] = []
        self.gate: asyncio.Event | None = None

    async def __call__(self, match_id: str) -> match_pb2.ViewUpdate:
        self.fetched.append(match_id)
        if self.gate is not None:
            await self.gate.wait()
        return self.updates[match_id]


def crashland(match_id: str, version: int, finished: bool = False) -> match_pb2.ViewUpdate:
    opened = make_envelope(
        match_id=match_id,
        stream="board",
        sequence=version,
        payload=pe.MatchCreated(game="crashland", players=["ann", "bob"]),
        cause=Cause("c", "c", "board"),
    )
    update = views.update(created(opened))
    if finished:
        update.summary.status = match_pb2.MATCH_STATUS_FINISHED
    return update


def store(max_held: int = 100) -> tuple[ViewStore, Clock, Authority]:
    clock, authority = Clock(), Authority()
    views_ = ViewStore(Holding(FINISHED_S, IDLE_S, max_held), clock)
    views_.load_with(authority)
    return views_, clock, authority


async def published(views_: ViewStore, authority: Authority, update: match_pb2.ViewUpdate) -> None:
    authority.updates[update.summary.match_id] = update
    await views_.put(update)


def evicted(views_: ViewStore, match_id: str) -> bool:
    latest = views_.latest(match_id)
    assert latest is not None  # the summary stays
    return not latest.state


async def test_a_finished_match_leaves_after_its_grace_and_is_fetched_again_for_a_view() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 7, finished=True))
    before = views_.view(views_.latest("m"), "ann")  # type: ignore[arg-type]
    clock.now += FINISHED_S - 1
    assert views_.evict() == 0 and not evicted(views_, "m")
    clock.now += 2
    assert views_.evict() == 1 and evicted(views_, "m")
    latest = views_.latest("m")
    assert latest is not None and latest.summary.version == 7
    assert latest.summary.status == match_pb2.MATCH_STATUS_FINISHED
    assert views_.held() == 0
    with pytest.raises(LookupError):
        views_.view(latest, "ann")
    await views_.restore("m")
    assert authority.fetched == ["m"] and views_.held() == 1
    assert views_.view(views_.latest("m"), "ann") == before  # type: ignore[arg-type]


async def test_an_unfinished_match_stays_while_used_and_leaves_once_idle() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 3))
    clock.now += FINISHED_S + 1  # a finished match's grace means nothing to it
    assert views_.evict() == 0
    clock.now += IDLE_S - FINISHED_S - 2
    await views_.restore("m")  # a view asked of it: used now
    clock.now += IDLE_S - 1
    assert views_.evict() == 0
    await published(views_, authority, crashland("m", 4))  # an update: used now
    clock.now += IDLE_S - 1
    assert views_.evict() == 0 and not evicted(views_, "m")
    clock.now += 2
    assert views_.evict() == 1 and evicted(views_, "m")
    assert authority.fetched == []


async def test_past_the_bound_finished_matches_go_first_then_the_least_recently_used() -> None:
    views_, clock, authority = store(max_held=2)
    await published(views_, authority, crashland("a", 1))
    clock.now += 1
    await published(views_, authority, crashland("b", 1, finished=True))
    clock.now += 1
    await published(views_, authority, crashland("c", 1))
    assert views_.held() == 2 and evicted(views_, "b")
    clock.now += 1
    await views_.restore("a")  # a used after c
    await published(views_, authority, crashland("d", 1))
    assert views_.held() == 2 and evicted(views_, "c")
    assert not evicted(views_, "a") and not evicted(views_, "d")


async def test_a_new_update_of_an_evicted_match_brings_it_back_without_a_fetch() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 2))
    clock.now += IDLE_S + 1
    views_.evict()
    await published(views_, authority, crashland("m", 3))
    assert not evicted(views_, "m") and views_.held() == 1
    await views_.restore("m")
    assert authority.fetched == []
    assert [s.version for s in views_.summaries()] == [3]


async def test_a_followed_match_is_not_evicted_and_its_followers_get_its_state() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 2))
    clock.now += IDLE_S + 1
    views_.evict()  # evicted before anyone follows it: the follow fetches it
    follow = views_.follow("m")
    first = await anext(follow)
    assert first.state and first.summary.version == 2 and authority.fetched == ["m"]
    clock.now += 10 * IDLE_S
    assert views_.evict() == 0 and not evicted(views_, "m")
    await follow.aclose()  # type: ignore[attr-defined]
    clock.now += IDLE_S + 1
    assert views_.evict() == 1


async def test_concurrent_views_of_an_evicted_match_fetch_it_once() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 5, finished=True))
    clock.now += FINISHED_S + 1
    views_.evict()
    authority.gate = asyncio.Event()
    restores = [asyncio.create_task(views_.restore("m")) for _ in range(5)]
    await asyncio.sleep(0)
    authority.gate.set()
    await asyncio.gather(*restores)
    assert authority.fetched == ["m"] and not evicted(views_, "m")


async def test_a_fetch_older_than_what_was_shown_is_refused_and_the_match_stays_evicted() -> None:
    views_, clock, authority = store()
    await published(views_, authority, crashland("m", 5))
    clock.now += IDLE_S + 1
    views_.evict()
    authority.updates["m"] = crashland("m", 4)  # a lagging source
    with pytest.raises(LookupError):
        await views_.restore("m")
    assert evicted(views_, "m")
    latest = views_.latest("m")
    assert latest is not None and latest.summary.version == 5


async def test_a_limit_of_zero_is_off() -> None:
    clock, authority = Clock(), Authority()
    views_ = ViewStore(Holding(0, 0, 0), clock)
    views_.load_with(authority)
    for match_id, finished in (("a", True), ("b", False)):
        await published(views_, authority, crashland(match_id, 1, finished))
    clock.now += 10**9
    assert views_.evict() == 0 and views_.held() == 2
