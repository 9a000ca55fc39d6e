"""The gateway's read side: the newest ViewUpdate of every match, from the views topic
and from the board's acknowledgements.

An update holds the match's secret state, not views: ``view`` renders a viewer's view from
the newest update on its first request and keeps it until the next update, so each
gateway renders only the views its clients watch, each once per version.

Two sources, one content. The projector publishes every match's updates on the views topic,
which every gateway replica follows. The board sends the same update, byte for byte, with
each acknowledgement this gateway forwards (``acknowledged``): the gateway that carried a
command shows its result at once, not after the projector's round trip through Kafka (two
Kafka hops and a fold: at one match ~13 ms of the ~20 ms from action to view). When the
projector's copy arrives it is known by its bytes (their hash, kept instead of them) and
skipped unparsed. ``listeners``
hear of every update taken, from either source (matches in play); ``projector_listeners``
of every record read from the topic, the copies too: they measure the projector
(admission control's view lag).

What stays in memory (``Holding``): a match's state and drawn views only while it is used.
A finished match's after ``finished_s``, an unfinished one's after ``idle_s`` without an
update or a view asked of it, and past ``max_held`` the least recently used, are dropped
(evicted), unless someone follows the match; its summary, seat tokens and provenance stay
(a few hundred bytes: the lobby lists it, access is judged by them, waits compare its
version). The next view asked of an evicted match fetches it again from the authority,
its board events (and its seeds' reveals) folded afresh by ``restore``'s loader: the same
update, byte for byte, that the projector published for its version. Before, every match
the compacted views topic ever held stayed here, state and views, for the process's life.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter, OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from services.adapters.views import Decoded, decode_state_reusing, from_update, view
from services.common.eventlog import Tail
from services.common.logging import get_logger
from services.common.metrics import GATEWAY_MATCHES_FETCHED, GATEWAY_MATCHES_HELD
from services.games.match import Match
from tabletop.v1 import match_pb2

log = get_logger(__name__)

#: the board's updates whose copy from the projector has not come yet, at most (the
#: projector may be behind, or have set a match aside); the oldest are forgotten first,
#: which costs only parsing their copy when it comes
MAX_ACKNOWLEDGED = 10_000
#: how often ``evict_forever`` looks for matches to evict when no update comes to do it
EVICT_EVERY_S = 10.0

#: fetches a match's newest update from the authority (an evicted match's next view)
Loader = Callable[[str], Awaitable[match_pb2.ViewUpdate]]


@dataclass(frozen=True)
class Holding:
    """How long a match's state and views stay in the gateway's memory (see the module
    docstring); TABLETOP_GATEWAY_FINISHED_HELD_S, _IDLE_HELD_S, _MATCHES_HELD. 0 turns a
    limit off, as it does the projector's."""

    #: a finished match's, after its last update or view (replays and late looks)
    finished_s: float = 300.0
    #: an unfinished match's without an update or a view (a turn-based match can last days)
    idle_s: float = 1800.0
    #: at most this many matches' states at once; the least recently used go first
    max_held: int = 20_000


class _Drawn:
    """A match's update as this gateway draws it: decoded into its ``Match`` for the first
    view asked of it, each viewer's view kept until the match's next update.

    Given the match's update drawn before (``before``), the state is decoded reusing what
    did not change since (``views.decode_state_reusing``)."""

    def __init__(self, update: match_pb2.ViewUpdate, before: _Drawn | None) -> None:
        self.update = update
        self._match: Match | None = None
        #: the state's data and the state, to reuse for the next update; none for a
        #: finished match (no update follows, and a gateway keeps every match's last)
        self._decoded: Decoded | None = None
        self._before = before._decoded if before is not None else None
        self._views: dict[str, match_pb2.MatchView] = {}

    def match(self) -> Match:
        if self._match is None:
            update = self.update
            before, self._before = self._before, None
            data, state = decode_state_reusing(update.summary.game, update.state, before)
            self._match = from_update(update, state)
            self._decoded = None if self._match.finished else (data, state)
        return self._match

    def view(self, viewer: str) -> match_pb2.MatchView | None:
        """None for a viewer that is no seat of the match ("" is the spectator)."""
        shown = self._views.get(viewer)
        if shown is None:
            if viewer and viewer not in self.update.summary.players:
                return None
            shown = self._views[viewer] = view(self.match(), viewer)
        return shown


