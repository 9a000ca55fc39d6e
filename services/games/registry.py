"""The games Tabletop can run, found by scanning ``services.games``' subpackages.

A game is a folder: a subpackage of ``services.games`` whose ``__init__`` defines a
module-level ``GAME`` (a ``Game`` instance). Nothing lists the games by hand. A package
that fails to import is an error, not a missing game: it raises here, so a broken engine
stops the service at start instead of quietly disappearing from the catalogue.
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import services.games
from services.games.contract import Game

_GAMES: dict[str, Game[Any]] = {}


class GamePackageError(Exception):
    """A subpackage of services.games exports something other than a Game as GAME."""


def discover() -> dict[str, Game[Any]]:
    """Import every subpackage of ``services.games`` and collect their ``GAME``s by name.

    Subpackages without ``GAME`` (shared helpers) are skipped; import errors propagate."""
    found: dict[str, Game[Any]] = {}
    for info in sorted(pkgutil.iter_modules(services.games.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        module = importlib.import_module(f"services.games.{info.name}")
        game = getattr(module, "GAME", None)
        if game is None:
            continue
        if not isinstance(game, Game):
            raise GamePackageError(f"services.games.{info.name}.GAME is not a Game: {game!r}")
        if game.name in found:
            raise GamePackageError(f"two packages declare the game name {game.name!r}")
        found[game.name] = game
    return found


def get_game(name: str) -> Game[Any]:
    games = all_games()
    try:
        return games[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(sorted(games))}") from None


def all_games() -> dict[str, Game[Any]]:
    if not _GAMES:
        _GAMES.update(discover())
    return dict(_GAMES)
