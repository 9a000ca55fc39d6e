"""``tabletop stack`` and ``tabletop admin``: run the local services and operate a deployment
(topics, rebuilding the read models, dead-lettered matches)."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
from typing import TYPE_CHECKING

from services.cli.commands.shared import console
from services.cli.stack import local_stack

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    stack = sub.add_parser("stack", help="start/stop the local services (make up / make down)")
    stack.add_argument("action", choices=["up", "down", "status"])
    stack.add_argument("--json", action="store_true")
    stack.set_defaults(func=cmd_stack)

    admin = sub.add_parser("admin", help="operations")
    admin.add_argument(
        "action",
        choices=["create-topics", "rebuild-compare", "deadletter"],
        help="create-topics; rebuild-compare: rebuild every read model from offset 0, compare "
        "with the live one; deadletter list: the matches whose views stopped on a fold error; "
        "deadletter retry [MATCH ...]: fold them again from their events (after the fix)",
    )
    admin.add_argument("rest", nargs="*", metavar="ARG", help="deadletter: list | retry MATCH…")
    admin.add_argument("--topic-prefix", default="", help="the deployment's topic prefix")
    admin.add_argument("--json", action="store_true")
    admin.set_defaults(func=cmd_admin)


def cmd_stack(args: argparse.Namespace) -> int:
    stack = local_stack()
    if args.action == "up":
        with console.status("starting the stack"):
            stack.up()
        print(f"gateway on {stack.addr('gateway')} (gRPC, reflection on); logs in {stack.run_dir}/")
        print(f"play in a browser: {stack.web_url}")
    elif args.action == "down":
        stack.down()
        print("stack stopped")
    else:
        status = stack.status()
        print(
            json.dumps(status)
            if args.json
            else "\n".join(f"{k:10s} {v}" for k, v in status.items())
        )
        return 0 if all(v == "healthy" for v in status.values()) else 1
    return 0


def cmd_admin(args: argparse.Namespace) -> int:
    stack = local_stack()
    if args.action == "create-topics":
        # A deployment's topics (k8s/base/topics.yaml runs this): the prefix, partitions and
        # replication the services are configured with.
        stack.topic_prefix = args.topic_prefix or os.environ.get("TABLETOP_TOPIC_PREFIX", "")
        stack.partitions = int(os.environ.get("TABLETOP_TOPIC_PARTITIONS", stack.partitions))
        created = stack.create_topics(int(os.environ.get("TABLETOP_TOPIC_REPLICATION", "1")))
        print(f"created {len(created)} topics" + (f": {', '.join(created)}" if created else ""))
        return 0
    if args.action == "deadletter":
        return dead_letters(stack.kafka_bootstrap, args)
    if args.rest:
        raise SystemExit(f"tabletop admin {args.action} takes no further arguments")
    from services.projector.rebuild import compare_with_live

    # The operator reads each seat's view with the gateway's token key (the local stack's
    # unless TABLETOP_TOKEN_KEY names the deployment's).
    key = os.environ.get("TABLETOP_TOKEN_KEY") or stack.secrets()["TABLETOP_TOKEN_KEY"]
    with console.status("rebuilding the read models from offset 0"):
        report = asyncio.run(
            compare_with_live(stack.kafka_bootstrap, args.topic_prefix, args.gateway, key.encode())
        )
    if args.json:
        print(json.dumps(dataclasses.asdict(report)))
    else:
        print(
            f"folded {report.events} events into {report.matches} matches; "
            f"compared {report.compared} views: {len(report.differences)} differ"
        )
        for difference in report.differences:
            print(f"  - {difference}")
    return 0 if not report.differences else 1


def dead_letters(bootstrap: str, args: argparse.Namespace) -> int:
    """``deadletter list``: the matches whose views stopped; ``deadletter retry [MATCH ...]``:
    ask the projector to fold them (default: every one listed) again from their events."""
    from services.projector.deadletters import read_outstanding, request_retry

    verb, *match_ids = args.rest or ["list"]
    if verb not in ("list", "retry") or (verb == "list" and match_ids):
        raise SystemExit("tabletop admin deadletter: list, or retry [MATCH ...]")
    listed = asyncio.run(read_outstanding(bootstrap, args.topic_prefix))
    if verb == "list":
        if args.json:
            print(json.dumps([dataclasses.asdict(o) for o in listed.values()]))
            return 0
        print(f"{len(listed)} dead-lettered match{'' if len(listed) == 1 else 'es'}")
        for o in listed.values():
            print(
                f"  {o.match_id}  {o.reason} at {o.stream} #{o.sequence} ({o.event_type}), "
                f"offset {o.offset}; {o.events} event{'s' if o.events > 1 else ''} set aside\n"
                f"    {o.error}"
            )
        return 0
    chosen = match_ids or sorted(listed)
    asyncio.run(request_retry(bootstrap, args.topic_prefix, chosen))
    if args.json:
        print(json.dumps({"retried": chosen}))
    else:
        print(
            f"asked the projector to fold {len(chosen)} match"
            f"{'' if len(chosen) == 1 else 'es'} again from their events; "
            "`tabletop admin deadletter list` shows those that fail again"
        )
    return 0
