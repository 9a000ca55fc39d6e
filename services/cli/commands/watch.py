"""``tabletop watch``: a match's views as they come, and its talk, until it is over."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

import grpc

from services.cli.client import clock_data, reason_of, render_view
from services.cli.commands.shared import client_for, console
from services.cli.commands.talk import TalkFeed

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    watch = sub.add_parser(
        "watch",
        help="follow a match live: each new view and the table's talk",
        description="Print each new view of the match (as your seat sees it with --seat, else "
        "as a spectator) and its talk, until it is over. A stream cut short, e.g. by a gateway "
        "restart, resumes by itself after the last version shown.",
    )
    watch.add_argument("match_id")
    watch.add_argument("--seat", default="", help="see it as this seat of yours")
    watch.add_argument("--json", action="store_true", help="one JSON object per view")
    watch.set_defaults(func=cmd_watch)


def cmd_watch(args: argparse.Namespace) -> int:
    client = client_for(args)
    feed = TalkFeed(client, args.match_id, args.seat)
    try:
        for view in client.follow(args.match_id, args.seat):
            if args.json:
                print(
                    json.dumps(
                        {
                            "version": view.version,
                            "next": list(view.next.players),
                            "finished": view.next.finished,
                            "clock": clock_data(view),
                            "talk": feed.new(),
                        }
                    ),
                    flush=True,
                )
                continue
            print(f"── version {view.version}")
            print(render_view(view))
            for said in feed.new():
                print(f"  talk {said}")
    except grpc.RpcError as error:
        console.print(f"[red]cannot watch:[/] {reason_of(error)}")
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        feed.close()
    return 0