class _Signal:
    """One match's next change: set once, then replaced; counts who waits on it."""

    def __init__(self) -> None:
        self.changed = asyncio.Event()
        self.waiters = 0


class ViewStore:
    """Each match has its own signal: an update wakes that match's waiters only, not every
    waiter of every match (one shared Condition made each update O(all watchers))."""

    def __init__(
        self,
        holding: Holding = Holding(),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._holding = holding
        self._clock = clock
        #: each match's newest update; an evicted match's without its state (``_evicted``)
        self._updates: dict[str, match_pb2.ViewUpdate] = {}
        #: matches whose state is held, by when last used, least recently first: the
        #: unfinished and the finished apart, each with its own horizon
        self._playing: OrderedDict[str, float] = OrderedDict()
        self._finished: OrderedDict[str, float] = OrderedDict()
        #: matches whose update here lacks its state (fetched again by ``restore``)
        self._evicted: set[str] = set()
        #: open ``follow``s of each match: a followed match is never evicted
        self._followers: Counter[str] = Counter()
        #: restores under way, so concurrent views of an evicted match fetch it once
        self._restoring: dict[str, asyncio.Future[None]] = {}
        self._loader: Loader | None = None
        #: each match's update drawn last, with its views (replaced by the next update's
        #: once that is drawn, which reuses its decoded state)
        self._drawn: dict[str, _Drawn] = {}
        #: unfinished matches with seats reserved for bots, by id: what the bots service
        #: lists every second, without walking every match this gateway has seen
        self._bot_seated: dict[str, match_pb2.MatchSummary] = {}
        #: bumped on every accepted update, including same-version ones (revealed seeds)
        self._revisions: dict[str, int] = {}
        #: only matches someone waits on (dropped when the last waiter leaves)
        self._signals: dict[str, _Signal] = {}
        #: match → (version, hash of the bytes) of the board's newest update for it, until
        #: the projector's copy of that version (or a newer one) comes on the topic; the
        #: hash (SipHash, keyed per process) stands in for bytes it would take a 64-bit
        #: collision under an unknown key to mistake
        self._acknowledged: OrderedDict[str, tuple[int, int]] = OrderedDict()
        #: told (match id, version) of every update taken, from the topic or the board
        self.listeners: list[Callable[[str, int], None]] = []
        #: told (match id, version) of every update read from the views topic
        self.projector_listeners: list[Callable[[str, int], None]] = []

    def latest(self, match_id: str) -> match_pb2.ViewUpdate | None:
        """The match's newest update; an evicted match's has no state (``restore`` it
        before drawing a view), its summary, seat tokens and provenance are whole."""
        return self._updates.get(match_id)

    def load_with(self, loader: Loader) -> None:
        """Where evicted matches are fetched again from."""
        self._loader = loader

    def held(self) -> int:
        """Matches whose state is in memory now."""
        return len(self._playing) + len(self._finished)

    async def restore(self, match_id: str) -> None:
        """The match's state back in memory if it was evicted (one fetch however many
        ask at once), and its use noted. Raises what the loader raises."""
        if match_id not in self._evicted:
            self._used(match_id)
            return
        pending = self._restoring.get(match_id)
        if pending is None:
            pending = asyncio.ensure_future(self._fetch(match_id))
            self._restoring[match_id] = pending
            pending.add_done_callback(lambda _: self._restoring.pop(match_id, None))
        await asyncio.shield(pending)

    async def _fetch(self, match_id: str) -> None:
        if self._loader is None:
            raise RuntimeError("ViewStore.load_with was not called")
        update = await self._loader(match_id)
        GATEWAY_MATCHES_FETCHED.inc()
        current = self._updates.get(match_id)
        if match_id not in self._evicted or current is None:
            return  # a newer update came meanwhile, with its state
        if update.summary.version < current.summary.version:
            raise LookupError(
                f"match {match_id}: fetched version {update.summary.version}, "
                f"{current.summary.version} was shown"
            )
        # Not an update (no listener, no revision): the same match as shown, or newer
        # by what the topic is about to bring anyway.
        self._updates[match_id] = update
        self._index(match_id, update.summary)
        self._evicted.discard(match_id)
        self._hold(match_id, update)

    def _index(self, match_id: str, summary: match_pb2.MatchSummary) -> None:
        if summary.bot_levels and summary.status != match_pb2.MATCH_STATUS_FINISHED:
            self._bot_seated[match_id] = summary
        else:
            self._bot_seated.pop(match_id, None)

    def _used(self, match_id: str) -> None:
        for held in (self._playing, self._finished):
            if match_id in held:
                held[match_id] = self._clock()
                held.move_to_end(match_id)
                return

    def _hold(self, match_id: str, update: match_pb2.ViewUpdate) -> None:
        finished = update.summary.status == match_pb2.MATCH_STATUS_FINISHED
        held = self._finished if finished else self._playing
        (self._playing if finished else self._finished).pop(match_id, None)
        held[match_id] = self._clock()
        held.move_to_end(match_id)
        self.evict()

    def evict(self) -> int:
        """Drop the state of matches held past their time or past the bound, least
        recently used first (see ``Holding``); returns how many."""
        now = self._clock()
        holding = self._holding
        evicted = 0
        finished_horizon = now - holding.finished_s
        idle_horizon = now - holding.idle_s
        if holding.finished_s:
            evicted += self._evict_from(self._finished, lambda used: used < finished_horizon)
        if holding.idle_s:
            evicted += self._evict_from(self._playing, lambda used: used < idle_horizon)
        if holding.max_held:
            # past the bound: finished matches first, then the least recently used
            for held in (self._finished, self._playing):
                evicted += self._evict_from(held, lambda _used: self.held() > holding.max_held)
        GATEWAY_MATCHES_HELD.set(self.held())
        return evicted

    def _evict_from(self, held: OrderedDict[str, float], due: Callable[[float], bool]) -> int:
        evicted = 0
        followed: list[str] = []
        while held:
            match_id, used = next(iter(held.items()))
            if not due(used):
                break
            if self._followers[match_id]:
                # in use: kept, counted as used now (so it is not looked at again at once)
                followed.append(match_id)
                del held[match_id]
                continue
            del held[match_id]
            self._evict(match_id)
            evicted += 1
        now = self._clock()
        for match_id in followed:
            held[match_id] = now
        return evicted

    def _evict(self, match_id: str) -> None:
        update = self._updates[match_id]
        self._updates[match_id] = match_pb2.ViewUpdate(
            summary=update.summary, seat_tokens=update.seat_tokens, provenance=update.provenance
        )
        self._evicted.add(match_id)
        self._drawn.pop(match_id, None)

    async def evict_forever(self) -> None:
        """Evict on a timer too: updates evict as they come, a quiet gateway would not."""
        holding = self._holding
        every = min([EVICT_EVERY_S] + [s / 2 for s in (holding.finished_s, holding.idle_s) if s])
        while True:
            await asyncio.sleep(every)
            self.evict()

    def view(self, update: match_pb2.ViewUpdate, viewer: str) -> match_pb2.MatchView | None:
        """``viewer``'s view of ``update`` (None: no such seat); rendered once per update."""
        match_id = update.summary.match_id
        if match_id in self._evicted and self._updates.get(match_id) is update:
            raise LookupError(f"match {match_id} was evicted: restore it first")
        drawn = self._drawn.get(match_id)
        if drawn is None or drawn.update is not update:
            # the match's update before, if it was drawn: what did not change is reused
            drawn = _Drawn(update, drawn)
            if self._updates.get(match_id) is update:
                self._drawn[match_id] = drawn
        return drawn.view(viewer)

    def summaries(self) -> list[match_pb2.MatchSummary]:
        return [u.summary for u in self._updates.values()]

    def bot_seated(self) -> list[match_pb2.MatchSummary]:
        """The summaries of unfinished matches with seats reserved for bots."""
        return list(self._bot_seated.values())

    async def put(self, update: match_pb2.ViewUpdate) -> None:
        """An update the projector published (read from the views topic)."""
        match_id = update.summary.match_id
        version = update.summary.version
        current = self._updates.get(match_id)
        # an older view published late (e.g. after a projector rebuild) is not taken; one
        # of the same version may reveal the seeds
        if current is None or current.summary.version <= version:
            self._take(match_id, update)
        acknowledged = self._acknowledged.get(match_id)
        if acknowledged is not None and acknowledged[0] <= version:
            del self._acknowledged[match_id]
        self._projected(match_id, version)

    def acknowledged(self, raw: bytes) -> None:
        """An update the board sent with an acknowledgement (see the module docstring):
        taken if it is newer than the match's, and remembered until the projector's copy."""
        update = match_pb2.ViewUpdate.FromString(raw)
        match_id = update.summary.match_id
        version = update.summary.version
        current = self._updates.get(match_id)
        if current is not None and current.summary.version >= version:
            return  # the projector's copy (or a newer command's) came first
        self._take(match_id, update)
        self._acknowledged[match_id] = (version, hash(raw))
        self._acknowledged.move_to_end(match_id)
        if len(self._acknowledged) > MAX_ACKNOWLEDGED:
            self._acknowledged.popitem(last=False)

    def _take(self, match_id: str, update: match_pb2.ViewUpdate) -> None:
        self._updates[match_id] = update
        self._index(match_id, update.summary)
        self._evicted.discard(match_id)
        self._hold(match_id, update)
        self._revisions[match_id] = self._revisions.get(match_id, 0) + 1
        signal = self._signals.pop(match_id, None)
        if signal is not None:
            signal.changed.set()
        for listener in self.listeners:
            listener(match_id, update.summary.version)

    def _projected(self, match_id: str, version: int) -> None:
        for listener in self.projector_listeners:
            listener(match_id, version)

    async def _record(self, key: bytes | None, value: bytes) -> None:
        """One record of the views topic: the copy of an update the board sent already is
        recognised by its bytes and not parsed again."""
        if key is not None and self._acknowledged:
            match_id = key.decode()
            acknowledged = self._acknowledged.get(match_id)
            if acknowledged is not None and acknowledged[1] == hash(value):
                del self._acknowledged[match_id]
                self._projected(match_id, acknowledged[0])
                return
        await self.put(match_pb2.ViewUpdate.FromString(value))

    async def _next_change(self, match_id: str, timeout: float | None) -> None:  # noqa: ASYNC109
        """Until this match's next accepted update (TimeoutError after ``timeout``)."""
        signal = self._signals.setdefault(match_id, _Signal())
        signal.waiters += 1
        try:
            await asyncio.wait_for(signal.changed.wait(), timeout)
        finally:
            signal.waiters -= 1
            if not signal.waiters and self._signals.get(match_id) is signal:
                del self._signals[match_id]

    async def wait_for(
        self,
        match_id: str,
        min_version: int,
        timeout: float,  # noqa: ASYNC109 - a bounded wait
    ) -> match_pb2.ViewUpdate | None:
        """The newest update once it has folded ``min_version``; None on timeout."""
        return await self.wait_until(
            match_id, lambda update: update.summary.version >= min_version, timeout
        )

    async def wait_until(
        self,
        match_id: str,
        done: Callable[[match_pb2.ViewUpdate], bool],
        timeout: float,  # noqa: ASYNC109 - a bounded wait
    ) -> match_pb2.ViewUpdate | None:
        """The newest update once ``done`` holds for it (a same-version one counts, such as
        the seeds revealed); None on timeout, and no wait at all if it holds already, even
        for a timeout of 0."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            update = self._updates.get(match_id)
            if update is not None and done(update):
                return update
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            try:
                await self._next_change(match_id, remaining)
            except TimeoutError:
                return None

    async def follow(self, match_id: str) -> AsyncIterator[match_pb2.ViewUpdate]:
        """The current update (if any), then every newer one, each with its state (an
        evicted match is fetched again first; a followed one is not evicted)."""
        seen = 0
        self._followers[match_id] += 1
        try:
            while True:
                while self._revisions.get(match_id, 0) <= seen:
                    await self._next_change(match_id, None)
                seen = self._revisions[match_id]
                await self.restore(match_id)
                yield self._updates[match_id]
        finally:
            self._followers[match_id] -= 1
            if not self._followers[match_id]:
                del self._followers[match_id]

    async def consume(self, tail: Tail) -> None:
        async for key, value in tail.records():
            try:
                await self._record(key, value)
            except Exception:
                log.exception("bad_view_update")
