"""The games Tabletop can run, by name."""

from __future__ import annotations

from typing import Any

from services.games.contract import Game

_GAMES: dict[str, Game[Any]] = {}


def register(game: Game[Any]) -> None:
    _GAMES[game.name] = game


def get_game(name: str) -> Game[Any]:
    _load_builtin()
    try:
        return _GAMES[name]
    except KeyError:
        raise KeyError(f"unknown game {name!r}; known: {', '.join(sorted(_GAMES))}") from None


def all_games() -> dict[str, Game[Any]]:
    _load_builtin()
    return dict(_GAMES)


def _load_builtin() -> None:
    if _GAMES:
        return
    # Imported lazily so a game package can be developed without the others importing.
    import importlib

    for module in ("services.games.crashland", "services.games.drillit"):
        try:
            game = getattr(importlib.import_module(module), "GAME", None)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            continue
        if game is not None:  # a package still being written exports no GAME yet
            register(game)
