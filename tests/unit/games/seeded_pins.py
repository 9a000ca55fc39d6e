"""What the pinned-playout tests share: a seeded match played out by random or greedy bots,
and a digest of its events, final state and number of actions. A digest taken before an
engine was made faster must not move: speed-ups change no event, no state and no choice
(the codec's data, so a dict's order does not count, as on the wire)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from services.games.codec import to_data
from services.games.contract import Game
from services.games.playout import Policy, play, random_policy


def _view_bot(game: Game[Any], seed: int) -> Policy:
    """The game's greedy bot, shown the seat's view of the state (as it is served)."""
    bot = game.bots()["greedy"](seed)
    return lambda state, player, legal: bot(game.view(state, player), player, legal)


def pinned_playout(
    game: Game[Any], seed: int, bot: str, seats: int, options: Mapping[str, str]
) -> tuple[int, int, str]:
    """(events, actions, digest) of one seeded match; seat i's bot is seeded seed * 7 + i."""
    players = [f"p{i + 1}" for i in range(seats)]
    policies = {
        p: random_policy(seed * 7 + i) if bot == "random" else _view_bot(game, seed * 7 + i)
        for i, p in enumerate(players)
    }
    done = play(game, players, dict(options), policies, seed)
    blob = json.dumps(
        [to_data(list(done.events)), to_data(done.state), done.actions], sort_keys=True
    )
    return len(done.events), done.actions, hashlib.sha256(blob.encode()).hexdigest()[:16]
