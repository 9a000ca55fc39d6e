"""``tabletop``: play, replay, verify and run Tabletop from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
from google.protobuf import json_format
from rich.console import Console
from rich.progress import Progress

from services.adapters import views
from services.adapters.folding import fold, fold_board_events
from services.adapters.game_adapter import chosen_action, legal_entry
from services.adapters.verify import verify_match
from services.cli.bots import bot_seats
from services.cli.client import (
    GatewayClient,
    TokenStore,
    play_on,
    play_seats,
    reason_of,
    render_view,
)
from services.cli.stack import Stack, kafka_password_name, local_stack
from services.common.config import DEFAULT_PORTS
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import ROLES, acl_table, user_name
from services.common.kafka_admin import grant
from services.games.registry import all_games
from tabletop.v1 import gateway_pb2, match_pb2, scoring_pb2


def game_name(text: str) -> str:
    """``imperial-miners`` on the command line is the game ``imperial_miners``."""
    return text.replace("-", "_")


DEFAULT_GATEWAY = f"127.0.0.1:{DEFAULT_PORTS['gateway'][0]}"
console = Console(stderr=True)


def _options(pairs: list[str]) -> dict[str, str]:
    options = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep:
            raise SystemExit(f"--option takes KEY=VALUE, not {pair!r}")
        options[key] = value
    return options


def _client(args: argparse.Namespace) -> GatewayClient:
    """A gateway client with the tokens this user kept (TLS when asked)."""
    return GatewayClient(args.gateway, args.tls, args.ca, TokenStore.default())


# -- play ------------------------------------------------------------------------------
def cmd_play(args: argparse.Namespace) -> int:
    game = all_games()[args.game]
    players = (
        args.players.split(",")
        if args.players
        else [
            f"player{i + 1}" for i in range(max(game.min_players, args.seats or game.min_players))
        ]
    )
    try:
        bots = bot_seats(args.game, args.bot, players, args.seed)
    except ValueError as bad:
        console.print(f"[red]{bad}[/]")
        return 2
    client = _client(args)
    # Seats left open (--open) wait for others: `tabletop join MATCH` from another terminal.
    opened = set(args.open.split(",")) if args.open else set()
    mine = [p for p in players if p not in opened]
    try:
        # the first of our seats is taken with the create: one round trip fewer
        match_id = client.create(
            args.game,
            players,
            _options(args.option),
            private=args.private,
            bots=list(bots),
            seat=mine[0] if mine else "",
            name=mine[0] if mine else "",
        )
        client.join_all(match_id, mine[1:])
    except grpc.RpcError as error:
        console.print(f"[red]cannot create the match:[/] {reason_of(error)}")
        return 2
    if opened:
        console.print(f"match {match_id}: seats {', '.join(sorted(opened))} wait for players")
    interactive = len(bots) < len(players)
    left = False
    with Progress(console=console, transient=True, disable=interactive or args.json) as bar:
        task = bar.add_task(f"{args.game} {match_id[:8]}", total=None)

        def choose(mover: str, legal: Any) -> match_pb2.LegalAction | None:
            nonlocal left
            bar.advance(task)
            if mover in bots:
                view = client.view(match_id, mover, min_version=legal.version)
                return bots[mover].choose(view, legal)
            chosen = _ask(client, match_id, mover, legal)
            left = chosen is None
            return chosen

        def refused(error: grpc.RpcError) -> None:
            console.print(f"[red]refused:[/] {reason_of(error)}")

        if opened:
            actions, state = play_seats(client, match_id, mine, choose, refused)
            left = left or state is None
        else:
            actions, state = play_on(client, match_id, players[0], choose, refused)
    if left or state is None:
        console.print(f"left match {match_id}; it stays open")
        return 0
    final = client.view(match_id, "", min_version=state.version)
    result = {
        "match_id": match_id,
        "game": args.game,
        "outcome": final.end_reason,
        "results": dict(final.results),
        "events": final.version,
        "actions": actions,
    }
    if args.json:
        print(json.dumps(result))
    else:
        print(render_view(final))
        print(
            f"\nmatch {match_id}: {final.end_reason} — {result['results']} ({final.version} events)"
        )
    return 0


def _ask(
    client: GatewayClient, match_id: str, player: str, legal: Any
) -> match_pb2.LegalAction | None:
    view = client.view(match_id, player, min_version=legal.version)
    print(render_view(view))
    print(f"\n{player}, choose an action ({legal.next.phase}):")
    for i, action in enumerate(legal.actions, start=1):
        print(f"  {i:3d}. {action.label}")
    while True:
        answer = input("> ").strip()
        if answer in ("q", "quit"):
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(legal.actions):
            chosen: match_pb2.LegalAction = legal.actions[int(answer) - 1]
            return _fill_in(view.game, chosen) if chosen.params else chosen
        print(f"type a number from 1 to {len(legal.actions)}, or q to leave")


def _fill_in(game_name: str, template: match_pb2.LegalAction) -> match_pb2.LegalAction:
    """Ask for each parameter of a parametric action, within its range."""
    entry = legal_entry(game_name, template)
    values = {}
    for p in template.params:
        while True:
            answer = input(
                f"  {p.name} ({p.low:g} to {p.high:g}{' ' + p.unit if p.unit else ''}): "
            )
            try:
                value = float(answer)
            except ValueError:
                value = float("nan")
            if p.low <= value <= p.high:
                values[p.name] = value
                break
            print(f"  a number from {p.low:g} to {p.high:g}, please")
    return chosen_action(all_games()[game_name], entry.instantiate(**values))


def cmd_join(args: argparse.Namespace) -> int:
    """Take a seat of someone's match (or your seat again, e.g. on a new device) and play it."""
    client = _client(args)
    try:
        joined = client.join(args.match_id, args.seat or "", args.name or "")
        view = client.view(args.match_id, joined.seat)
        bots = bot_seats(view.game, args.bot, [joined.seat], args.seed) if args.bot else {}
    except grpc.RpcError as error:
        console.print(f"[red]cannot join:[/] {reason_of(error)}")
        return 2
    except ValueError as bad:
        console.print(f"[red]{bad}[/]")
        return 2
    console.print(f"joined match {args.match_id} as {joined.seat}")

    def choose(mover: str, legal: Any) -> match_pb2.LegalAction | None:
        if mover in bots:
            seen = client.view(args.match_id, mover, min_version=legal.version)
            return bots[mover].choose(seen, legal)
        return _ask(client, args.match_id, mover, legal)

    def refused(error: grpc.RpcError) -> None:
        console.print(f"[red]refused:[/] {reason_of(error)}")

    _, legal = play_seats(client, args.match_id, [joined.seat], choose, refused)
    if legal is None:
        console.print(f"left match {args.match_id}; join again to go on")
        return 0
    final = client.view(args.match_id, joined.seat, min_version=legal.version)
    print(render_view(final))
    print(f"\nmatch {args.match_id}: {final.end_reason} — {dict(final.results)}")
    return 0


