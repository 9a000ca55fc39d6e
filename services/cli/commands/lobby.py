"""``tabletop matches`` and ``tabletop standings``: what the lobby and scoring list."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from google.protobuf import json_format

from services.cli.commands.shared import client_for
from tabletop.v1 import gateway_pb2, match_pb2, scoring_pb2

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    matches = sub.add_parser("matches", help="list matches")
    matches.add_argument("--game")
    matches.add_argument(
        "--mine", action="store_true", help="only your matches (created or seated in)"
    )
    matches.add_argument("--json", action="store_true")
    matches.set_defaults(func=cmd_matches)

    standings = sub.add_parser("standings", help="results and statistics of a game")
    standings.add_argument("game")
    standings.add_argument("--json", action="store_true")
    standings.set_defaults(func=cmd_standings)


def cmd_matches(args: argparse.Namespace) -> int:
    reply = client_for(args).stub.ListMatches(
        gateway_pb2.ListMatchesRequest(game=args.game or "", mine=args.mine)
    )
    rows = [json_format.MessageToDict(m, preserving_proto_field_name=True) for m in reply.matches]
    if args.json:
        print(json.dumps(rows))
    else:
        for m in reply.matches:
            status = match_pb2.MatchStatus.Name(m.status).removeprefix("MATCH_STATUS_").lower()
            bots = ", ".join(
                f"{seat} ({m.bot_levels[seat]})" if seat in m.bot_levels else seat
                for seat in m.bots
            )
            print(
                f"{m.match_id}  {m.game:10s} {status:8s} v{m.version:<5d} {m.end_reason}"
                + (f"  bots: {bots}" if bots else "")
                + (f"  your seats: {', '.join(m.your_seats)}" if m.your_seats else "")
            )
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    reply = client_for(args).stub.GetStandings(scoring_pb2.GetStandingsRequest(game=args.game))
    if args.json:
        print(json.dumps(json_format.MessageToDict(reply, preserving_proto_field_name=True)))
        return 0
    print(f"{reply.game}: {reply.matches} matches scored, {reply.matches_won} won")
    if reply.players:
        print(f"  {'#':>3}  {'player':<24} {'played':>6} {'won':>5} {'lost':>5} {'drawn':>5}")
    for rank, row in enumerate(reply.players, start=1):
        name = (row.display_name or row.player)[:20] + _KIND_MARKS.get(row.kind, "")
        print(f"  {rank:>3}  {name:<24} {row.played:>6} {row.won:>5} {row.lost:>5} {row.drawn:>5}")
    for statistic, mean in reply.mean_statistics.items():
        print(f"  mean {statistic}: {mean:.2f}")
    for reason, count in sorted(reply.end_reasons.items(), key=lambda item: -item[1]):
        print(f"  ended by {reason}: {count}")
    return 0


#: how a standings row that is not a signed-in player is marked
_KIND_MARKS = {scoring_pb2.PLAYER_KIND_SEAT: " (seat)"}
