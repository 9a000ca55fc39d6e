"""A small synchronous client for tabletop.v1.Gateway, used by the CLI and bots."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import grpc

from services.adapters.game_adapter import action_to_game_action, messages_for
from services.adapters.protoconv import read
from tabletop.v1 import board_pb2, gateway_pb2, gateway_pb2_grpc, match_pb2


def reason_of(error: grpc.RpcError) -> str:
    """The player-readable message of a refusal, with its reason code when there is one."""
    code = error.code().name if hasattr(error, "code") else "ERROR"
    details = error.details() if hasattr(error, "details") else str(error)
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    reason = dict(trailing or ()).get("tabletop-reason", "")
    return f"{details} [{reason or code}]"


class GatewayClient:
    def __init__(self, address: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.stub = gateway_pb2_grpc.GatewayStub(self.channel)

    def close(self) -> None:
        self.channel.close()

    def create(self, game: str, players: list[str], options: dict[str, str]) -> str:
        reply = self.stub.CreateMatch(
            board_pb2.CreateMatchRequest(
                game=game, players=players, options=options, command_id=str(uuid.uuid4())
            )
        )
        return str(reply.match_id)

    def legal(self, match_id: str, player: str) -> board_pb2.GetLegalActionsReply:
        reply: board_pb2.GetLegalActionsReply = self.stub.GetLegalActions(
            board_pb2.GetLegalActionsRequest(match_id=match_id, player=player)
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
        reply: board_pb2.SubmitActionReply = self.stub.SubmitAction(request)
        return reply

    def view(
        self, match_id: str, viewer: str = "", min_version: int = 0, wait_ms: int = 10_000
    ) -> match_pb2.MatchView:
        view: match_pb2.MatchView = self.stub.GetView(
            gateway_pb2.GetViewRequest(
                match_id=match_id, viewer=viewer, min_version=min_version, wait_ms=wait_ms
            )
        )
        return view


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


def game_action(game: str, action: Any) -> Any:
    return action_to_game_action(game, action)


def render_view(view: match_pb2.MatchView) -> str:
    """Draw a view with its game's text renderer (``Game.render``)."""
    game = messages_for(view.game).game
    return game.render(read(game.view_type, getattr(view.game_view, view.game)))
