"""Bots that play over the network: they see only their seat's view and legal actions,
exactly like a person at the terminal (no engine state, no hidden information)."""

from __future__ import annotations

import importlib
import random
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from services.adapters.game_adapter import messages_for
from services.adapters.protoconv import read
from tabletop.v1 import board_pb2, match_pb2

ViewPolicy = Callable[[Any, str, tuple[Any, ...]], Any]


def view_policy_for(game: str, kind: str, seed: int) -> ViewPolicy:
    """The game's own view-based bot (``view_policy`` in its bots module)."""
    for module in (f"services.games.{game}.bots", f"services.games.{game}.policies"):
        try:
            found = getattr(importlib.import_module(module), "view_policy", None)
        except ModuleNotFoundError:
            continue
        if found is not None:
            policy: ViewPolicy = found(kind, seed)
            return policy
    if kind != "random":
        raise ValueError(f"{game} has no {kind!r} bot")
    rng = random.Random(seed)
    return lambda view, player, legal: legal[rng.randrange(len(legal))]


@dataclass
class NetworkBot:
    game: str
    player: str
    policy: ViewPolicy

    def choose(
        self, view: match_pb2.MatchView, legal: board_pb2.GetLegalActionsReply
    ) -> match_pb2.LegalAction:
        messages = messages_for(self.game)
        view_cls = typing.get_type_hints(messages.game.view)["return"]
        seen = read(view_cls, getattr(view.game_view, self.game))
        options = tuple(
            messages.action_from_message(getattr(a.action, self.game)) for a in legal.actions
        )
        chosen = self.policy(seen, self.player, options)
        chosen_action: match_pb2.LegalAction = legal.actions[options.index(chosen)]
        return chosen_action


def bot_seats(
    game: str, spec: str | None, players: list[str], seed: int | None
) -> dict[str, NetworkBot]:
    """``random`` / ``greedy`` for every seat, or ``SEAT=KIND,…``; the others are people."""
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
        seat: NetworkBot(game, seat, view_policy_for(game, kind, base + i))
        for i, (seat, kind) in enumerate(kinds.items())
    }
