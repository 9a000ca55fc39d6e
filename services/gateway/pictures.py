"""A match view drawn for people: the game's SVG picture and its text rendering.

The gateway draws on the server (``Game.picture``), so a client never needs a game's
rules or view types: it shows the SVG of exactly the view its token may see.
"""

from __future__ import annotations

from collections import OrderedDict

from services.adapters.game_adapter import messages_for
from services.adapters.protoconv import read
from tabletop.v1 import gateway_pb2, match_pb2


def draw(view: match_pb2.MatchView) -> gateway_pb2.Picture:
    """The picture (empty when the game has none) and the text (``Game.render``) of one
    view."""
    game = messages_for(view.game).game
    data = read(game.view_type, getattr(view.game_view, view.game))
    return gateway_pb2.Picture(
        match_id=view.match_id,
        game=view.game,
        version=view.version,
        viewer=view.viewer,
        svg=game.picture(data) or "",
        text=game.render(data),
    )


class Pictures:
    """Drawn pictures by (match, version, viewer), the most recently used kept: every page
    watching a match asks for the same picture after each move, and a replay scrubs back
    and forth over the same versions. A view at a version never changes (events are
    immutable), so a kept picture is never stale."""

    def __init__(self, max_entries: int = 1024) -> None:
        self._max = max_entries
        self._kept: OrderedDict[tuple[str, int, str], gateway_pb2.Picture] = OrderedDict()

    def get(self, match_id: str, version: int, viewer: str) -> gateway_pb2.Picture | None:
        key = (match_id, version, viewer)
        picture = self._kept.get(key)
        if picture is not None:
            self._kept.move_to_end(key)
        return picture

    def draw(self, view: match_pb2.MatchView) -> gateway_pb2.Picture:
        picture = self.get(view.match_id, view.version, view.viewer)
        if picture is None:
            picture = self._kept[view.match_id, view.version, view.viewer] = draw(view)
            if len(self._kept) > self._max:
                self._kept.popitem(last=False)
        return picture
