"""A small synchronous client for tabletop.v1.Gateway, used by the CLI and bots.

Every call is signed as a player (services/cli/session.py: the first call signs up, the
session is refreshed as it expires), so the player's matches and seats are its own from
any terminal with the same credential. It also keeps the tokens the gateway hands out
(creator, seat, spectator) and sends the right one with each call about a match as
``authorization: Bearer …`` metadata; a ``TokenStore`` keeps them across runs.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import grpc

from services.adapters.game_adapter import action_to_game_action, messages_for
from services.adapters.protoconv import read
from services.cli.session import Credential, signed_in
from tabletop.v1 import board_pb2, gateway_pb2, gateway_pb2_grpc, match_pb2


def reason_of(error: grpc.RpcError) -> str:
    """The player-readable message of a refusal, with its reason code when there is one."""
    code = error.code().name if hasattr(error, "code") else "ERROR"
    details = error.details() if hasattr(error, "details") else str(error)
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    reason = dict(trailing or ()).get("tabletop-reason", "")
    return f"{details} [{reason or code}]"


#: the role names a token store uses besides seat names
CREATOR = "@creator"
SPECTATOR = "@spectator"
#: a stream ended so is opened again (the gateway went away, or is starting)
RESUMABLE = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.INTERNAL,
)


class TokenStore:
    """Tokens by (gateway, match, seat) in a JSON file readable by its owner only."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._tokens: dict[str, str] = {}
        if path is not None and path.exists():
            self._tokens = json.loads(path.read_text())

    @classmethod
    def default(cls) -> TokenStore:
        state = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
        return cls(
            Path(os.environ.get("TABLETOP_TOKENS", Path(state) / "tabletop" / "tokens.json"))
        )

    def get(self, gateway: str, match_id: str, seat: str) -> str | None:
        return self._tokens.get(f"{gateway}/{match_id}/{seat}")

    def seats(self, gateway: str, match_id: str) -> list[str]:
        """The seats of the match we hold a token for (not the creator's or spectator's)."""
        kept = f"{gateway}/{match_id}/"
        return [
            key[len(kept) :]
            for key in self._tokens
            if key.startswith(kept) and not key[len(kept) :].startswith("@")
        ]

    def put(self, gateway: str, match_id: str, seat: str, token: str) -> None:
        self._tokens[f"{gateway}/{match_id}/{seat}"] = token
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(self._tokens, out)


def client_credentials(ca_file: str | None) -> grpc.ChannelCredentials:
    """TLS to the gateway: the system's roots, or the given CA certificate (PEM)."""
    return grpc.ssl_channel_credentials(Path(ca_file).read_bytes() if ca_file else None)


T = TypeVar("T")

#: how long a lobby call may wait out the gateway's quota (its retry-after-ms) in all
PATIENCE_S = 30.0


#: the first wait before asking again after UNAVAILABLE (doubled each time, at most 2 s)
UNAVAILABLE_FIRST_WAIT_S = 0.2


def patiently(call: Callable[[], T], patience_s: float = PATIENCE_S) -> T:
    """``call()``, asking again (the same request: a create keeps its command id) while
    that fits in ``patience_s``: after a RESOURCE_EXHAUSTED's retry-after-ms, and after an
    UNAVAILABLE (a service behind the gateway restarting) with a growing pause."""
    deadline = time.monotonic() + patience_s
    pause = UNAVAILABLE_FIRST_WAIT_S
    while True:
        try:
            return call()
        except grpc.RpcError as error:
            code = error.code()
            if code == grpc.StatusCode.UNAVAILABLE:
                wait, pause = pause, min(2 * pause, 2.0)
            elif code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                trailing = dict(error.trailing_metadata() or ())
                wait = int(str(trailing.get("retry-after-ms", "1000"))) / 1000
            else:
                raise
            if time.monotonic() + wait > deadline:
                raise
            time.sleep(wait)


