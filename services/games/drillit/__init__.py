"""Drillit! A Fuga da Montanha de Cristal: the cooperative tank escape, as a pure engine."""

from __future__ import annotations

from services.games.drillit.game import Drillit

GAME = Drillit()

__all__ = ["GAME", "Drillit"]
