"""Imperial Miners (Portal Games, 2023): 10 rounds of simultaneous Mine building, as a
pure engine with a house content pack."""

from __future__ import annotations

from services.games.imperial_miners.game import ImperialMiners

GAME = ImperialMiners()

__all__ = ["GAME", "ImperialMiners"]
