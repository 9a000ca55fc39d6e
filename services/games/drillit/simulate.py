"""Playing many matches in-process with seeded chance (same derivation as the dice and
decks services) to measure how hard a configuration is."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from services.games.contract import MalformedAction
from services.games.drillit.bots import BOTS
from services.games.drillit.game import Drillit
from services.games.playout import play

_GAME = Drillit()


@dataclass(frozen=True)
class SimulationReport:
    games: int
    wins: int
    win_rate: float
    mean_turns: float
    defeat_causes: dict[str, int] = field(default_factory=dict)


def simulate(
    games: int,
    difficulty: str,
    distance: str,
    bot: str,
    players: int = 3,
    seed: int = 0,
    progress: Callable[[int], None] | None = None,
) -> SimulationReport:
    """Play ``games`` matches (seeds ``seed`` .. ``seed + games - 1``); ``progress`` gets
    the number of matches finished so far."""
    if bot not in BOTS:
        raise MalformedAction("BAD_BOT", f"bot must be one of {', '.join(sorted(BOTS))}.")
    ids = [f"p{i + 1}" for i in range(players)]
    options = {"difficulty": difficulty, "distance": distance}
    _GAME.setup(ids, options)  # refuses bad options before any match is played
    wins, turns, causes = 0, 0, Counter[str]()
    for n in range(games):
        match_seed = seed + n
        policies = {p: BOTS[bot](match_seed * 31 + i) for i, p in enumerate(ids)}
        result = play(_GAME, ids, options, policies, match_seed, match_id=f"sim-{match_seed}")
        turns += result.state.turn
        if result.state.won:
            wins += 1
        else:
            causes[result.outcome.reason] += 1
        if progress is not None:
            progress(n + 1)
    return SimulationReport(
        games=games,
        wins=wins,
        win_rate=wins / games if games else 0.0,
        mean_turns=turns / games if games else 0.0,
        defeat_causes=dict(sorted(causes.items())),
    )
