"""``tabletop play`` and ``tabletop join``: a match at the terminal, seats by hand or by bots;
``tabletop undo``: a seat's last move taken back, where the rules allow it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import grpc
from rich.progress import Progress

from services.adapters.game_adapter import chosen_action, legal_entry
from services.bots.network_bot import NetworkBot
from services.cli.bots import bot_seats
from services.cli.client import (
    GatewayClient,
    clock_data,
    play_on,
    play_seats,
    reason_of,
    render_view,
)
from services.cli.commands.shared import client_for, console, game_name, game_options
from services.cli.commands.talk import TalkFeed
from services.games.registry import all_games
from tabletop.v1 import match_pb2

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    play = sub.add_parser("play", help="play a match against the running gateway")
    play.add_argument("game", type=game_name, choices=sorted(all_games()))
    play.add_argument("--players", help="comma-separated seat names, in turn order")
    play.add_argument("--seats", type=int, help="number of seats (default: the game's minimum)")
    play.add_argument(
        "--bot",
        help="a bot for every seat, or SEAT=KIND,… for some (others: hot seat); KIND is a "
        "level (easy, medium, hard: search for 0.1 s (Drillit!: 0.3 s) or 0.75 s of CPU a move) "
        "or random or greedy",
    )
    play.add_argument(
        "--bots-by-service",
        action="store_true",
        help="leave the --bot seats to the bots service (it must run: make up starts it) "
        "instead of playing them from this terminal; their KIND must be a level",
    )
    play.add_argument("--option", action="append", default=[], help="game option KEY=VALUE")
    play.add_argument(
        "--clock",
        default="",
        help="a time control: live:BANK+INCREMENT (e.g. live:10m+5s) or turn:TIME (e.g. "
        "turn:24h); units s, m, h, d",
    )
    play.add_argument(
        "--on-timeout",
        default="",
        choices=("forfeit", "bot", "pass"),
        help="what a seat's timeout does (default forfeit; pass only where the rules have one)",
    )
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
    join.add_argument("--bot", help="let a bot play the seat: easy, medium, hard, random or greedy")
    join.add_argument("--seed", type=int, default=None, help="seed of the bot's choices")
    join.set_defaults(func=cmd_join)

    undo = sub.add_parser(
        "undo",
        help="take back your seat's last move of this turn (not once a die was rolled, a "
        "card drawn or anything hidden revealed since)",
    )
    undo.add_argument("match_id")
    undo.add_argument("seat")
    undo.add_argument("--json", action="store_true")
    undo.set_defaults(func=cmd_undo)


def cmd_undo(args: argparse.Namespace) -> int:
    reply = client_for(args).undo(args.match_id, args.seat)
    if args.json:
        print(json.dumps({"match_id": args.match_id, "seat": args.seat, "version": reply.version}))
    else:
        print(f"{args.seat}'s last move was taken back (v{reply.version})")
    return 0


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
        if args.bots_by_service and any(not bot.level for bot in bots.values()):
            raise ValueError("the bots service plays levels only: easy, medium or hard")
    except ValueError as bad:
        console.print(f"[red]{bad}[/]")
        return 2
    client = client_for(args)
    # Seats left open (--open) wait for others: `tabletop join MATCH` from another terminal;
    # seats left to the bots service (--bots-by-service) are its to join.
    served = {seat: bot.level for seat, bot in bots.items()} if args.bots_by_service else {}
    opened = set(args.open.split(",")) if args.open else set()
    mine = [p for p in players if p not in opened and p not in served]
    bots = {seat: bot for seat, bot in bots.items() if seat not in served}
    try:
        # the first of our seats is taken with the create: one round trip fewer
        match_id = client.create(
            args.game,
            players,
            _with_clock(game_options(args.option), args.clock, args.on_timeout),
            private=args.private,
            bots=[*bots, *served],
            bot_levels=served,
            seat=mine[0] if mine else "",
            name=_name(mine[0], bots) if mine else "",
        )
        for seat in mine[1:]:
            client.join(match_id, seat, _name(seat, bots))
    except grpc.RpcError as error:
        console.print(f"[red]cannot create the match:[/] {reason_of(error)}")
        return 2
    if opened:
        console.print(f"match {match_id}: seats {', '.join(sorted(opened))} wait for players")
    if served:
        console.print(f"match {match_id}: the bots service plays {', '.join(sorted(served))}")
    interactive = len(bots) + len(served) < len(players)
    # the table's talk, shown between moves to whoever plays by hand
    feed = TalkFeed(client, match_id, mine[0]) if interactive and mine else None
    left = False
    with Progress(console=console, transient=True, disable=interactive or args.json) as bar:
        task = bar.add_task(f"{args.game} {match_id[:8]}", total=None)

        def choose(mover: str, legal: Any) -> match_pb2.LegalAction | None:
            nonlocal left
            bar.advance(task)
            if mover in bots:
                view = client.view(match_id, mover, min_version=legal.version)
                return bots[mover].choose(view, legal)
            chosen = _ask(client, match_id, mover, legal, feed)
            left = chosen is None
            return chosen

        def refused(error: grpc.RpcError) -> None:
            console.print(f"[red]refused:[/] {reason_of(error)}")

        if not mine:  # every seat is the bots service's: watch it play
            actions, state = 0, _watch_to_end(client, match_id, lambda: bar.advance(task))
        elif opened or served:
            actions, state = play_seats(client, match_id, mine, choose, refused)
            left = left or state is None
        else:
            actions, state = play_on(client, match_id, players[0], choose, refused)
    if feed is not None:
        feed.close()
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
    if final.HasField("clock"):
        result["clock"] = clock_data(final)
    if args.json:
        print(json.dumps(result))
    else:
        print(render_view(final))
        print(
            f"\nmatch {match_id}: {final.end_reason} — {result['results']} ({final.version} events)"
        )
    return 0


def _watch_to_end(client: GatewayClient, match_id: str, moved: Callable[[], None]) -> Any:
    """The match's spectator view once it is over, followed as others play it."""
    view = client.view(match_id, "")
    while view.status != match_pb2.MATCH_STATUS_FINISHED:
        try:
            view = client.view(match_id, "", min_version=view.version + 1, wait_ms=30_000)
            moved()
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                raise
    return view


