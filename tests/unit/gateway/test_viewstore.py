"""The gateway's view store: newest wins, waiting for a version, following a match, and
each viewer's view rendered from the newest update once, on request."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator

import pytest

from services.adapters import views
from services.adapters.folding import created
from services.common.envelope import Cause, make_envelope
from services.games.playout import play, random_policy
from services.games.registry import all_games
from services.gateway import viewstore
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
    opened = make_envelope(
        match_id="m",
        stream="board",
        sequence=version,
        payload=pe.MatchCreated(game="crashland", players=["ann"]),
        cause=Cause("c", "c", "board"),
    )
    return views.update(created(opened))


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


def test_a_view_drawn_from_an_update_is_the_view_of_the_match_it_was_made_from() -> None:
    opened = make_envelope(
        match_id="m",
        stream="board",
        sequence=1,
        payload=pe.MatchCreated(game="drillit", players=["ann", "bob"]),
        cause=Cause("c", "c", "board"),
    )
    match = created(opened)
    match.dice_seed = "ab"
    published = match_pb2.ViewUpdate.FromString(views.update_bytes(match))
    for viewer in ("ann", "bob", ""):
        assert ViewStore().view(published, viewer) == views.view(match, viewer)


def fresh(update: match_pb2.ViewUpdate, viewer: str) -> match_pb2.MatchView:
    """``viewer``'s view of ``update`` decoded alone (reusing nothing)."""
    state = views.decode_state(update.summary.game, update.state)
    return views.view(views.from_update(update, state), viewer)


def _playout_updates(
    match_id: str, seed: int, game_name: str = "crashland"
) -> list[match_pb2.ViewUpdate]:
    """A playout's updates, as the projector publishes them."""
    game = all_games()[game_name]
    players = [f"p{i + 1}" for i in range(game.min_players)]
    policies = {p: random_policy(seed * 10 + i) for i, p in enumerate(players)}
    playout = play(game, players, {}, policies, seed=seed)
    state, updates = game.initial_state(), []
    for version, event in enumerate(playout.events, start=1):
        state = game.evolve(state, event)
        summary = match_pb2.MatchSummary(
            match_id=match_id, game=game_name, version=version, players=players
        )
        encoded = views.encode_state(state).encode()
        updates.append(match_pb2.ViewUpdate(summary=summary, state=encoded))
    return updates


@pytest.mark.parametrize("game_name", sorted(all_games()))
async def test_matches_drawn_in_turn_show_the_views_a_fresh_decoding_shows(
    game_name: str,
) -> None:
    """Each update's state is decoded reusing the one drawn before it (and the game's
    views keep what they drew per match): two matches drawn in turn, version by version,
    show for each update the view that decoding it alone shows."""
    store = ViewStore()
    first = _playout_updates("m1", 1, game_name)
    second = _playout_updates("m2", 2, game_name)
    for pair in itertools.zip_longest(first, second):
        for update in pair:
            if update is None:
                continue
            await store.put(update)
            for viewer in ("p1", ""):
                assert store.view(update, viewer) == fresh(update, viewer)


def test_a_finished_match_keeps_no_data_for_a_next_update() -> None:
    """A gateway keeps every match's last update drawn: the data kept to decode the next
    one (~9 KB for Crashland) is dropped once the match is over."""
    *_, last = _playout_updates("m1", 1)
    assert last.summary.status != match_pb2.MATCH_STATUS_FINISHED
    playing = viewstore._Drawn(last, None)
    playing.view("p1")
    assert playing._decoded is not None and playing._decoded[0] is not None
    over = match_pb2.ViewUpdate()
    over.CopyFrom(last)
    over.summary.status = match_pb2.MATCH_STATUS_FINISHED
    finished = viewstore._Drawn(over, playing)
    assert finished.view("p1") == fresh(over, "p1")
    assert finished._decoded is None


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


# -- updates the board sends with its acknowledgements -------------------------------------


class Topic:
    """The views topic as the store reads it: (key, value) records."""

    def __init__(self, *records: bytes) -> None:
        self._records = records

    async def records(self) -> AsyncIterator[tuple[bytes | None, bytes]]:
        for value in self._records:
            yield match_pb2.ViewUpdate.FromString(value).summary.match_id.encode(), value


def raw(match_id: str, version: int, seed: str = "") -> bytes:
    return update(match_id, version, seed).SerializeToString(deterministic=True)


