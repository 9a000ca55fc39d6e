"""A determinization: one full state a seat's view could have come from, with the hidden
order of the draw piles the chance services hold, so the game's own engine can be played
forward from it.

Each game that offers search bots has a module ``services.games.<game>.sampling`` with

    def sample(view, player, legal, rng) -> Determinization

that draws the hidden information (unexplored map cards, opponents' hands and secret
choices, the order of face-down piles) uniformly among what is consistent with ``view``
and ``legal`` (what the seat is served), from ``rng`` alone. Its tests check that the
sampled state shows the seat exactly ``view`` and offers exactly ``legal``.

Optional, where a game needs them:
- ``evaluate(state, player) -> float``, where a whole playout costs too much: how well the
  player stands in a match not over yet, in [0, 1];
- ``prior(view, player, legal)``, where a decision offers more actions than a search can
  play out: the worth of each of them at a glance, by the game's own bot, to choose which
  are played out;
- ``proposals(view, player, legal, rng)``, where actions have continuous parameters
  (``ActionTemplate``): concrete actions of the templates worth playing out, best first,
  rather than uniform draws (most of a table's flicks do nothing).
"""

from __future__ import annotations

import importlib
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Determinization:
    state: Any
    #: deck name -> the face-down draw pile a chance service holds for it, top card first
    piles: Mapping[str, Sequence[str]] = field(default_factory=dict)


#: (view, player, legal actions, rng) -> a determinization consistent with them
Sampler = Callable[[Any, str, Sequence[Any], random.Random], Determinization]

#: (state, player) -> how well ``player`` stands in a match not yet over, in [0, 1]
Evaluation = Callable[[Any, str], float]


#: (view, player, legal actions) -> each action's worth at a glance (higher: play it out)
Prior = Callable[[Any, str, Sequence[Any]], Callable[[Any], float]]


#: (view, player, legal actions, rng) -> concrete actions of the templates in ``legal``,
#: best first (empty: nothing to propose at this step)
Proposals = Callable[[Any, str, Sequence[Any], random.Random], Sequence[Any]]


class InconsistentSample(Exception):
    """The engine asked for something a sampled state cannot give (a sampler's bug)."""


def sampler_for(game: str) -> Sampler:
    """The game's ``sampling.sample``; ValueError for a game without one."""
    try:
        module = importlib.import_module(f"services.games.{game}.sampling")
    except ModuleNotFoundError as missing:
        if missing.name != f"services.games.{game}.sampling":
            raise
        raise ValueError(f"{game} has no sampler: search bots cannot play it") from None
    sample: Sampler = module.sample
    return sample


def evaluation_for(game: str) -> Evaluation | None:
    """The game's ``sampling.evaluate``, if it has one: search may then stop a playout
    early and take this for its result (a game whose playouts cost too much to finish)."""
    evaluate: Evaluation | None = getattr(
        importlib.import_module(f"services.games.{game}.sampling"), "evaluate", None
    )
    return evaluate


def prior_for(game: str) -> Prior | None:
    """The game's ``sampling.prior``, if it has one: past ``max_candidates``, search plays
    out the actions its bot values most rather than a uniform draw of them."""
    prior: Prior | None = getattr(
        importlib.import_module(f"services.games.{game}.sampling"), "prior", None
    )
    return prior


def proposals_for(game: str) -> Proposals | None:
    """The game's ``sampling.proposals``, if it has one: search plays out the best of
    them, and a few of the rest, for the templates of a step rather than uniform draws."""
    proposals: Proposals | None = getattr(
        importlib.import_module(f"services.games.{game}.sampling"), "proposals", None
    )
    return proposals


def has_sampler(game: str) -> bool:
    try:
        sampler_for(game)
    except ValueError:
        return False
    return True
