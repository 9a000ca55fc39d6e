"""tabletop.v1.Board: decides commands with the engine, resolves chance, appends events.

One command's events (the action's, the chance outcomes', and the end) are appended in
one Kafka transaction, and only then folded into the in-memory state: a refused or failed
command leaves nothing behind.
"""

from __future__ import annotations

import uuid
from typing import Any

import grpc
import structlog
from aiokafka.errors import KafkaError
from google.protobuf import message

from services.board.chance import RemoteChance
from services.board.matches import Match, Matches
from services.common.envelope import Cause
from services.common.game_adapter import (
    action_from_game_action,
    action_to_game_action,
    messages_for,
    next_step_message,
)
from services.common.ledger import StreamWriter
from services.common.logging import get_logger
from services.common.metrics import ACTIONS, MATCHES_ACTIVE, MATCHES_CREATED, MATCHES_FINISHED
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    Finished,
    Game,
    MalformedAction,
    RuleViolation,
)
from services.games.registry import all_games
from tabletop.v1 import board_pb2, board_pb2_grpc, match_pb2, platform_events_pb2

log = get_logger(__name__)

SEAT_REJOINED = "this seat was joined again elsewhere; join again to play it here"
#: a command resolving more chance nodes than this is a bug in an engine
MAX_CHANCE_NODES = 10_000


class Refused(Exception):
    def __init__(self, code: grpc.StatusCode, message: str, reason: str = "") -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason


