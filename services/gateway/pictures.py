"""A match view drawn for people: the game's SVG picture and its text rendering.

The gateway draws on the server (``Game.picture``), so a client never needs a game's
rules or view types: it shows the SVG of exactly the view its token may see.
"""

from __future__ import annotations

import importlib
import typing
from typing import Any

from services.common.game_adapter import messages_for
from services.common.protoconv import read
from services.games.contract import Game
from tabletop.v1 import gateway_pb2, match_pb2


def _game_view(view: match_pb2.MatchView) -> tuple[Game[Any], Any]:
    game = messages_for(view.game).game
    view_cls = typing.get_type_hints(game.view)["return"]
    return game, read(view_cls, getattr(view.game_view, view.game))


def _text(game: Game[Any], data: Any, name: str) -> str:
    """The game's own ``render`` hook, else its render module's ``render``."""
    if type(game).render is not Game.render:
        return game.render(data)
    try:
        module = importlib.import_module(f"services.games.{name}.render")
    except ModuleNotFoundError:
        return game.render(data)
    return str(module.render(data))


def draw(view: match_pb2.MatchView) -> gateway_pb2.Picture:
    """The picture (empty when the game has none) and the text of one view."""
    game, data = _game_view(view)
    return gateway_pb2.Picture(
        match_id=view.match_id,
        game=view.game,
        version=view.version,
        viewer=view.viewer,
        svg=game.picture(data) or "",
        text=_text(game, data, view.game),
    )
