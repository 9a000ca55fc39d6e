"""Standings and statistics per game, folded from MatchScored events (pure).

A row is a player by identity (the same across matches and devices), every bot of one
level, or a seat no signed-in player held (by its seat name: hot seats, and matches scored
before MatchScored named holders)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field

from tabletop.v1 import platform_events_pb2, scoring_pb2, snapshot_pb2


@dataclass
class GameStandings:
    matches: int = 0
    matches_won: int = 0
    players: dict[str, scoring_pb2.PlayerStanding] = field(default_factory=dict)
    statistic_sums: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    end_reasons: Counter[str] = field(default_factory=Counter)

    def add(self, scored: platform_events_pb2.MatchScored) -> None:
        self.matches += 1
        if "won" in scored.results.values():
            self.matches_won += 1
        self.end_reasons[scored.reason] += 1
        for name, value in scored.statistics.items():
            self.statistic_sums[name] += value
        for seat, result in scored.results.items():
            key, kind, name = row_of(scored, seat)
            standing = self.players.setdefault(key, scoring_pb2.PlayerStanding(player=key))
            standing.kind, standing.display_name = kind, name
            standing.played += 1
            if result == "won":
                standing.won += 1
            elif result == "lost":
                standing.lost += 1
            else:
                standing.drawn += 1

    def states(self, game: str, players_per_part: int = 2000) -> list[snapshot_pb2.StandingsState]:
        """For a snapshot: the totals, with the players in parts of bounded size."""
        players = list(self.players.values())
        parts = [
            snapshot_pb2.StandingsState(game=game, players=players[i : i + players_per_part])
            for i in range(0, len(players), players_per_part)
        ] or [snapshot_pb2.StandingsState(game=game)]
        first = parts[0]
        first.matches, first.matches_won = self.matches, self.matches_won
        first.statistic_sums.update(self.statistic_sums)
        first.end_reasons.update(self.end_reasons)
        return parts

    def merge(self, state: snapshot_pb2.StandingsState) -> None:
        """Add a snapshot part (``states``) back."""
        self.matches += state.matches
        self.matches_won += state.matches_won
        for player in state.players:
            standing = scoring_pb2.PlayerStanding()
            standing.CopyFrom(player)
            self.players[player.player] = standing
        for name, value in state.statistic_sums.items():
            self.statistic_sums[name] += value
        self.end_reasons.update(dict(state.end_reasons))

    def reply(self, game: str) -> scoring_pb2.GetStandingsReply:
        return scoring_pb2.GetStandingsReply(
            game=game,
            matches=self.matches,
            matches_won=self.matches_won,
            players=sorted(self.players.values(), key=lambda s: (-s.won, s.player)),
            mean_statistics={k: v / self.matches for k, v in sorted(self.statistic_sums.items())},
            end_reasons=dict(self.end_reasons),
        )


def row_of(
    scored: platform_events_pb2.MatchScored, seat: str
) -> tuple[str, scoring_pb2.PlayerKind.ValueType, str]:
    """The standings row a seat's result counts for: its key, kind and display name. A bot
    seat counts for its level whoever's credential played it (the bots service joins as a
    player of its own)."""
    name = scored.names.get(seat) or seat
    if seat in scored.bot_levels:
        level = scored.bot_levels[seat]  # "": a bot its creator's client played
        if not level:
            return "bot", scoring_pb2.PLAYER_KIND_BOT, "bot"
        return f"bot:{level}", scoring_pb2.PLAYER_KIND_BOT, f"bot ({level})"
    holder = scored.holders.get(seat)
    if holder:
        return holder, scoring_pb2.PLAYER_KIND_PLAYER, name
    return seat, scoring_pb2.PLAYER_KIND_SEAT, name
