"""The gateway's view store: newest wins, waiting for a version, following a match, and
each viewer's view rendered from the newest update once, on request."""

from __future__ import annotations

import asyncio

from services.adapters.folding import FoldedMatch
from services.adapters.projection import Projection, PublishedMatch
from services.common.envelope import Cause, make_envelope
from services.gateway.viewstore import ViewStore
from tabletop.v1 import match_pb2
from tabletop.v1 import platform_events_pb2 as pe


def update(match_id: str, version: int, seed: str = "") -> match_pb2.ViewUpdate:
    return match_pb2.ViewUpdate(
        summary=match_pb2.MatchSummary(match_id=match_id, version=version),
        provenance=match_pb2.Provenance(dice_seed=seed),
    )


def crashland(version: int) -> match_pb2.ViewUpdate:
    """A new Crashland match's update, as the projector publishes it, at ``version``."""
    created = make_envelope(
        match_id="m",
        stream="board",
        sequence=version,
        payload=pe.MatchCreated(game="crashland", players=["ann"]),
        cause=Cause("c", "c", "board"),
    )
    return Projection(FoldedMatch.created(created)).update()


async def test_a_view_is_rendered_from_the_newest_update_once_and_only_for_a_seat() -> None:
    store = ViewStore()
    first = crashland(1)
    await store.put(first)
    view = store.view(first, "ann")
    assert view is not None and (view.viewer, view.version) == ("ann", 1)
    assert view.game_view.WhichOneof("game") == "crashland"
    assert store.view(first, "ann") is view  # kept, not rendered again
    assert store.view(first, "bob") is None  # no such seat
    assert store.view(first, "") is not None  # the spectator
    second = crashland(2)
    await store.put(second)
    newer = store.view(second, "ann")
    assert newer is not None and newer.version == 2
    assert store.view(second, "ann") is newer


def test_a_published_view_is_the_view_the_projection_renders() -> None:
    created = make_envelope(
        match_id="m",
        stream="board",
        sequence=1,
        payload=pe.MatchCreated(game="drillit", players=["ann", "bob"]),
        cause=Cause("c", "c", "board"),
    )
    projection = Projection(FoldedMatch.created(created))
    projection.dice_seed = "ab"
    published = PublishedMatch(
        match_pb2.ViewUpdate.FromString(projection.update().SerializeToString())
    )
    for viewer in ("ann", "bob", ""):
        assert published.view(viewer) == projection.view_for(viewer)


async def test_an_older_update_never_replaces_a_newer_one() -> None:
    store = ViewStore()
    await store.put(update("m", 5))
    await store.put(update("m", 3))
    latest = store.latest("m")
    assert latest is not None and latest.summary.version == 5


async def test_wait_for_returns_once_the_version_arrives_and_none_on_timeout() -> None:
    store = ViewStore()
    waiting = asyncio.create_task(store.wait_for("m", 2, timeout=5))
    await store.put(update("m", 1))
    await asyncio.sleep(0)
    assert not waiting.done()
    await store.put(update("m", 2))
    got = await waiting
    assert got is not None and got.summary.version == 2
    assert await store.wait_for("m", 9, timeout=0.05) is None


async def test_follow_yields_each_new_update_including_same_version_reveals() -> None:
    store = ViewStore()
    await store.put(update("m", 1))
    seen: list[tuple[int, str]] = []

    async def watch() -> None:
        async for u in store.follow("m"):
            seen.append((u.summary.version, u.provenance.dice_seed))
            if len(seen) == 3:
                return

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.01)
    await store.put(update("m", 2))
    await asyncio.sleep(0.01)
    await store.put(update("m", 2, seed="ab"))
    await asyncio.wait_for(watcher, 5)
    assert seen == [(1, ""), (2, ""), (2, "ab")]


async def test_waiters_of_one_match_are_not_woken_by_another_and_leave_nothing_behind() -> None:
    store = ViewStore()
    waiting = asyncio.create_task(store.wait_for("a", 1, timeout=5))
    await asyncio.sleep(0)
    signal = store._signals["a"]
    await store.put(update("b", 1))
    await asyncio.sleep(0)
    assert not signal.changed.is_set() and not waiting.done()
    await store.put(update("a", 1))
    found = await waiting
    assert found is not None and found.summary.version == 1
    assert await store.wait_for("nowhere", 1, timeout=0.01) is None
    assert store._signals == {}  # a wait for a match that never comes is forgotten
