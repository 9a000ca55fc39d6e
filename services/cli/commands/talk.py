"""``tabletop talk``: table talk at the terminal, a message posted or the match's talk
followed; and the talk feed ``tabletop play`` and ``join`` show between moves."""

from __future__ import annotations

import argparse
import json
import queue
import threading
from typing import TYPE_CHECKING, Any

import grpc

from services.cli.client import SPECTATOR, GatewayClient, reason_of
from services.cli.commands.shared import client_for, console
from tabletop.v1 import talk_pb2

if TYPE_CHECKING:
    from services.cli.commands.shared import Subcommands


def add_to(sub: Subcommands) -> None:
    talk = sub.add_parser(
        "talk",
        help="post a message at a match's table, or follow its talk",
        description="Post MESSAGE to the match's talk (a seat's token posts to the players, "
        "a spectator's to the spectators; with no token kept for the match, you join it as a "
        "spectator), or, without MESSAGE, print its talk as it comes until Ctrl-C.",
    )
    talk.add_argument("match_id")
    talk.add_argument("message", nargs="?", help="at most 500 bytes (UTF-8), one line")
    talk.add_argument("--seat", help="talk (or read) as this seat of yours (default: your seat)")
    talk.add_argument("--name", default="", help="a spectator's name as others see it")
    talk.add_argument("--after", type=int, default=0, help="follow from after this message")
    talk.add_argument("--json", action="store_true", help="one JSON object per message")
    talk.set_defaults(func=cmd_talk)


def line(message: talk_pb2.TalkMessage) -> str:
    """A message as the terminal shows it: ``[3] ana: dig left`` (a spectator is marked)."""
    who = message.display_name or message.seat or "?"
    if message.channel == talk_pb2.TALK_CHANNEL_SPECTATORS:
        who += " (spectator)"
    return f"[{message.sequence}] {who}: {message.text}"


def as_json(message: talk_pb2.TalkMessage) -> str:
    return json.dumps(
        {
            "sequence": message.sequence,
            "channel": "spectators"
            if message.channel == talk_pb2.TALK_CHANNEL_SPECTATORS
            else "players",
            "seat": message.seat,
            "name": message.display_name,
            "text": message.text,
            "board_version": message.board_version,
            "posted_at_ms": message.posted_at_ms,
        }
    )


def _own_seat(client: GatewayClient, match_id: str, seat: str | None) -> str:
    """The seat to talk as: the one named, else one of ours in the match ("": spectator)."""
    if seat:
        return seat
    ours = client.tokens.seats(client.address, match_id)
    return ours[0] if ours else ""


def cmd_talk(args: argparse.Namespace) -> int:
    client = client_for(args)
    seat = _own_seat(client, args.match_id, args.seat)
    try:
        if not seat and not client.token(args.match_id, SPECTATOR):
            client.join(args.match_id, name=args.name, spectate=True)
        if args.message is None:
            return _follow(client, args.match_id, seat, args.after, args.json)
        reply = client.talk(args.match_id, args.message, seat=seat, name=args.name)
    except grpc.RpcError as error:
        console.print(f"[red]cannot talk:[/] {reason_of(error)}")
        return 2
    if args.json:
        print(as_json(reply.message))
    else:
        console.print(f"said as {reply.message.display_name}")
    return 0


def _follow(client: GatewayClient, match_id: str, seat: str, after: int, as_lines: bool) -> int:
    stream = client.watch_talk(match_id, seat, after)
    try:
        for message in stream:
            print(as_json(message) if as_lines else line(message), flush=True)
    except KeyboardInterrupt:
        stream.cancel()
    return 0


class TalkFeed:
    """A match's talk read in the background while a seat plays (or watches) at the
    terminal: ``new()`` gives what came since it was last asked. A stream cut short is
    opened again after a growing pause, resumed after the last message seen."""

    def __init__(self, client: GatewayClient, match_id: str, seat: str) -> None:
        self._client = client
        self._match_id = match_id
        self._seat = seat
        self._came: queue.Queue[talk_pb2.TalkMessage] = queue.Queue()
        self._closed = threading.Event()
        self._stream: Any = None
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        seen, pause = 0, 0.5
        while not self._closed.is_set():
            self._stream = self._client.watch_talk(self._match_id, self._seat, seen)
            try:
                for message in self._stream:
                    seen, pause = message.sequence, 0.5
                    self._came.put(message)
            except grpc.RpcError as error:
                if error.code() in (
                    grpc.StatusCode.UNAUTHENTICATED,
                    grpc.StatusCode.PERMISSION_DENIED,
                ):
                    return  # no talk for this token: the game goes on without it
            self._closed.wait(pause)
            pause = min(pause * 2, 10.0)

    def new(self) -> list[str]:
        lines = []
        while not self._came.empty():
            lines.append(line(self._came.get_nowait()))
        return lines

    def say(self, seat: str, text: str) -> str:
        """Post as ``seat``; what to tell the player (said, or why not)."""
        try:
            self._client.talk(self._match_id, text, seat=seat)
        except grpc.RpcError as error:
            return f"not said: {reason_of(error)}"
        return "said"

    def close(self) -> None:
        self._closed.set()
        if self._stream is not None:
            self._stream.cancel()