class GatewayClient:
    def __init__(
        self,
        address: str,
        tls: bool = False,
        ca_file: str | None = None,
        store: TokenStore | None = None,
        patience_s: float = PATIENCE_S,
        credential: Credential | None = None,
    ) -> None:
        self.address = address
        #: how long create and join wait out the gateway's quota or admission control
        self.patience_s = patience_s
        raw = (
            grpc.secure_channel(address, client_credentials(ca_file))
            if tls or ca_file
            else grpc.insecure_channel(address)
        )
        #: the player this client is (a new one, for this process only, when none is given)
        self.credential = credential if credential is not None else Credential()
        #: the channel as it is, its calls signed by no one (unless given a token)
        self.bare_channel = raw
        self.bare = gateway_pb2_grpc.GatewayStub(raw)
        self.channel = signed_in(raw, address, self.credential)
        self.stub = gateway_pb2_grpc.GatewayStub(self.channel)
        self.tokens = store if store is not None else TokenStore(None)

    def close(self) -> None:
        self.channel.close()
        self.bare_channel.close()

    @property
    def player_id(self) -> str:
        """The player this client signs its calls as (signing in if it has not yet)."""
        self.credential.access_token(self.bare_channel, self.address)
        return str(self.credential.sessions[self.address].player_id)

    def my_matches(self, status: int = 0) -> list[match_pb2.MatchSummary]:
        """The player's matches (created or seated in), each with the seats it holds."""
        found: list[match_pb2.MatchSummary] = []
        page = ""
        while True:
            reply = self.stub.ListMatches(
                gateway_pb2.ListMatchesRequest(mine=True, status=status, page_token=page)  # type: ignore[arg-type]
            )
            found.extend(reply.matches)
            page = reply.next_page_token
            if not page:
                return found

    # -- tokens ---------------------------------------------------------------------------
    def token(self, match_id: str, seat: str) -> str | None:
        return self.tokens.get(self.address, match_id, seat)

    def auth(self, match_id: str, seat: str = "") -> tuple[tuple[str, str], ...]:
        """The metadata for a call about ``seat`` ("": any token of the match we hold)."""
        for key in [seat] if seat else [SPECTATOR, CREATOR]:
            token = self.token(match_id, key)
            if token:
                return (("authorization", f"Bearer {token}"),)
        return ()

    # -- lobby ----------------------------------------------------------------------------
    def create(
        self,
        game: str,
        players: list[str],
        options: dict[str, str],
        private: bool = False,
        bots: list[str] | None = None,
        seat: str = "",
        name: str = "",
        bot_levels: dict[str, str] | None = None,
    ) -> str:
        """A new match; with ``seat``, the creator sits there at once (its token kept)."""
        request = gateway_pb2.OpenMatchRequest(
            game=game,
            players=players,
            options=options,
            command_id=str(uuid.uuid4()),
            private=private,
            bots=bots or [],
            bot_levels=bot_levels or {},
            seat=seat,
            display_name=name,
        )
        reply = patiently(lambda: self.stub.CreateMatch(request), self.patience_s)
        self.tokens.put(self.address, reply.match_id, CREATOR, reply.creator_token)
        if seat:
            self.tokens.put(self.address, reply.match_id, seat, reply.seat_token)
        return str(reply.match_id)

    def join(
        self, match_id: str, seat: str = "", name: str = "", spectate: bool = False
    ) -> gateway_pb2.JoinMatchReply:
        """A seat (or spectator) token, kept for later calls. The player's session joins (a
        free seat, or a seat it holds, again: from another terminal too); a seat token we
        hold already re-joins its seat."""
        held = self.token(match_id, seat) if seat else None
        metadata = (("authorization", f"Bearer {held}"),) if held else ()
        request = gateway_pb2.JoinMatchRequest(
            match_id=match_id, seat=seat, display_name=name, spectate=spectate
        )
        reply: gateway_pb2.JoinMatchReply = patiently(
            lambda: self.stub.JoinMatch(request, metadata=metadata), self.patience_s
        )
        self.tokens.put(self.address, match_id, reply.seat or SPECTATOR, reply.token)
        return reply

    def leave(self, match_id: str, seat: str) -> gateway_pb2.LeaveSeatReply:
        """Give a seat up: with its token when we hold one, else as the player holding it."""
        reply: gateway_pb2.LeaveSeatReply = self.stub.LeaveSeat(
            gateway_pb2.LeaveSeatRequest(match_id=match_id, seat=seat),
            metadata=self.auth(match_id, seat) if self.token(match_id, seat) else (),
        )
        return reply

    def undo(self, match_id: str, seat: str) -> gateway_pb2.UndoActionReply:
        """Take back the seat's last command (with its token, kept from its join)."""
        reply: gateway_pb2.UndoActionReply = self.stub.UndoAction(
            gateway_pb2.UndoActionRequest(match_id=match_id, player=seat),
            metadata=self.auth(match_id, seat),
        )
        return reply

    def hand_over(
        self, match_id: str, seat: str, bot_level: str = ""
    ) -> gateway_pb2.HandOverSeatReply:
        """Give a seat its holder left to a bot at ``bot_level``, or (none) open it."""
        request = gateway_pb2.HandOverSeatRequest(match_id=match_id, seat=seat)
        if bot_level:
            request.bot_level = bot_level
        else:
            request.open = True
        reply: gateway_pb2.HandOverSeatReply = self.stub.HandOverSeat(request)
        return reply

    def join_all(self, match_id: str, seats: list[str]) -> None:
        """Take every seat of a match we created (hot seat, bots)."""
        for seat in seats:
            self.join(match_id, seat, seat)

    def legal(self, match_id: str, player: str) -> board_pb2.GetLegalActionsReply:
        """The seat's legal actions (a read: asked again while a board restarts)."""
        request = board_pb2.GetLegalActionsRequest(match_id=match_id, player=player)
        reply: board_pb2.GetLegalActionsReply = patiently(
            lambda: self.stub.GetLegalActions(request, metadata=self.auth(match_id, player)),
            self.patience_s,
        )
        return reply

    def submit(
        self,
        match_id: str,
        player: str,
        action: Any,
        expected_version: int | None = None,
        command_id: str | None = None,
        return_legal_actions: bool = False,
    ) -> board_pb2.SubmitActionReply:
        request = board_pb2.SubmitActionRequest(
            match_id=match_id,
            player=player,
            action=action,
            command_id=command_id or str(uuid.uuid4()),
            return_legal_actions=return_legal_actions,
        )
        if expected_version is not None:
            request.expected_version = expected_version
        reply: board_pb2.SubmitActionReply = self.stub.SubmitAction(
            request, metadata=self.auth(match_id, player)
        )
        return reply

    def view(
        self, match_id: str, viewer: str = "", min_version: int = 0, wait_ms: int = 10_000
    ) -> match_pb2.MatchView:
        view: match_pb2.MatchView = self.stub.GetView(
            gateway_pb2.GetViewRequest(
                match_id=match_id, viewer=viewer, min_version=min_version, wait_ms=wait_ms
            ),
            metadata=self.auth(match_id, viewer),
        )
        return view

    def follow(
        self,
        match_id: str,
        viewer: str = "",
        stop: Callable[[], bool] = lambda: False,
        max_pause_s: float = 10.0,
    ) -> Iterator[match_pb2.MatchView]:
        """The match's views as they come (WatchMatch) until it is over; a stream cut short
        (a gateway restarted, the network dropped) is opened again after a growing pause,
        resumed after the newest version seen: no view twice. Refusals end it (raised)."""
        seen, pause = 0, 0.5
        while not stop():
            request = gateway_pb2.WatchMatchRequest(
                match_id=match_id, viewer=viewer, after_version=seen
            )
            try:
                for view in self.stub.WatchMatch(request, metadata=self.auth(match_id, viewer)):
                    seen, pause = view.version, 0.5
                    yield view
                return  # the match is over: the stream ended it
            except grpc.RpcError as error:
                # NOT_FOUND of a match seen before: a restarted gateway is reading it back
                catching_up = seen and error.code() == grpc.StatusCode.NOT_FOUND
                if error.code() not in RESUMABLE and not catching_up:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, max_pause_s)

    # -- table talk -----------------------------------------------------------------------
    def talk(
        self, match_id: str, text: str, seat: str = "", name: str = ""
    ) -> gateway_pb2.PostTalkReply:
        """Post to the match's talk as ``seat`` ("": as its spectator token)."""
        metadata = self.auth(match_id, seat) if seat else self._spectator(match_id)
        reply: gateway_pb2.PostTalkReply = self.stub.PostTalk(
            gateway_pb2.PostTalkRequest(match_id=match_id, text=text, display_name=name),
            metadata=metadata,
        )
        return reply

    def watch_talk(self, match_id: str, seat: str = "", after: int = 0) -> Any:
        """The match's talk as ``seat`` may read it (a gRPC stream: iterate it, cancel it)."""
        return self.stub.WatchTalk(
            gateway_pb2.WatchTalkRequest(match_id=match_id, after_sequence=after),
            metadata=self.auth(match_id, seat),
        )

    def _spectator(self, match_id: str) -> tuple[tuple[str, str], ...]:
        token = self.token(match_id, SPECTATOR)
        return (("authorization", f"Bearer {token}"),) if token else ()