def _name(seat: str, bots: dict[str, NetworkBot]) -> str:
    """The name a seat shows: a bot played from here says its level."""
    bot = bots.get(seat)
    return f"{seat} ({bot.level} bot)" if bot is not None and bot.level else seat


def cmd_join(args: argparse.Namespace) -> int:
    """Take a seat of someone's match (or your seat again, e.g. on a new device) and play it."""
    client = client_for(args)
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
    feed = None if bots else TalkFeed(client, args.match_id, joined.seat)

    def choose(mover: str, legal: Any) -> match_pb2.LegalAction | None:
        if mover in bots:
            seen = client.view(args.match_id, mover, min_version=legal.version)
            return bots[mover].choose(seen, legal)
        return _ask(client, args.match_id, mover, legal, feed)

    def refused(error: grpc.RpcError) -> None:
        console.print(f"[red]refused:[/] {reason_of(error)}")

    _, legal = play_seats(client, args.match_id, [joined.seat], choose, refused)
    if feed is not None:
        feed.close()
    if legal is None:
        console.print(f"left match {args.match_id}; join again to go on")
        return 0
    final = client.view(args.match_id, joined.seat, min_version=legal.version)
    print(render_view(final))
    print(f"\nmatch {args.match_id}: {final.end_reason} — {dict(final.results)}")
    return 0


def _ask(
    client: GatewayClient,
    match_id: str,
    player: str,
    legal: Any,
    feed: TalkFeed | None = None,
) -> match_pb2.LegalAction | None:
    view = client.view(match_id, player, min_version=legal.version)
    print(render_view(view))
    print(f"\n{player}, choose an action ({legal.next.phase}):")
    for i, action in enumerate(legal.actions, start=1):
        print(f"  {i:3d}. {action.label}")
    if feed is not None:
        print("  (say MESSAGE: talk at the table; Enter: show new talk)")
    while True:
        for said in feed.new() if feed is not None else ():
            print(f"  talk {said}")
        answer = input("> ").strip()
        if answer in ("q", "quit"):
            return None
        if feed is not None and (answer == "say" or answer.startswith("say ")):
            print(f"  {feed.say(player, answer[4:])}")
            continue
        if feed is not None and not answer:
            continue
        if answer.isdigit() and 1 <= int(answer) <= len(legal.actions):
            chosen: match_pb2.LegalAction = legal.actions[int(answer) - 1]
            return _fill_in(view.game, chosen) if chosen.params else chosen
        print(f"type a number from 1 to {len(legal.actions)}, or q to leave")


def _fill_in(game: str, template: match_pb2.LegalAction) -> match_pb2.LegalAction:
    """Ask for each parameter of a parametric action, within its range."""
    entry = legal_entry(game, template)
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
    return chosen_action(all_games()[game], entry.instantiate(**values))


def _with_clock(options: dict[str, str], control: str, on_timeout: str) -> dict[str, str]:
    """The options with the --clock and --on-timeout given (the gateway checks them)."""
    if control:
        options["clock"] = control
    if on_timeout:
        options["on_timeout"] = on_timeout
    return options