# -- replay and verify -----------------------------------------------------------------
def _load_export(path: str) -> gateway_pb2.MatchLog:
    return json_format.Parse(Path(path).read_text(), gateway_pb2.MatchLog())


def cmd_replay(args: argparse.Namespace) -> int:
    if args.file:
        return _replay_file(args)
    client = _client(args)
    last: match_pb2.MatchView | None = None
    steps = 0
    for step in _replay_steps(client, args.match_id, args.viewer):
        steps += 1
        last = step.view
        if args.json:
            print(
                json.dumps(
                    {"step": step.step, "event": step.description, "version": step.view.version}
                )
            )
        elif not args.verify:
            print(f"── step {step.step}: {step.description}")
            print(render_view(step.view))
            if args.step and sys.stdin.isatty():
                input("(enter for the next step) ")
    if not args.verify:
        return 0
    live = client.view(args.match_id, args.viewer)
    same = last is not None and _comparable(last) == _comparable(live)
    report = {
        "match_id": args.match_id,
        "steps": steps,
        "live_version": live.version,
        "equal": same,
    }
    print(
        json.dumps(report)
        if args.json
        else (
            f"replayed {steps} events: the final view "
            f"{'equals' if same else 'DIFFERS FROM'} the live one"
        )
    )
    return 0 if same else 1