def play_on(
    client: GatewayClient,
    match_id: str,
    first_player: str,
    choose: Callable[[str, board_pb2.GetLegalActionsReply], Any | None],
    on_refused: Callable[[grpc.RpcError], None] | None = None,
    max_actions: int = 100_000,
) -> tuple[int, board_pb2.GetLegalActionsReply]:
    """The client side of a match: ask ``choose(mover, legal)`` for an action (None: stop)
    until the match ends. Each submit brings the mover's next legal actions back with it,
    so a player who keeps the turn costs one round trip per action."""
    legal, holder, actions = client.legal(match_id, first_player), first_player, 0
    while not legal.next.finished and actions < max_actions:
        mover = legal.next.players[0]
        if holder != mover:
            legal, holder = client.legal(match_id, mover), mover
            continue
        choice = choose(mover, legal)
        if choice is None:
            break
        try:
            reply = client.submit(
                match_id, mover, choice.action, legal.version, return_legal_actions=True
            )
            legal = reply.legal_actions
            actions += 1
        except grpc.RpcError as error:
            if on_refused is None:
                raise
            on_refused(error)  # e.g. tell the player why, then offer the choices again
            legal = client.legal(match_id, mover)
    return actions, legal


def play_seats(
    client: GatewayClient,
    match_id: str,
    seats: list[str],
    choose: Callable[[str, board_pb2.GetLegalActionsReply], Any | None],
    on_refused: Callable[[grpc.RpcError], None] | None = None,
    wait_ms: int = 30_000,
) -> tuple[int, board_pb2.GetLegalActionsReply | None]:
    """Play the seats we hold while others play theirs from elsewhere: act when one of
    ours must, else wait for the match to move on. Returns how many actions we took and
    the last legal-actions reply (finished), or None when ``choose`` gave up (we left)."""
    holder, actions = seats[0], 0
    legal = client.legal(match_id, holder)
    while not legal.next.finished:
        ours = [s for s in legal.next.players if s in seats]
        if not ours:
            try:
                client.view(match_id, holder, min_version=legal.version + 1, wait_ms=wait_ms)
            except grpc.RpcError as error:
                if error.code() != grpc.StatusCode.DEADLINE_EXCEEDED:
                    raise
            legal = client.legal(match_id, holder)
            continue
        if holder != ours[0]:
            holder = ours[0]
            legal = client.legal(match_id, holder)
            continue
        choice = choose(holder, legal)
        if choice is None:
            return actions, None
        try:
            reply = client.submit(
                match_id, holder, choice.action, legal.version, return_legal_actions=True
            )
            legal = reply.legal_actions
            actions += 1
        except grpc.RpcError as error:
            if on_refused is None:
                raise
            on_refused(error)  # e.g. someone else acted first: look again
            legal = client.legal(match_id, holder)
    return actions, legal


