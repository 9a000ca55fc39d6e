"""``tabletop replay``, ``export``, ``render`` and ``verify``: a match's history, from the
gateway or from an exported file."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import grpc
from google.protobuf import json_format

from services.adapters import views
from services.adapters.folding import fold, fold_board_events
from services.adapters.verify import verify_match
from services.cli.client import GatewayClient, reason_of, render_view
from services.cli.commands.shared import client_for, console
from services.cli.commands.talk import line
from tabletop.v1 import gateway_pb2, match_pb2

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
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


def _match_or_file(args: argparse.Namespace) -> None:
    if not (args.match_id or args.file):
        raise SystemExit(f"tabletop {args.command}: give a MATCH_ID or --file")


def _load_export(path: str) -> gateway_pb2.MatchLog:
    return json_format.Parse(Path(path).read_text(), gateway_pb2.MatchLog())


def cmd_replay(args: argparse.Namespace) -> int:
    _match_or_file(args)
    if args.file:
        return _replay_file(args)
    client = client_for(args)
    last: match_pb2.MatchView | None = None
    steps = 0
    for step in _replay_steps(client, args.match_id, args.viewer):
        steps += 1
        last = step.view
        if args.json:
            print(
                json.dumps(
                    {
                        "step": step.step,
                        "event": step.description,
                        "version": step.view.version,
                        "talk": [line(m) for m in step.talk],
                    }
                )
            )
        elif not args.verify:
            print(f"── step {step.step}: {step.description}")
            print(render_view(step.view))
            for said in step.talk:
                print(f"  talk {line(said)}")
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


def _exported(args: argparse.Namespace, doing: str) -> gateway_pb2.MatchLog | None:
    """The match's whole log from the gateway; None (said why) when it refuses."""
    client = client_for(args)
    try:
        exported: gateway_pb2.MatchLog = client.stub.ExportMatch(
            gateway_pb2.ExportMatchRequest(match_id=args.match_id),
            metadata=client.auth(args.match_id),
        )
    except grpc.RpcError as error:
        console.print(f"[red]cannot {doing}:[/] {reason_of(error)}")
        return None
    return exported


def cmd_export(args: argparse.Namespace) -> int:
    exported = _exported(args, "export")
    if exported is None:
        return 2
    text = json_format.MessageToJson(exported)
    if args.output == "-":
        print(text)
    else:
        Path(args.output).write_text(text)
        console.print(f"wrote {len(exported.events)} events to {args.output}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    client = client_for(args)
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
    _match_or_file(args)
    exported = _load_export(args.file) if args.file else _exported(args, "verify")
    if exported is None:
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
