"""A bot at a seat, as any client of the gateway sees it: it reads the seat's view and legal
actions as served (no engine state, no hidden information) and picks one of them."""

from __future__ import annotations

from dataclasses import dataclass

from services.adapters.game_adapter import chosen_action, legal_entry, messages_for
from services.adapters.protoconv import read
from services.bots.levels import LEVELS
from services.games.contract import ActionTemplate, ViewPolicy
from tabletop.v1 import board_pb2, match_pb2


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