def game_action(game: str, action: Any) -> Any:
    return action_to_game_action(game, action)


def render_view(view: match_pb2.MatchView) -> str:
    """Draw a view with its game's text renderer (``Game.render``), and its clocks."""
    game = messages_for(view.game).game
    drawn = game.render(read(game.view_type, getattr(view.game_view, view.game)))
    shown = clock_line(view)
    return f"{drawn}\n{shown}" if shown else drawn


def _duration(ms: int) -> str:
    seconds = max(0, ms) // 1000
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return f"{days}d{hours:02d}h"
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}:{seconds:02d}"


def clock_data(view: match_pb2.MatchView, now_ms: int | None = None) -> dict[str, Any] | None:
    """The view's clocks for --json: each seat's time left now, running or not."""
    if not view.HasField("clock"):
        return None
    now = int(time.time() * 1000) if now_ms is None else now_ms
    return {
        "control": view.clock.control,
        "on_timeout": view.clock.on_timeout,
        "seats": {
            s.seat: {
                "remaining_ms": max(0, s.deadline_ms - now) if s.deadline_ms else s.remaining_ms,
                "running": bool(s.deadline_ms),
                "deadline_ms": s.deadline_ms,
                "timeouts": s.timeouts,
            }
            for s in view.clock.seats
        },
    }


def clock_line(view: match_pb2.MatchView, now_ms: int | None = None) -> str:
    """``clock live:10m+5s (forfeit)  ann ▶ 9:41  bob 10:00``: time left, ▶ running."""
    data = clock_data(view, now_ms)
    if data is None:
        return ""
    seats = "  ".join(
        f"{seat} {'▶ ' if shown['running'] else ''}{_duration(shown['remaining_ms'])}"
        + (f" ({shown['timeouts']} timeouts)" if shown["timeouts"] else "")
        for seat, shown in data["seats"].items()
    )
    return f"clock {data['control']} ({data['on_timeout']})  {seats}"
