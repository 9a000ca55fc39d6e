"""The strengths a lobby offers, for every game: ``easy`` is the game's greedy bot;
``medium`` and ``hard`` search (``search.rollouts``) for 0.1 s (Drillit!: 0.3 s) and 0.75 s
of CPU per decision, rolling out with that greedy bot over states sampled from the seat's
view. A game without a sampler offers ``easy`` only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from services.bots.search.budget import Budget
from services.bots.search.determinization import (
    evaluation_for,
    has_sampler,
    prior_for,
    proposals_for,
    sampler_for,
)
from services.bots.search.rollouts import Search, SearchSettings
from services.games.contract import ViewPolicy, random_view_policy
from services.games.registry import get_game

LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Level:
    name: str
    description: str
    #: None: the game's greedy bot, no search
    settings: SearchSettings | None


_LEVELS = {
    "easy": Level("easy", "the greedy bot: the best-looking move, no look-ahead", None),
    "medium": Level(
        "medium",
        "plays its options out over sampled hidden cards, 0.1 s of CPU a move",
        SearchSettings(Budget(cpu_seconds=0.1)),
    ),
    "hard": Level(
        "hard",
        "plays its options out over sampled hidden cards, 0.75 s of CPU a move",
        # under the 1 s with room for the step under way when time is up (a Dungeon
        # Drop drop or flick is simulated whole: tens of ms)
        SearchSettings(Budget(cpu_seconds=0.75)),
    ),
}

#: per game, settings that differ from the levels' (applied to medium and hard): a Dungeon
#: Drop playout simulates every flick and drop (a whole match ~80 ms of CPU here), so its
#: playouts stop a few steps on, once the seat's turn is over, and take the chance of
#: winning that the standings give (at 3-4 seats, with the rooms the table leaves the
#: heroes still to play: ``sampling.Outlook``); of the ~70 rooms of a Loot step, the 15
#: that look best are played out, and of an ability's flicks and Pillar moves the game's
#: best proposals (``sampling.proposals``). A
#: Drillit! playout is three greedy bots to the end (~25 ms), and a dig offers 25-70 cells
#: and turns: of 24 candidates a decision played ~1 round, so it plays out the greedy bot's
#: choice and the 5 others it values most (``drillit.sampling.prior``)
_TUNING: Mapping[str, Mapping[str, object]] = {
    "dungeon_drop": {"template_samples": 6, "max_candidates": 16, "horizon": 4},
    "drillit": {"max_candidates": 6},
}

#: per game and level, on top of ``_TUNING``: a Drillit! playout of a whole match takes
#: 25-50 ms, so in 0.1 s ``medium`` finished no round of its 6 candidates and played as
#: greedy; it plays out 3 (the greedy bot's choice and the 2 others its prior values most)
#: for 0.3 s, ~4 rounds a decision
_LEVEL_TUNING: Mapping[tuple[str, str], Mapping[str, object]] = {
    ("drillit", "medium"): {"budget": Budget(cpu_seconds=0.3), "max_candidates": 3},
}


def level(name: str) -> Level:
    if name not in _LEVELS:
        raise ValueError(f"no bot level {name!r}; levels: {', '.join(LEVELS)}")
    return _LEVELS[name]


def levels_for(game: str) -> tuple[str, ...]:
    """The levels ``game`` offers."""
    return LEVELS if has_sampler(game) else ("easy",)


def settings_for(game: str, name: str) -> SearchSettings | None:
    settings = level(name).settings
    if settings is None:
        return None
    tuning = {**_TUNING.get(game, {}), **_LEVEL_TUNING.get((game, name), {})}
    return replace(settings, **tuning)  # type: ignore[arg-type]


def level_policy(game: str, name: str, seed: int) -> ViewPolicy:
    """The bot of level ``name`` for one seat of ``game``, deciding from the seat's view."""
    engine = get_game(game)
    settings = settings_for(game, name)
    if settings is None:
        greedy = engine.bots().get("greedy", random_view_policy)
        return greedy(seed)
    if name not in levels_for(game):
        raise ValueError(f"{game} offers bot levels {', '.join(levels_for(game))} only")
    return Search(
        engine,
        sampler_for(game),
        settings,
        seed,
        evaluation_for(game),
        prior_for(game),
        proposals_for(game),
    )