class BoardService(board_pb2_grpc.BoardServicer):
    def __init__(self, writer: StreamWriter, chance: RemoteChance) -> None:
        self._writer = writer
        self._chance = chance
        self.matches = Matches()

    # -- recovery -------------------------------------------------------------------------
    def apply(self, envelope: Any) -> None:
        self.matches.apply(envelope)

    def refresh_gauges(self) -> None:
        """Set the active-match gauges from scratch (after recovery)."""
        active: dict[str, int] = {name: 0 for name in all_games()}
        for match in self.matches:
            if not match.finished:
                active[match.game.name] = active.get(match.game.name, 0) + 1
        for name, count in active.items():
            MATCHES_ACTIVE.labels(name).set(count)

    # -- the command loop -----------------------------------------------------------------
    async def _play_out_chance(
        self, match_id: str, game: Game[Any], state: Any, command_id: str
    ) -> tuple[list[Any], Any]:
        """Resolve chance nodes until a player must act or the match ends."""
        events: list[Any] = []
        for index in range(MAX_CHANCE_NODES):
            step = game.next_step(state)
            if not isinstance(step, AwaitingChance):
                return events, state
            try:
                outcome = await self._chance.resolve(
                    match_id, step.request, f"{command_id}:{index}", command_id
                )
            except grpc.aio.AioRpcError as error:
                raise Refused(
                    grpc.StatusCode.UNAVAILABLE,
                    f"the {type(step.request).__name__} could not be resolved "
                    f"({error.code().name}); retry with the same command id",
                    "CHANCE_UNAVAILABLE",
                ) from error
            for event in game.resolve(state, outcome):
                state = game.evolve(state, event)
                events.append(event)
        raise RuntimeError(f"{game.name}: more than {MAX_CHANCE_NODES} chance nodes in a row")

    async def _append(
        self,
        match_id: str,
        game: Game[Any],
        payloads: list[message.Message],
        command_id: str,
        actor: str,
    ) -> list[Any]:
        cause = Cause(causation_id=command_id, correlation_id=command_id, actor=actor)
        try:
            return await self._writer.append(
                match_id, payloads, cause, game.name, game.rules_version
            )
        except KafkaError as error:
            # Nothing was folded; the transaction holding these events did not commit.
            raise Refused(
                grpc.StatusCode.UNAVAILABLE,
                f"the event log is unavailable ({type(error).__name__}); "
                "retry with the same command id",
                "LOG_UNAVAILABLE",
            ) from error

    async def _after_commit(
        self, match: Match, appended: int, command_id: str
    ) -> board_pb2.SubmitActionReply:
        if match.finished:
            MATCHES_FINISHED.labels(match.game.name, _result_label(match.results)).inc()
            MATCHES_ACTIVE.labels(match.game.name).dec()
            try:
                await self._chance.reveal(match.match_id, command_id)
            except grpc.aio.AioRpcError as error:
                # The match is over either way; the seeds stay secret until revealed.
                log.error("seed_reveal_failed", code=error.code().name)
        return board_pb2.SubmitActionReply(
            version=match.version,
            events_appended=appended,
            duplicate=False,
            finished=match.finished,
        )

    def _ending(self, game: Game[Any], state: Any) -> list[message.Message]:
        step = game.next_step(state)
        if not isinstance(step, Finished):
            return []
        return [
            platform_events_pb2.MatchEnded(
                results=step.outcome.results,
                reason=step.outcome.reason,
                scores=step.outcome.scores,
            )
        ]

    # -- RPCs -----------------------------------------------------------------------------
    async def CreateMatch(
        self, request: board_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.CreateMatchReply:
        match_id = request.match_id or str(uuid.uuid4())
        command_id = request.command_id or f"create:{match_id}"
        structlog.contextvars.bind_contextvars(match_id=match_id, command_id=command_id)
        try:
            games = all_games()
            if request.game not in games:
                raise Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"unknown game {request.game!r}; choose one of {', '.join(sorted(games))}",
                    "UNKNOWN_GAME",
                )
            if not self._writer.owns(match_id):
                raise Refused(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "this board shard does not own the match id",
                    "WRONG_SHARD",
                )
            async with self._writer.lock(match_id):
                existing = self.matches.get(match_id)
                if existing is not None:
                    if command_id in existing.replies:  # a retried create: the first answer
                        first = existing.replies[command_id].version
                        return board_pb2.CreateMatchReply(match_id=match_id, version=first)
                    raise Refused(
                        grpc.StatusCode.ALREADY_EXISTS, f"match {match_id} exists", "MATCH_EXISTS"
                    )
                game = games[request.game]
                players = tuple(request.players)
                try:
                    setup = game.setup(players, dict(request.options))
                except RuleViolation as refused:
                    raise Refused(
                        grpc.StatusCode.INVALID_ARGUMENT, refused.message, refused.code
                    ) from refused
                try:
                    commitments = await self._chance.commit(match_id, command_id)
                except grpc.aio.AioRpcError as error:
                    raise Refused(
                        grpc.StatusCode.UNAVAILABLE,
                        f"dice or decks are unavailable ({error.code().name}); "
                        "retry with the same command id",
                        "CHANCE_UNAVAILABLE",
                    ) from error
                dice_commitment, decks_commitment = commitments
                created = platform_events_pb2.MatchCreated(
                    game=game.name,
                    players=players,
                    options=dict(request.options),
                    dice_commitment=dice_commitment,
                    decks_commitment=decks_commitment,
                    lobby=request.lobby,
                )
                state = game.fold(setup)
                chance_events, state = await self._play_out_chance(
                    match_id, game, state, command_id
                )
                messages = messages_for(game.name)
                payloads: list[message.Message] = [
                    created,
                    *(messages.event_to_any(e) for e in [*setup, *chance_events]),
                    *self._ending(game, state),
                ]
                envelopes = await self._append(match_id, game, payloads, command_id, "board")
                match = self.matches.add(envelopes)
                MATCHES_ACTIVE.labels(game.name).inc()
                await self._after_commit(match, len(envelopes), command_id)
                MATCHES_CREATED.labels(game.name).inc()
                log.info("match_created", game=game.name, players=len(players))
                return board_pb2.CreateMatchReply(match_id=match_id, version=match.version)
        except Refused as refused:
            await _abort(context, refused)
            raise AssertionError from refused
        finally:
            structlog.contextvars.unbind_contextvars("match_id", "command_id")

    async def SubmitAction(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.SubmitActionReply:
        structlog.contextvars.bind_contextvars(
            match_id=request.match_id, command_id=request.command_id
        )
        game_name = "unknown"
        try:
            if not request.command_id:
                raise Refused(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "command_id is required (it makes retries safe)",
                    "MISSING_COMMAND_ID",
                )
            match = self.matches.get(request.match_id)
            if match is None:
                raise Refused(grpc.StatusCode.NOT_FOUND, "no such match", "NO_SUCH_MATCH")
            game_name = match.game.name
            async with self._writer.lock(request.match_id):
                if request.command_id in match.replies:
                    ACTIONS.labels(game_name, "duplicate").inc()
                    return match.replies[request.command_id]
                reply = await self._decide(match, request)
                ACTIONS.labels(game_name, "accepted").inc()
                if request.return_legal_actions:
                    reply.legal_actions.CopyFrom(_legal_actions(match, request.player))
                return reply
        except Refused as refused:
            ACTIONS.labels(game_name, "refused").inc()
            log.info("action_refused", reason=refused.reason, detail=refused.message)
            await _abort(context, refused)
            raise AssertionError from refused
        finally:
            structlog.contextvars.unbind_contextvars("match_id", "command_id")

    async def _decide(
        self, match: Match, request: board_pb2.SubmitActionRequest
    ) -> board_pb2.SubmitActionReply:
        if request.HasField("expected_version") and request.expected_version != match.version:
            raise Refused(
                grpc.StatusCode.ABORTED,
                f"the match moved on: you decided on version {request.expected_version}, "
                f"it is now at version {match.version}",
                "STALE_VERSION",
            )
        if match.finished:
            raise Refused(grpc.StatusCode.FAILED_PRECONDITION, "the match is over", "MATCH_OVER")
        if request.player not in match.players:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                f"{request.player or 'nobody'} does not play in this match",
                "NOT_A_PLAYER",
            )
        if match.superseded(request.player, request.seat_token):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, SEAT_REJOINED, "SEAT_REJOINED")
        try:
            action = action_from_game_action(match.game.name, request.action)
        except (ValueError, TypeError) as bad:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(bad), "MALFORMED_ACTION") from bad
        try:
            events = match.game.decide(match.state, request.player, action)
        except MalformedAction as refused:
            raise Refused(
                grpc.StatusCode.INVALID_ARGUMENT, refused.message, refused.code
            ) from refused
        except RuleViolation as refused:
            raise Refused(
                grpc.StatusCode.FAILED_PRECONDITION, refused.message, refused.code
            ) from refused
        state = match.game.fold(events, match.state)
        chance_events, state = await self._play_out_chance(
            match.match_id, match.game, state, request.command_id
        )
        decided = [*events, *chance_events]
        payloads: list[message.Message] = [
            *(match.messages.event_to_any(e) for e in decided),
            *self._ending(match.game, state),
        ]
        envelopes = await self._append(
            match.match_id, match.game, payloads, request.command_id, request.player
        )
        for index, envelope in enumerate(envelopes):
            match.fold(envelope, decided[index] if index < len(decided) else None)
        return await self._after_commit(match, len(envelopes), request.command_id)

    async def GetLegalActions(
        self, request: board_pb2.GetLegalActionsRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.GetLegalActionsReply:
        match = self.matches.get(request.match_id)
        if match is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match")
            raise AssertionError
        if match.superseded(request.player, request.seat_token):
            await context.abort(grpc.StatusCode.PERMISSION_DENIED, SEAT_REJOINED)
        return _legal_actions(match, request.player)


def _legal_actions(match: Match, player: str) -> board_pb2.GetLegalActionsReply:
    step = match.game.next_step(match.state)
    actions: list[match_pb2.LegalAction] = []
    if isinstance(step, AwaitingPlayers) and player in step.players:
        actions = [
            match_pb2.LegalAction(
                action=action_to_game_action(match.game.name, action),
                label=match.game.describe_action(action),
            )
            for action in match.game.legal_actions(match.state, player)
        ]
    return board_pb2.GetLegalActionsReply(
        version=match.version, actions=actions, next=next_step_message(step)
    )


def _result_label(results: dict[str, str]) -> str:
    values = set(results.values())
    if "won" in values:
        return "won"
    return "draw" if values == {"draw"} else "lost"


async def _abort(context: grpc.aio.ServicerContext, refused: Refused) -> None:
    if refused.reason:
        context.set_trailing_metadata((("tabletop-reason", refused.reason),))
    await context.abort(refused.code, refused.message)
