"""Bots that play over the network: they see only their seat's view and legal actions,
exactly like a person at the terminal (no engine state, no hidden information)."""

from __future__ import annotations

import random

from services.bots.levels import LEVELS, level_policy, levels_for
from services.bots.network_bot import NetworkBot
from services.games.contract import ViewPolicy
from services.games.registry import get_game


def view_policy_for(game: str, kind: str, seed: int) -> ViewPolicy:
    """The bot named ``kind``: a level the lobby offers (``services.bots.levels``: easy,
    medium, hard) or one of the game's own bots (``Game.bots()``: random, greedy)."""
    if kind in LEVELS:
        return level_policy(game, kind, seed)
    bots = get_game(game).bots()
    if kind not in bots:
        raise ValueError(
            f"{game} has no {kind!r} bot; bots: {', '.join(sorted(bots))}; "
            f"levels: {', '.join(levels_for(game))}"
        )
    return bots[kind](seed)


def bot_seats(
    game: str, spec: str | None, players: list[str], seed: int | None
) -> dict[str, NetworkBot]:
    """A bot (a level or one of the game's bots, ``view_policy_for``) for every seat, or
    ``SEAT=KIND,…``; the others are people."""
    if not spec:
        return {}
    if "=" in spec:
        kinds = dict(s.split("=", 1) for s in spec.split(","))
        unknown = set(kinds) - set(players)
        if unknown:
            raise ValueError(
                f"no seat named {', '.join(sorted(unknown))}; seats: {', '.join(players)}"
            )
    else:
        kinds = {p: spec for p in players}
    base = random.Random(seed).randrange(1 << 30) if seed is not None else random.randrange(1 << 30)
    return {
        seat: NetworkBot(game, seat, view_policy_for(game, kind, base + i), kind)
        for i, (seat, kind) in enumerate(kinds.items())
    }