async def test_an_acknowledged_update_is_shown_at_once_and_its_copy_from_the_projector_once() -> (
    None
):
    store = ViewStore()
    told: list[tuple[str, int]] = []
    store.projector_listeners.append(lambda match_id, version: told.append((match_id, version)))
    taken: list[int] = []
    store.listeners.append(lambda match_id, version: taken.append(version))
    await store.put(update("m", 1))
    seen: list[tuple[int, str]] = []

    async def watch() -> None:
        async for u in store.follow("m"):
            seen.append((u.summary.version, u.provenance.dice_seed))

    watcher = asyncio.create_task(watch())
    await asyncio.sleep(0.01)
    store.acknowledged(raw("m", 2))
    got = await store.wait_for("m", 2, timeout=0)  # no wait for the projector
    assert got is not None and got.summary.version == 2
    assert told == [("m", 1)]  # the projector's listeners are not told of the board's
    assert taken == [1, 2]
    await store.consume(Topic(raw("m", 2)))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert seen == [(1, ""), (2, "")]  # the projector's equal copy is no second update
    assert told == [("m", 1), ("m", 2)]
    await store.consume(Topic(raw("m", 2, seed="ab")))  # type: ignore[arg-type]
    await asyncio.sleep(0.01)
    assert seen[-1] == (2, "ab")  # same version, more to show: taken
    assert taken == [1, 2, 2] and told[-1] == ("m", 2)
    watcher.cancel()


async def test_the_projector_behind_the_board_neither_replaces_nor_hides_its_update() -> None:
    store = ViewStore()
    told: list[int] = []
    store.projector_listeners.append(lambda match_id, version: told.append(version))
    store.acknowledged(raw("m", 3))
    store.acknowledged(raw("m", 2))  # a slower reply of an earlier command: not taken
    await store.consume(Topic(raw("m", 2), raw("m", 3)))  # type: ignore[arg-type]
    latest = store.latest("m")
    assert latest is not None and latest.summary.version == 3
    assert told == [2, 3]  # each of the projector's versions measured as it came
    assert not store._acknowledged  # nothing left waiting for a copy
    await store.put(update("m", 5))
    store.acknowledged(raw("m", 4))  # the projector came first: the board's older one not taken
    latest = store.latest("m")
    assert latest is not None and latest.summary.version == 5


async def test_acknowledged_updates_waiting_for_their_copy_are_bounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(viewstore, "MAX_ACKNOWLEDGED", 3)
    store = ViewStore()
    for i in range(5):
        store.acknowledged(raw(f"m{i}", 1))
    assert list(store._acknowledged) == ["m2", "m3", "m4"]
    told: list[str] = []
    store.projector_listeners.append(lambda match_id, version: told.append(match_id))
    await store.consume(Topic(raw("m0", 1), raw("m4", 1)))  # type: ignore[arg-type]
    assert told == ["m0", "m4"]  # a forgotten one's copy is read as any update
    assert {store.latest(f"m{i}").summary.version for i in range(5)} == {1}  # type: ignore[union-attr]


def seated(match_id: str, version: int, bots: dict[str, str], finished: bool = False) -> bytes:
    status = match_pb2.MATCH_STATUS_FINISHED if finished else match_pb2.MATCH_STATUS_ACTIVE
    summary = match_pb2.MatchSummary(
        match_id=match_id, version=version, bot_levels=bots, status=status
    )
    return match_pb2.ViewUpdate(summary=summary).SerializeToString()


async def test_the_matches_seating_bots_are_those_in_play_with_a_bot_seat_now() -> None:
    store = ViewStore()
    await store.put(match_pb2.ViewUpdate.FromString(seated("a", 1, {"bob": "hard"})))
    await store.put(match_pb2.ViewUpdate.FromString(seated("b", 1, {})))
    assert [s.match_id for s in store.bot_seated()] == ["a"]
    store.acknowledged(seated("b", 2, {"ann": "easy"}))  # a seat handed over to a bot
    assert sorted(s.match_id for s in store.bot_seated()) == ["a", "b"]
    assert [s.version for s in store.bot_seated() if s.match_id == "b"] == [2]
    await store.put(match_pb2.ViewUpdate.FromString(seated("a", 2, {"bob": "hard"}, True)))
    store.acknowledged(seated("b", 3, {}))  # taken back by a person
    assert store.bot_seated() == []
