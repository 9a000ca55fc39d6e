"""Crashland (Todd Sanders, 2015): a solitaire hunt for three fuel tanks on a 6 x 5 map.

Modules: ``model`` (vocabulary), ``content`` (the YAML pack), ``actions``, ``events``,
``state``, ``evolve`` (folding events in), ``rules`` (deciding; the rule interpretations are
in its docstring), ``view``, ``render``, ``game`` (the contract), ``bots`` (playout and
networked players).
"""

from services.games.crashland.game import Crashland

GAME = Crashland()

__all__ = ["GAME", "Crashland"]