def _replay_steps(
    client: GatewayClient, match_id: str, viewer: str
) -> Iterator[gateway_pb2.ReplayStep]:
    """A match's replay steps, many to a message (ReplayMatchBatches); one a message from a
    gateway older than batches."""
    metadata = client.auth(match_id, viewer)
    batches = client.stub.ReplayMatchBatches(
        gateway_pb2.ReplayMatchBatchesRequest(match_id=match_id, viewer=viewer),
        metadata=metadata,
    )
    try:
        for batch in batches:
            yield from batch.steps
        return
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.UNIMPLEMENTED:
            raise
    yield from client.stub.ReplayMatch(
        gateway_pb2.ReplayMatchRequest(match_id=match_id, viewer=viewer), metadata=metadata
    )


def _comparable(view: match_pb2.MatchView) -> bytes:
    """A view without what other streams add (revealed seeds), for comparing folds."""
    copy = match_pb2.MatchView()
    copy.CopyFrom(view)
    copy.ClearField("provenance")
    return copy.SerializeToString(deterministic=True)


def _replay_file(args: argparse.Namespace) -> int:
    exported = _load_export(args.file)
    board = sorted((e for e in exported.events if e.stream == "board"), key=lambda e: e.sequence)
    match = fold_board_events(board[:1])
    for envelope in board[1:]:
        fold(match, envelope)
        if not args.json:
            print(
                f"── step {envelope.sequence}: {envelope.actor}: "
                f"{envelope.event_type.rsplit('.', 1)[-1]}"
            )
    view = views.view(match, args.viewer)
    if args.json:
        print(
            json.dumps(
                {"match_id": exported.match_id, "steps": len(board), "results": dict(view.results)}
            )
        )
    else:
        print(render_view(view))
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    client = _client(args)
    try:
        exported = client.stub.ExportMatch(
            gateway_pb2.ExportMatchRequest(match_id=args.match_id),
            metadata=client.auth(args.match_id),
        )
    except grpc.RpcError as error:
        console.print(f"[red]cannot export:[/] {reason_of(error)}")
        return 2
    text = json_format.MessageToJson(exported)
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text)
        console.print(f"wrote {len(exported.events)} events to {args.output}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    client = _client(args)
    request = gateway_pb2.GetPictureRequest(match_id=args.match_id)
    if args.version is not None:
        request.version = args.version
    try:
        picture = client.stub.GetPicture(request, metadata=client.auth(args.match_id, args.viewer))
    except grpc.RpcError as error:
        console.print(f"[red]cannot render:[/] {reason_of(error)}")
        return 2
    if not picture.svg:
        console.print(f"[yellow]{picture.game} has no picture yet; its text:[/]")
        print(picture.text)
        return 1
    if args.output == "-":
        print(picture.svg)
    else:
        Path(args.output).write_text(picture.svg)
        who = picture.viewer or "a spectator"
        console.print(f"wrote version {picture.version} as {who} sees it to {args.output}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    if args.file:
        exported = _load_export(args.file)
    else:
        client = _client(args)
        try:
            exported = client.stub.ExportMatch(
                gateway_pb2.ExportMatchRequest(match_id=args.match_id),
                metadata=client.auth(args.match_id),
            )
        except grpc.RpcError as error:
            console.print(f"[red]cannot verify:[/] {reason_of(error)}")
            return 2
    result = verify_match(list(exported.events))
    report = {
        "match_id": exported.match_id,
        "ok": result.ok,
        "checked": result.checked,
        "problems": result.problems,
    }
    if args.json:
        print(json.dumps(report))
    else:
        verdict = "verified" if result.ok else "NOT verified"
        print(
            f"match {exported.match_id}: randomness {verdict} ({result.checked} outcomes checked)"
        )
        for problem in result.problems:
            print(f"  - {problem}")
    return 0 if result.ok else 1


# -- lobby -----------------------------------------------------------------------------
def cmd_matches(args: argparse.Namespace) -> int:
    reply = _client(args).stub.ListMatches(gateway_pb2.ListMatchesRequest(game=args.game or ""))
    rows = [json_format.MessageToDict(m, preserving_proto_field_name=True) for m in reply.matches]
    if args.json:
        print(json.dumps(rows))
    else:
        for m in reply.matches:
            status = match_pb2.MatchStatus.Name(m.status).removeprefix("MATCH_STATUS_").lower()
            print(f"{m.match_id}  {m.game:10s} {status:8s} v{m.version:<5d} {m.end_reason}")
    return 0


def cmd_standings(args: argparse.Namespace) -> int:
    reply = _client(args).stub.GetStandings(scoring_pb2.GetStandingsRequest(game=args.game))
    data = json_format.MessageToDict(reply, preserving_proto_field_name=True)
    print(json.dumps(data) if args.json else json.dumps(data, indent=2))
    return 0


# -- simulate --------------------------------------------------------------------------
def cmd_simulate(args: argparse.Namespace) -> int:
    from services.cli.simulate import Simulation, describe, simulate
    from services.games.contract import MalformedAction

    shorthands = {"difficulty": args.difficulty, "distance": args.distance}
    options = {k: v for k, v in shorthands.items() if v is not None} | _options(args.option)
    if args.levels:
        return _simulate_levels(args, options)
    sim = Simulation(args.game, args.games, args.bot, options, args.seats, args.seed)
    try:
        with Progress(console=console, transient=True, disable=args.json) as bar:
            task = bar.add_task(f"simulating {args.game}", total=args.games)
            report = simulate(sim, lambda done: bar.update(task, completed=done))
    except (MalformedAction, ValueError) as bad:
        console.print(f"[red]{bad}[/]\n{args.game} {describe(all_games()[args.game])}")
        return 2
    print(json.dumps(report) if args.json else _report_text(report))
    return 0


def _simulate_levels(args: argparse.Namespace, options: dict[str, str]) -> int:
    from services.cli.simulate import Comparison, compare, describe
    from services.games.contract import MalformedAction

    comparison = Comparison(
        args.game, args.games, tuple(args.levels.split(",")), options, args.seed
    )
    try:
        with Progress(console=console, transient=True, disable=args.json) as bar:
            task = bar.add_task(f"{args.game}: {args.levels}", total=args.games)
            report = compare(
                comparison, lambda done: bar.update(task, completed=done), args.results
            )
    except (MalformedAction, ValueError) as bad:
        console.print(f"[red]{bad}[/]\n{args.game} {describe(all_games()[args.game])}")
        return 2
    print(json.dumps(report) if args.json else _levels_text(report))
    return 0


def _levels_text(report: dict[str, Any]) -> str:
    lines = [
        f"{report['game']} {','.join(report['levels'])} {report['options']}: "
        f"{report['games_played']} matches (seeds {report['seed']}+, seats rotated)",
        f"{'level':8s} {'won':>5s} {'rate':>6s} {'95% interval':>15s} {'fair':>5s} "
        f"{'score':>6s} {'CPU/move mean':>13s} {'p99':>6s} {'max':>6s}",
    ]
    for name, row in report["by_level"].items():
        low, high = row["win_rate_95"]
        lines.append(
            f"{name:8s} {row['wins']:5d} {row['win_rate']:6.1%} {low:7.1%}-{high:6.1%} "
            f"{row['fair_share']:5.0%} {row['mean_score']:6.2f} {row['move_cpu_mean_s']:12.3f}s "
            f"{row['move_cpu_p99_s']:5.2f}s {row['move_cpu_max_s']:5.2f}s"
        )
    return "\n".join(lines)


def _report_text(report: dict[str, Any]) -> str:
    lines = []
    for key, value in report.items():
        if key.startswith("by_"):
            lines.append(f"{key:>16}:")
            for group, means in value.items():
                figures = "  ".join(f"{k}={v:.3g}" for k, v in means.items())
                lines.append(f"{'':>18}{group}: {figures}")
        else:
            lines.append(f"{key:>16}: {value}")
    return "\n".join(lines)


# -- stack -----------------------------------------------------------------------------
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
    if args.action == "kafka-users":
        return kafka_users(stack, args)
    if args.action == "deadletter":
        return dead_letters(stack.kafka, args)
    if args.rest:
        raise SystemExit(f"tabletop admin {args.action} takes no further arguments")
    from services.projector.rebuild import compare_with_live

    # The operator reads each seat's view with the gateway's token key (the local stack's
    # unless TABLETOP_TOKEN_KEY names the deployment's).
    key = os.environ.get("TABLETOP_TOKEN_KEY") or stack.secrets()["TABLETOP_TOKEN_KEY"]
    with console.status("rebuilding the read models from offset 0"):
        report = asyncio.run(
            compare_with_live(stack.kafka, args.topic_prefix, args.gateway, key.encode())
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


def kafka_users(stack: Stack, args: argparse.Namespace) -> int:
    """Create or update the installation's Kafka users, each with the password given as
    TABLETOP_KAFKA_PASSWORD_<ROLE> (a deployment's secrets; the local stack's without any),
    and make their ACLs what services/common/kafka_acls.py says."""
    if args.rest:
        raise SystemExit("tabletop admin kafka-users takes no further arguments")
    given = {role: os.environ.get(kafka_password_name(role), "") for role in ROLES}
    if any(given.values()):
        unset = [kafka_password_name(role) for role, password in given.items() if not password]
        if unset:
            raise SystemExit(f"tabletop admin kafka-users: {', '.join(unset)} not set")
    else:
        held = stack.secrets()
        given = {role: held[kafka_password_name(role)] for role in ROLES}
    prefix = args.topic_prefix or os.environ.get("TABLETOP_TOPIC_PREFIX", "")
    passwords = {user_name(prefix, role): p for role, p in given.items()}
    created, deleted = asyncio.run(grant(stack.kafka, prefix, passwords))
    table = acl_table(prefix)
    if args.json:
        print(json.dumps({"users": sorted(passwords), "acls": [str(acl) for acl in table]}))
    else:
        print(
            f"{len(passwords)} Kafka users, {len(table)} ACLs "
            f"({created} created, {deleted} deleted)"
        )
        for acl in table:
            print(f"  {acl}")
    return 0


def dead_letters(kafka: KafkaAccess, args: argparse.Namespace) -> int:
    """``deadletter list``: the matches whose views stopped; ``deadletter retry [MATCH ...]``:
    ask the projector to fold them (default: every one listed) again from their events."""
    from services.projector.deadletters import read_outstanding, request_retry

    verb, *match_ids = args.rest or ["list"]
    if verb not in ("list", "retry") or (verb == "list" and match_ids):
        raise SystemExit("tabletop admin deadletter: list, or retry [MATCH ...]")
    listed = asyncio.run(read_outstanding(kafka, args.topic_prefix))
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
    asyncio.run(request_retry(kafka, args.topic_prefix, chosen))
    if args.json:
        print(json.dumps({"retried": chosen}))
    else:
        print(
            f"asked the projector to fold {len(chosen)} match"
            f"{'' if len(chosen) == 1 else 'es'} again from their events; "
            "`tabletop admin deadletter list` shows those that fail again"
        )
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tabletop", description=__doc__)
    parser.add_argument("--gateway", default=DEFAULT_GATEWAY, help="gateway address (host:port)")
    parser.add_argument("--tls", action="store_true", help="connect with TLS (system roots)")
    parser.add_argument("--ca", help="connect with TLS, trusting this CA certificate (PEM)")
    sub = parser.add_subparsers(dest="command", required=True)

    play = sub.add_parser("play", help="play a match against the running gateway")
    play.add_argument("game", type=game_name, choices=sorted(all_games()))
    play.add_argument("--players", help="comma-separated seat names, in turn order")
    play.add_argument("--seats", type=int, help="number of seats (default: the game's minimum)")
    play.add_argument(
        "--bot",
        help="'random' or 'greedy' for every seat, or SEAT=KIND,… for some (others: hot seat)",
    )
    play.add_argument("--option", action="append", default=[], help="game option KEY=VALUE")
    play.add_argument("--seed", type=int, default=None, help="seed of the bots' choices")
    play.add_argument("--json", action="store_true", help="print the final result as JSON")
    play.add_argument("--private", action="store_true", help="unlisted: the match id invites")
    play.add_argument(
        "--open", help="comma-separated seats left for others (they run `tabletop join MATCH`)"
    )
    play.set_defaults(func=cmd_play)

    join = sub.add_parser("join", help="take a seat of a match (or yours again) and play it")
    join.add_argument("match_id")
    join.add_argument("--seat", help="which seat (default: the first free one)")
    join.add_argument("--name", help="the name others see")
    join.add_argument("--bot", help="let a bot play the seat: 'random' or 'greedy'")
    join.add_argument("--seed", type=int, default=None, help="seed of the bot's choices")
    join.set_defaults(func=cmd_join)

    replay = sub.add_parser("replay", help="step through a match's history")
    replay.add_argument("match_id", nargs="?", default="")
    replay.add_argument("--viewer", default="", help="see it as this player (default: spectator)")
    replay.add_argument(
        "--verify", action="store_true", help="fold again; compare with the live view"
    )
    replay.add_argument("--step", action="store_true", help="wait for Enter after each step")
    replay.add_argument("--file", help="replay an exported match file instead")
    replay.add_argument("--json", action="store_true")
    replay.set_defaults(func=cmd_replay)

    export = sub.add_parser("export", help="write a finished match's whole log to a file")
    export.add_argument("match_id")
    export.add_argument("-o", "--output", default="-")
    export.set_defaults(func=cmd_export)

    render = sub.add_parser("render", help="draw a match as SVG (the view your token may see)")
    render.add_argument("match_id")
    render.add_argument("--version", type=int, help="the view after this board event")
    render.add_argument("--viewer", default="", help="use the token of this seat")
    render.add_argument("-o", "--output", default="-")
    render.set_defaults(func=cmd_render)

    verify = sub.add_parser("verify", help="re-derive every roll and shuffle of a finished match")
    verify.add_argument("match_id", nargs="?", default="")
    verify.add_argument("--file", help="verify an exported match file instead")
    verify.add_argument("--json", action="store_true")
    verify.set_defaults(func=cmd_verify)

    matches = sub.add_parser("matches", help="list matches")
    matches.add_argument("--game")
    matches.add_argument("--json", action="store_true")
    matches.set_defaults(func=cmd_matches)

    standings = sub.add_parser("standings", help="results and statistics of a game")
    standings.add_argument("game")
    standings.add_argument("--json", action="store_true")
    standings.set_defaults(func=cmd_standings)

    sim = sub.add_parser("simulate", help="play many matches in-process (no services)")
    sim.add_argument("game", type=game_name, choices=sorted(all_games()))
    sim.add_argument("--games", type=int, default=100)
    sim.add_argument("--bot", default="random")
    sim.add_argument("--option", action="append", default=[], help="game option KEY=VALUE")
    sim.add_argument("--difficulty", help="shorthand for --option difficulty=…")
    sim.add_argument("--distance", help="shorthand for --option distance=…")
    sim.add_argument("--seats", type=int, default=None)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument(
        "--levels",
        help="bot levels by seat, e.g. hard,easy (easy|medium|hard): matches between them, "
        "seats rotated, win rates with 95%% intervals (--seats and --bot do not apply)",
    )
    sim.add_argument(
        "--results",
        help="with --levels: a JSON-lines file each finished match is appended to; a run "
        "given the same file resumes where it stopped",
    )
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(func=cmd_simulate)

    stack = sub.add_parser("stack", help="start/stop the local services (make up / make down)")
    stack.add_argument("action", choices=["up", "down", "status"])
    stack.add_argument("--json", action="store_true")
    stack.set_defaults(func=cmd_stack)

    admin = sub.add_parser("admin", help="operations")
    admin.add_argument(
        "action",
        choices=["create-topics", "kafka-users", "rebuild-compare", "deadletter"],
        help="create-topics; kafka-users: create or update the Kafka users (passwords from "
        "TABLETOP_KAFKA_PASSWORD_<ROLE>, else the local stack's) and set their ACLs; "
        "rebuild-compare: rebuild every read model from offset 0, compare "
        "with the live one; deadletter list: the matches whose views stopped on a fold error; "
        "deadletter retry [MATCH ...]: fold them again from their events (after the fix)",
    )
    admin.add_argument("rest", nargs="*", metavar="ARG", help="deadletter: list | retry MATCH…")
    admin.add_argument("--topic-prefix", default="", help="the deployment's topic prefix")
    admin.add_argument("--json", action="store_true")
    admin.set_defaults(func=cmd_admin)
    return parser


def main(argv: list[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    if args.command in ("replay", "verify") and not (args.match_id or args.file):
        raise SystemExit(f"tabletop {args.command}: give a MATCH_ID or --file")
    try:
        sys.exit(args.func(args))
    except grpc.RpcError as error:
        console.print(f"[red]error:[/] {reason_of(error)}")
        sys.exit(2)
    except KeyboardInterrupt:
        sys.exit(130)


if __name__ == "__main__":
    main()
