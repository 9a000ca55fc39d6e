"""Bots that play over the network: they see only their seat's view and legal actions,
exactly like a person at the terminal (no engine state, no hidden information)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from services.adapters.game_adapter import chosen_action, legal_entry, messages_for
from services.adapters.protoconv import read
from services.bots.levels import LEVELS, level_policy, levels_for
from services.games.contract import ActionTemplate, ViewPolicy
from services.games.registry import get_game
from tabletop.v1 import board_pb2, match_pb2


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


@dataclass
class NetworkBot:
    game: str
    player: str
    policy: ViewPolicy
    #: what the seat was given: a level (easy, medium, hard) or a game's bot's name
    kind: str = ""

    @property
    def level(self) -> str:
        """The bot's level as the lobby shows it ("" for a game's random or greedy bot)."""
        return self.kind if self.kind in LEVELS else ""

    def choose(
        self, view: match_pb2.MatchView, legal: board_pb2.GetLegalActionsReply
    ) -> match_pb2.LegalAction:
        """The policy's pick among ``legal``; a filled-in template is sent as it was filled."""
        game = messages_for(self.game).game
        seen = read(game.view_type, getattr(view.game_view, self.game))
        entries = tuple(legal_entry(self.game, a) for a in legal.actions)
        chosen = self.policy(seen, self.player, entries)
        if chosen in entries:
            picked: match_pb2.LegalAction = legal.actions[entries.index(chosen)]
            return picked
        if any(isinstance(e, ActionTemplate) and e.admits(chosen) for e in entries):
            return chosen_action(game, chosen)
        raise ValueError(f"the {self.game} bot chose {chosen!r}, which is not legal")


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
