"""Dungeon Drop: drop cubes into a dungeon, loot rooms between three Pillars."""

from __future__ import annotations

from services.games.dungeon_drop.game import DungeonDrop

GAME = DungeonDrop()

__all__ = ["GAME", "DungeonDrop"]
