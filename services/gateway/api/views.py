"""What a caller may see of a match: its view (GetView), every newer one as it comes
(WatchMatch), and the view drawn as a picture (GetPicture).

Views are rendered here from each match's newest update (services/gateway/viewstore.py),
for the viewer ``Access`` allows: a seat token's seat, else the spectator. A watch is
judged before it holds anything: its place among the caller's streams
(services/gateway/streams.py), and the match: one this gateway does not know is refused at
once, unless the caller's token is of that match (created a moment ago, elsewhere), which
alone waits a little for its first view. A watch resumed after a version (a client cut
off, e.g. by a gateway restart) skips the views the client has (``had``).
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Iterator

import grpc

from services.adapters.folding import created, fold
from services.adapters.views import view
from services.common.envelope import is_a
from services.common.logging import get_logger
from services.common.metrics import GATEWAY_WATCHERS
from services.gateway.access import Access, check_bounds
from services.gateway.edge import Call
from services.gateway.pictures import Pictures
from services.gateway.refusals import Refused
from services.gateway.shards import Shards
from services.gateway.streams import Streams
from services.gateway.viewstore import ViewStore
from tabletop.v1 import gateway_pb2, match_pb2, platform_events_pb2

log = get_logger(__name__)

#: the longest a GetView may wait for a version
MAX_WAIT_MS = 30_000
#: how long WatchMatch waits for the first view of a match it does not know yet
NEW_MATCH_GRACE_S = 10.0


def all_revealed(provenance: match_pb2.Provenance) -> bool:
    """Every seed the match committed to is revealed (a game commits only with the
    chance services it uses: no commitment, nothing to wait for)."""
    return bool(
        (provenance.dice_seed or not provenance.dice_commitment)
        and (provenance.decks_seed or not provenance.decks_commitment)
    )


def over(shown: match_pb2.MatchView) -> bool:
    """The last view a watch sends: the match is over and its seeds are revealed."""
    finished = shown.status == match_pb2.MATCH_STATUS_FINISHED
    return finished and all_revealed(shown.provenance)


def had(update: match_pb2.ViewUpdate, after_version: int) -> bool:
    """Does a client resuming its watch after ``after_version`` have this update's view
    already? Older versions, and that version itself, but for the last view of a finished
    match at that version (its seeds revealed, same version): the watch ends with it, so a
    client cut off just before it gets it once more rather than never."""
    version = update.summary.version
    if version != after_version:
        return version < after_version
    finished = update.summary.status == match_pb2.MATCH_STATUS_FINISHED
    return not (finished and all_revealed(update.provenance))


class ViewRpcs:
    def __init__(self, views: ViewStore, access: Access, shards: Shards, streams: Streams) -> None:
        self._views = views
        self._access = access
        self._shards = shards
        self._streams = streams
        self._pictures = Pictures()

    # -- a view, judged and drawn --------------------------------------------------------
    async def view(self, match_id: str, viewer: str) -> match_pb2.MatchView:
        if self._views.latest(match_id) is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, "no such match (or not projected yet)")
        await self.restore(match_id)
        update = self._views.latest(match_id)
        assert update is not None  # never forgotten, only evicted
        shown = self.render(update, viewer)
        if shown is None:
            raise Refused(grpc.StatusCode.NOT_FOUND, "no such seat in this match")
        return shown

    async def restore(self, match_id: str) -> None:
        """The match's state in memory again if the gateway evicted it (viewstore.py)."""
        try:
            await self._views.restore(match_id)
        except Refused:
            raise
        except Exception as error:
            log.exception("view_restore_failed", match_id=match_id)
            raise Refused(
                grpc.StatusCode.UNAVAILABLE, "this match's view could not be fetched; try again"
            ) from error

    def render(self, update: match_pb2.ViewUpdate, viewer: str) -> match_pb2.MatchView | None:
        """The viewer's view of ``update``; a view that cannot be drawn (a game's bug, a
        state this gateway's code cannot read) is refused plainly, logged with its cause."""
        if not update.state:
            # Published by a projector older than rendering at the gateway (views, no
            # state): there is nothing to draw until a rebuild republishes the match.
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                "this match's view is being rebuilt; try again shortly",
            )
        try:
            return self._views.view(update, viewer)
        except Exception as error:
            log.exception("view_render_failed", match_id=update.summary.match_id)
            raise Refused(
                grpc.StatusCode.INTERNAL,
                "this match's view could not be drawn; the operators have been told",
            ) from error

    @contextlib.contextmanager
    def stream(self, call: Call) -> Iterator[None]:
        """A place among the caller's open streams while the block runs (Refused if none)."""
        caller = call.caller
        with self._streams.opened(caller.identity, caller.connection, caller.host):
            yield

    async def watched(self, request: gateway_pb2.WatchMatchRequest, call: Call) -> str:
        """The viewer a watch of the match follows, judged up front (refusals end it)."""
        check_bounds(("match_id", request.match_id))
        viewer = self._access.viewer(call.caller, request.match_id, request.viewer)
        if self._views.latest(request.match_id) is None:
            claims = call.caller.claims
            if claims is None or claims.match_id != request.match_id:
                raise Refused(grpc.StatusCode.NOT_FOUND, "no such match (or not projected yet)")
            # A match created a moment ago may not be projected here yet: the caller's token
            # says it exists, so it gets a little time.
            await self._views.wait_for(request.match_id, 1, NEW_MATCH_GRACE_S)
            viewer = self._access.viewer(call.caller, request.match_id, request.viewer)
        await self.view(request.match_id, viewer)  # NOT_FOUND etc. up front
        return viewer

    def still_holds(self, call: Call, viewer: str) -> None:
        """A seat's stream ends (PERMISSION_DENIED) once its token no longer holds the seat:
        given up (and perhaps handed to someone else since), or joined again elsewhere."""
        claims = call.caller.claims
        if viewer and claims is not None and self._access.superseded(claims):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, self._access.gone(claims))

    # -- the RPCs ---------------------------------------------------------------------------
    async def get_view(
        self, request: gateway_pb2.GetViewRequest, call: Call
    ) -> match_pb2.MatchView:
        if request.min_version:
            check_bounds(("match_id", request.match_id))
            if call.caller.claims is not None:
                # a token is judged before waiting: a refused caller holds no wait
                self._access.viewer(call.caller, request.match_id, request.viewer)
            wait_ms = min(request.wait_ms, MAX_WAIT_MS)
            remaining = call.time_remaining()
            wait = min(wait_ms / 1000, remaining) if remaining is not None else wait_ms / 1000
            if await self._views.wait_for(request.match_id, request.min_version, wait) is None:
                raise Refused(
                    grpc.StatusCode.DEADLINE_EXCEEDED,
                    f"the view has not reached version {request.min_version} yet; try again",
                )
        viewer = self._access.viewer(call.caller, request.match_id, request.viewer)
        return await self.view(request.match_id, viewer)

    async def watch(
        self, request: gateway_pb2.WatchMatchRequest, call: Call
    ) -> AsyncIterator[match_pb2.MatchView]:
        with self.stream(call):
            viewer = await self.watched(request, call)
            GATEWAY_WATCHERS.inc()
            try:
                async for update in self._views.follow(request.match_id):
                    if request.after_version and had(update, request.after_version):
                        continue
                    self.still_holds(call, viewer)
                    shown = self.render(update, viewer)
                    if shown is None:  # judged up front: players never change
                        return
                    yield shown
                    if over(shown):
                        return
            finally:
                GATEWAY_WATCHERS.dec()

    async def picture(
        self, request: gateway_pb2.GetPictureRequest, call: Call
    ) -> gateway_pb2.Picture:
        check_bounds(("match_id", request.match_id))
        viewer = self._access.viewer(call.caller, request.match_id, "")
        if not request.HasField("version"):
            return self._pictures.draw(await self.view(request.match_id, viewer))
        # A match in play replays as a spectator sees it (like ReplayMatch): a kept picture
        # is served without folding again only when the live view says the match is over.
        update = self._views.latest(request.match_id)
        finished = update is not None and update.summary.status == match_pb2.MATCH_STATUS_FINISHED
        kept = self._pictures.get(request.match_id, request.version, viewer if finished else "")
        if kept is not None:
            return kept
        events = await self._shards.board_events(request.match_id)
        if not 1 <= request.version <= events[-1].sequence:
            raise Refused(
                grpc.StatusCode.OUT_OF_RANGE,
                f"version must be between 1 and {events[-1].sequence}",
            )
        if not any(is_a(e, platform_events_pb2.MatchEnded) for e in events):
            viewer = ""
        match = created(events[0])
        for envelope in events[1:]:
            if envelope.sequence > request.version:
                break
            fold(match, envelope)
        return self._pictures.draw(view(match, viewer))
