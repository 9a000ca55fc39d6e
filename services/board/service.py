"""tabletop.v1.Board: the gRPC face of the command handler (services.games.commands).

The handler decides, resolves chance through the dice and decks services and appends one
command's events (the action's, the chance outcomes', and the end) in one Kafka
transaction; only then does the match take its new state, so a refused or failed command
leaves nothing behind. This module maps requests to commands and refusals to status codes.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import heapq
import json
import random
import time
import uuid
from collections.abc import Callable
from typing import Any

import grpc
import structlog
from google.protobuf import message

from services.adapters.folding import commanded
from services.adapters.game_adapter import (
    action_from_game_action,
    action_to_game_action,
    legal_action_messages,
    next_step_message,
)
from services.adapters.views import encode_state, update_bytes
from services.board.chance import ChanceFailed, RemoteChance
from services.board.matches import Matches, fold
from services.board.reveals import RevealOutbox
from services.board.store import BoardEventStore
from services.board.undo import can_take_back, takeback
from services.common.envelope import is_a
from services.common.eventlog import MAX_RECORD_BYTES, LogUnavailable
from services.common.holding import Holding, evict_forever
from services.common.ledger import StreamWriter
from services.common.logging import get_logger
from services.common.metrics import (
    ACTIONS,
    BOARD_MATCHES_EVICTED,
    BOARD_TIMEOUTS,
    COMMAND_SECONDS,
    MATCHES_ACTIVE,
    MATCHES_CREATED,
    MATCHES_FINISHED,
)
from services.common.snapshots import Snapshot, batches
from services.games import clock
from services.games.commands import (
    Command,
    CommandHandler,
    Opening,
    Refusal,
    RefusalKind,
    require_command_id,
)
from services.games.contract import AwaitingPlayers, Game, concrete, random_view_policy
from services.games.match import TAKEN_BACK, Accepted, Match
from services.games.registry import all_games
from tabletop.v1 import (
    board_pb2,
    board_pb2_grpc,
    envelope_pb2,
    games_pb2,
    match_pb2,
    platform_events_pb2,
    snapshot_pb2,
)

log = get_logger(__name__)

#: the longest the clock task sleeps without looking (deadlines come from other tasks too)
CLOCK_NAP_S = 60.0
#: after a timeout that could not be recorded (the log unavailable): the next try
CLOCK_RETRY_S = 1.0
SEAT_REJOINED = "this seat was joined again elsewhere; join again to play it here"
SEAT_GIVEN_UP = "this seat was given up; its tokens no longer act for it"


def _decode(game: Game[Any], action: games_pb2.GameAction) -> Any:
    return action_from_game_action(game.name, action)


class BoardService(board_pb2_grpc.BoardServicer):
    def __init__(
        self,
        writer: StreamWriter,
        chance: RemoteChance,
        idle_held_s: float = 0.0,
        now: Callable[[], float] = time.time,
    ) -> None:
        self.writer = writer
        #: wall-clock time, as the envelopes record it (the clocks' deadlines)
        self.now = now
        #: timed match → (its earliest deadline, the version that set it); kept apart from
        #: the matches held, so an evicted match's deadline still fires (it is reloaded)
        self._deadlines: dict[str, tuple[float, int]] = {}
        self._deadline_heap: list[tuple[float, str, int]] = []
        self._clock_moved = asyncio.Event()
        self._chance = chance
        self.store = BoardEventStore(writer)
        self._handler = CommandHandler(chance, self.store, _decode)
        #: a started match unused for ``idle_held_s`` leaves memory (0: never; ``evict_idle``)
        self.matches = Matches(Holding(idle_held_s))
        self.reveals = RevealOutbox(chance.reveal)
        #: while recovering: open match → its envelopes, folded only once the log is read
        self._unfolded: dict[str, list[envelope_pb2.EventEnvelope]] | None = None
        #: recovering from a snapshot: the matches that end after it (their reveals are
        #: made again, since whether they were made is not in the snapshot)
        self._ended: dict[str, str] | None = None

    # -- snapshots ------------------------------------------------------------------------
    def snapshot(self) -> list[message.Message]:
        """The reveal outbox and the clocks' deadlines (the writer's part holds the active
        matches' envelopes; an evicted match's deadline is only here)."""
        unconfirmed = sorted(self.reveals.unconfirmed().items())
        deadlines = sorted(self._deadlines.items())
        return [
            snapshot_pb2.PendingReveals(
                match_ids=[m for m, _ in unconfirmed[part]],
                correlation_ids=[c for _, c in unconfirmed[part]],
            )
            for part in batches(len(unconfirmed))
        ] + [
            snapshot_pb2.ClockDeadlines(
                match_ids=[m for m, _ in deadlines[part]],
                deadlines=[d for _, (d, _) in deadlines[part]],
                versions=[v for _, (_, v) in deadlines[part]],
            )
            for part in batches(len(deadlines))
        ]

    def restore(self, snapshot: Snapshot) -> None:
        self._ended = {}
        for pending in snapshot.of(snapshot_pb2.PendingReveals):
            for match_id, correlation_id in zip(
                pending.match_ids, pending.correlation_ids, strict=True
            ):
                self.reveals.add(match_id, correlation_id)
        for kept in snapshot.of(snapshot_pb2.ClockDeadlines):
            for match_id, deadline, version in zip(
                kept.match_ids, kept.deadlines, kept.versions, strict=True
            ):
                # (a held match's is set again from its clock at the end of recovery; a
                # stale one only makes ``expire`` reload the match and note its new one)
                self._note_deadline(match_id, deadline, int(version))

    # -- recovery -------------------------------------------------------------------------
    def begin_recovery(self) -> None:
        """Until ``end_recovery``, ``apply`` folds nothing: a match that ends further on in
        the log is never run through its engine, so a restart costs reading the history
        plus folding the active matches only."""
        self._unfolded = {}

    def end_recovery(self) -> None:
        unfolded, self._unfolded = self._unfolded or {}, None
        for envelopes in unfolded.values():
            for envelope in envelopes:
                self.apply(envelope)
        ended, self._ended = self._ended or {}, None
        for match_id, correlation_id in ended.items():
            self.reveals.add(match_id, correlation_id)
        for match in self.matches:
            self.schedule(match)

    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if self._unfolded is not None:
            if is_a(envelope, platform_events_pb2.MatchEnded):
                self._unfolded.pop(envelope.match_id, None)
                self._retire(envelope.match_id)
                if self._ended is not None:
                    self._ended[envelope.match_id] = envelope.correlation_id
            else:
                self._unfolded.setdefault(envelope.match_id, []).append(envelope)
            return
        self.matches.apply(envelope)
        match = self.matches.get(envelope.match_id)
        if match is not None and match.finished:
            self._retire(envelope.match_id)

    def _retire(self, match_id: str) -> None:
        """A finished match leaves memory: its events stay in the log, read back by
        ``find`` (a retried command, a late join, GetLegalActions) and by ListEvents."""
        self.writer.close(match_id)
        self.matches.retire(match_id)
        self._deadlines.pop(match_id, None)

    def evict_idle(self) -> int:
        """Started, unfinished matches unused for ``idle_held_s`` leave memory, their
        envelopes too, also from the writer's keep of recently closed matches (a
        turn-based match between turns, an abandoned one: its next read is ``find``'s, if
        any, which reloads it from the log at its next command). A match whose lock is
        taken (a command or a join under way) stays. Returns how many left."""
        evicted = 0
        for match_id in self.matches.idle():
            if self.writer.lock(match_id).locked():
                continue
            self.matches.evict(match_id)
            self.writer.close(match_id, remember=False)
            self._chance.forget(match_id)
            evicted += 1
        BOARD_MATCHES_EVICTED.inc(evicted)
        return evicted

    async def evict_forever(self) -> None:
        """``evict_idle`` every while, the freed heap given back after many evictions."""
        await evict_forever(self.matches.holding, self.evict_idle)

    async def find(self, match_id: str) -> Match | None:
        """The match: an active one from memory, an evicted or finished one reloaded from
        the log. A command calls it under the match's lock: a match reloaded before the
        lock was taken could miss the events of the command that held it."""
        match = self.matches.get(match_id)
        if match is not None or not self.writer.version(match_id):
            return match
        try:
            envelopes = await self.writer.read_events(match_id)
        except LogUnavailable as error:
            raise Refusal(
                RefusalKind.UNAVAILABLE,
                "LOG_UNAVAILABLE",
                f"the match could not be read back from the log ({error}); retry",
            ) from error
        match = self.matches.reload(envelopes)
        if not match.finished:  # (its reveal is pending, or made: nothing to recall)
            self._chance.recall(match_id, match.dice_commitment, match.decks_commitment)
        return match

    # -- clocks ---------------------------------------------------------------------------
    def schedule(self, match: Match) -> None:
        """Note the match's earliest deadline after its latest command (none: untimed,
        over, or waiting for nobody)."""
        earliest = match.clock.earliest() if match.clock and not match.finished else None
        if earliest is None:
            self._deadlines.pop(match.match_id, None)
            return
        self._note_deadline(match.match_id, earliest[0], match.version)

    def _note_deadline(self, match_id: str, deadline: float, version: int) -> None:
        if self._deadlines.get(match_id) == (deadline, version):
            return
        self._deadlines[match_id] = (deadline, version)
        heapq.heappush(self._deadline_heap, (deadline, match_id, version))
        if len(self._deadline_heap) > 2 * len(self._deadlines) + 64:  # superseded entries
            self._deadline_heap = [(d, m, v) for m, (d, v) in self._deadlines.items()]
            heapq.heapify(self._deadline_heap)
        if self._deadline_heap[0][1] == match_id:
            self._clock_moved.set()  # sooner than the clock task sleeps for

    def next_deadline(self) -> float | None:
        heap = self._deadline_heap
        while heap and self._deadlines.get(heap[0][1]) != (heap[0][0], heap[0][2]):
            heapq.heappop(heap)  # superseded by a later command, or the match ended
        return heap[0][0] if heap else None

    async def expire_due(self) -> tuple[int, int]:
        """Record every timeout whose deadline has passed: (recorded, failed)."""
        now = self.now()
        heap, due = self._deadline_heap, []
        while heap and heap[0][0] <= now:
            entry = heapq.heappop(heap)
            if self._deadlines.get(entry[1]) == (entry[0], entry[2]):  # (else superseded)
                due.append(entry)
        recorded = failed = 0
        for deadline, match_id, version in due:
            try:
                recorded += await self.expire(match_id, version, now)
            except Refusal as refused:  # the log unavailable: tried again shortly
                failed += 1
                log.warning("timeout_not_recorded", match_id=match_id, reason=refused.code)
                if self._deadlines.get(match_id) == (deadline, version):
                    heapq.heappush(heap, (deadline, match_id, version))
        return recorded, failed

    async def expire(self, match_id: str, version: int, now: float) -> int:
        """The timeout of a match last seen at ``version``, in the match's serialised
        section: a command that took the lock first wins (the match moved on: nothing is
        recorded, its new deadline is noted). Returns 1 when a timeout was recorded."""
        async with self.writer.lock(match_id):
            match = await self.find(match_id)  # (reloaded if it was evicted)
            if match is None or match.clock is None or match.finished:
                self._deadlines.pop(match_id, None)
                return 0
            earliest = match.clock.earliest()
            if match.version != version or earliest is None or earliest[0] > now:
                self.schedule(match)
                return 0
            deadline, seat = earliest
            await self._time_out(match, seat, deadline)
            self.schedule(match)
            return 1

    async def _time_out(self, match: Match, seat: str, deadline: float) -> None:
        """Record ``seat``'s timeout with the consequence its policy gives."""
        assert match.clock is not None
        policy = match.clock.control.on_timeout
        expired = platform_events_pb2.ClockExpired(
            seat=seat, policy=policy, deadline_ms=round(deadline * 1000)
        )
        command_id = f"timeout:{match.match_id}:{match.version}"
        move = _move_for(match, seat, policy) if policy != clock.FORFEIT else None
        if move is not None:
            command = Command(command_id, seat, move, match.version, preface=(expired,))
            try:
                accepted = await self._handler.submit(match, command)
            except Refusal as refused:
                if refused.kind is RefusalKind.UNAVAILABLE:
                    raise  # tried again shortly
                # the rules refused the move made for the seat (a bug of its bot): the
                # match must not wait forever, so the seat forfeits
                log.error("timeout_move_refused", match_id=match.match_id, reason=refused.code)
                move = None
            else:
                commanded(match, self.store.taken(match.match_id))
                if accepted.finished:
                    self.ended(match, command_id)
        if move is None:  # a forfeit (or a seat with no move to make for it)
            ended = platform_events_pb2.MatchEnded(
                results=clock.forfeit_results(match.game.name, match.players, seat),
                reason=f"{seat} ran out of time",
            )
            envelopes = await self.store.append_payloads(
                match.match_id, match.game, [expired, ended], command_id, "clock"
            )
            for envelope in envelopes:
                fold(match, envelope)
            self.ended(match, command_id)
        done = policy if move is not None else clock.FORFEIT
        BOARD_TIMEOUTS.labels(match.game.name, done).inc()
        log.info("clock_expired", match_id=match.match_id, seat=seat, policy=done)

    async def run_clocks(self) -> None:
        """Record timeouts as their deadlines pass, until cancelled."""
        while True:
            self._clock_moved.clear()
            nearest = self.next_deadline()
            wait = CLOCK_NAP_S if nearest is None else max(0.0, nearest - self.now())
            if wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._clock_moved.wait(), min(wait, CLOCK_NAP_S))
            try:
                _, failed = await self.expire_due()
            except Exception:  # one bad round stops nothing
                log.exception("clocks_failed")
                failed = 1
            if failed:
                await asyncio.sleep(CLOCK_RETRY_S)

    def refresh_gauges(self) -> None:
        """Set the active-match gauges from scratch (after recovery)."""
        active: dict[str, int] = {name: 0 for name in all_games()}
        for match in self.matches:
            if not match.finished:
                active[match.game.name] = active.get(match.game.name, 0) + 1
        for name, count in active.items():
            MATCHES_ACTIVE.labels(name).set(count)

    def ended(self, match: Match, command_id: str) -> None:
        """The match just ended (its last command ``command_id``): out of memory, counted,
        its seeds revealed."""
        self._retire(match.match_id)
        MATCHES_FINISHED.labels(match.game.name, _result_label(match.results)).inc()
        MATCHES_ACTIVE.labels(match.game.name).dec()
        # Revealed by the outbox, at once but after the last command is answered: its
        # player waited for two more transactions (dice's and decks') before seeing the
        # end (measured under load: the last actions' p50 65 ms against 42 for the
        # others). Export and verify wait for the reveals (services/gateway/service.py).
        self.reveals.add(match.match_id, command_id)

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
                raise Refusal(
                    RefusalKind.INVALID_ARGUMENT,
                    "UNKNOWN_GAME",
                    f"unknown game {request.game!r}; choose one of {', '.join(sorted(games))}",
                )
            if not self.writer.owns(match_id):
                raise Refusal(
                    RefusalKind.FAILED_PRECONDITION,
                    "WRONG_SHARD",
                    "this board shard does not own the match id",
                )
            async with self.writer.lock(match_id):
                existing = await self.find(match_id)
                if existing is not None:
                    if command_id in existing.replies:  # a retried create: the first answer
                        first = existing.replies[command_id].version
                        again = board_pb2.CreateMatchReply(match_id=match_id, version=first)
                        if request.HasField("seated"):  # (as they are now: their version says)
                            seat = request.seated.seat
                            again.legal_actions.CopyFrom(_legal_actions(existing, seat))
                        return again
                    raise Refusal(
                        RefusalKind.ALREADY_EXISTS, "MATCH_EXISTS", f"match {match_id} exists"
                    )
                game = games[request.game]
                control = _time_control(game.name, request.options)
                lobby, seated = _lobby(request, time.time())
                match = Match(
                    match_id=match_id,
                    game=game,
                    players=tuple(request.players),
                    options=dict(request.options),
                    state=game.initial_state(),
                    private=lobby.private,
                    bots=tuple(lobby.bots),
                    bot_levels=dict(lobby.bot_levels),
                    creator=lobby.creator,
                    open_s=lobby.open_s,
                    open_until=lobby.open_until,
                    clock=clock.Clock.start(control, request.players) if control else None,
                )

                async def commit_seeds() -> Opening:
                    match.dice_commitment, match.decks_commitment = await self._commit(
                        match_id, command_id, game.chance_services
                    )
                    return Opening(
                        game.name,
                        match.players,
                        match.options,
                        match.dice_commitment,
                        match.decks_commitment,
                        lobby=lobby,
                        seated=seated,
                    )

                try:
                    accepted = await self._handler.create(
                        match, clock.game_options(match.options), command_id, "board", commit_seeds
                    )
                except Refusal:
                    self._chance.forget(match_id)  # not created: no reveal will come for it
                    raise
                if seated is not None:
                    match.seat(seated.seat, seated.display_name, seated.join_id, seated.player_id)
                commanded(match, self.store.taken(match_id))
                self.matches.add(match)
                self.schedule(match)
                MATCHES_ACTIVE.labels(game.name).inc()
                if accepted.finished:
                    self.ended(match, command_id)
                MATCHES_CREATED.labels(game.name).inc()
                log.info("match_created", game=game.name, players=len(match.players))
                reply = board_pb2.CreateMatchReply(
                    match_id=match_id, version=match.version, view_update=view_update(match)
                )
                if seated is not None:
                    reply.legal_actions.CopyFrom(_legal_actions(match, seated.seat))
                return reply
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused
        finally:
            structlog.contextvars.unbind_contextvars("match_id", "command_id")

    async def _commit(
        self, match_id: str, command_id: str, services: frozenset[str]
    ) -> tuple[str, str]:
        try:
            return await self._chance.commit(match_id, command_id, services)
        except ChanceFailed as failed:
            raise failed.refusal() from failed

    async def SubmitCommand(
        self, request: board_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.AcknowledgedAction:
        """The command carried out (or refused, nothing appended), with the match's update
        at its version (the caller is a gateway, which shows it at once)."""
        try:
            reply, update = await self._submit(request)
            return board_pb2.AcknowledgedAction(reply=reply, view_update=update)
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused

    async def _submit(
        self, request: board_pb2.SubmitActionRequest
    ) -> tuple[board_pb2.SubmitActionReply, bytes]:
        """One command, carried out (or refused: Refusal, nothing appended), and the
        match's update at the new version (empty for a retry)."""
        structlog.contextvars.bind_contextvars(
            match_id=request.match_id, command_id=request.command_id
        )
        game_name = "unknown"
        began = time.perf_counter()
        try:
            require_command_id(request.command_id)
            command = Command(
                request.command_id,
                request.player,
                request.action,
                request.expected_version if request.HasField("expected_version") else None,
            )
            async with self.writer.lock(request.match_id):
                match = await self.find(request.match_id)
                if match is None:
                    raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_MATCH", "no such match")
                game_name = match.game.name
                if match.superseded(request.player, request.seat_token):
                    raise _superseded(match, request.player)
                accepted = await self._handler.submit(match, command)
                commanded(match, self.store.taken(match.match_id))
                self.schedule(match)
                if accepted.duplicate:
                    ACTIONS.labels(game_name, "duplicate").inc()
                    return _reply(accepted), b""
                update = view_update(match)
                if accepted.finished:
                    self.ended(match, request.command_id)
                ACTIONS.labels(game_name, "accepted").inc()
                reply = _reply(accepted)
                if request.return_legal_actions:
                    reply.legal_actions.CopyFrom(_legal_actions(match, request.player))
                return reply, update
        except Refusal as refused:
            ACTIONS.labels(game_name, "refused").inc()
            log.info("action_refused", reason=refused.code, detail=refused.message)
            raise
        finally:
            COMMAND_SECONDS.observe(time.perf_counter() - began)
            structlog.contextvars.unbind_contextvars("match_id", "command_id")

    async def GetLegalActions(
        self, request: board_pb2.GetLegalActionsRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.GetLegalActionsReply:
        try:
            match = await self.find(request.match_id)
        except Refusal as refused:
            await _abort(context, refused)
            raise AssertionError from refused
        if match is None:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such match")
            raise AssertionError
        if match.superseded(request.player, request.seat_token):
            await _abort(context, _superseded(match, request.player))
        reply = _legal_actions(match, request.player)
        try:
            reply.can_undo = await self._can_undo(match, request.player)
        except Refusal as refused:
            await _abort(context, refused)
        return reply

    async def _events(self, match: Match) -> list[envelope_pb2.EventEnvelope]:
        try:
            return await self.writer.read_events(match.match_id)
        except LogUnavailable as error:
            raise Refusal(
                RefusalKind.UNAVAILABLE,
                "LOG_UNAVAILABLE",
                f"the match's events could not be read back ({error}); retry",
            ) from error

    async def _can_undo(self, match: Match, seat: str) -> bool:
        """The seat could take back its last command now (cheap refusals first: only a
        seat whose own move is the last, or after an undo, reads the log and folds it)."""
        if match.finished or seat not in match.players:
            return False
        if match.last_mover not in (seat, TAKEN_BACK):
            return False
        return can_take_back(match, await self._events(match), seat)

    async def UndoCommand(
        self, request: board_pb2.BoardUndoRequest, context: grpc.aio.ServicerContext
    ) -> board_pb2.AcknowledgedAction:
        """The seat's last command taken back (ActionsUndone; services/board/undo.py), or
        refused with the reason, nothing appended."""
        structlog.contextvars.bind_contextvars(
            match_id=request.match_id, command_id=request.command_id
        )
        try:
            return await self._undo(request)
        except Refusal as refused:
            log.info("undo_refused", reason=refused.code)
            await _abort(context, refused)
            raise AssertionError from refused
        finally:
            structlog.contextvars.unbind_contextvars("match_id", "command_id")

    async def _undo(self, request: board_pb2.BoardUndoRequest) -> board_pb2.AcknowledgedAction:
        require_command_id(request.command_id)
        async with self.writer.lock(request.match_id):
            match = await self.find(request.match_id)
            if match is None:
                raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_MATCH", "no such match")
            if request.command_id in match.replies:  # a retry: the first answer
                first = match.replies[request.command_id]
                return board_pb2.AcknowledgedAction(
                    reply=board_pb2.SubmitActionReply(version=first.version, duplicate=True)
                )
            if match.superseded(request.player, request.seat_token):
                raise _superseded(match, request.player)
            taken = takeback(match, await self._events(match), request.player)
            undone = platform_events_pb2.ActionsUndone(
                seat=taken.seat,
                to_version=taken.to_version,
                from_version=taken.from_version,
                state=encode_state(taken.state),
                clock=json.dumps(taken.clock.facts()) if taken.clock is not None else "",
            )
            envelopes = await self.store.append_payloads(
                match.match_id, match.game, [undone], request.command_id, request.player
            )
            for envelope in envelopes:
                fold(match, envelope)
            self.schedule(match)
            ACTIONS.labels(match.game.name, "undone").inc()
            log.info("actions_undone", to_version=taken.to_version)
            return board_pb2.AcknowledgedAction(
                reply=board_pb2.SubmitActionReply(version=match.version, events_appended=1),
                view_update=view_update(match),
            )


def _superseded(match: Match, seat: str) -> Refusal:
    """The refusal of a seat token that is not the seat's newest."""
    if seat not in match.seat_tokens:  # its holder left it (SeatLeft)
        return Refusal(RefusalKind.PERMISSION_DENIED, "SEAT_GIVEN_UP", SEAT_GIVEN_UP)
    return Refusal(RefusalKind.PERMISSION_DENIED, "SEAT_REJOINED", SEAT_REJOINED)


def _legal_actions(match: Match, player: str) -> board_pb2.GetLegalActionsReply:
    step = match.game.next_step(match.state)
    actions: list[match_pb2.LegalAction] = []
    if isinstance(step, AwaitingPlayers) and player in step.players:
        actions = legal_action_messages(match.game, match.state, player)
    return board_pb2.GetLegalActionsReply(
        version=match.version, actions=actions, next=next_step_message(step)
    )


def _time_control(game: str, options: Any) -> clock.TimeControl | None:
    try:
        return clock.parse(game, options)
    except clock.BadTimeControl as bad:
        raise Refusal(RefusalKind.INVALID_ARGUMENT, "BAD_TIME_CONTROL", str(bad)) from bad


def _move_for(match: Match, seat: str, policy: str) -> games_pb2.GameAction | None:
    """The move a timeout makes for ``seat``: its pass where the rules have one and it is
    legal now, else the game's greedy bot's choice (seeded by the match and its version,
    and recorded as the seat's move, so a replay needs no bot). None: no legal move."""
    game, state = match.game, match.state
    legal = game.legal_actions(state, seat)
    if not legal:
        return None
    passing = clock.PASS_ACTIONS.get(game.name)
    if policy == clock.PASS and passing:
        for entry in legal:
            if type(entry).__name__ == passing:
                return action_to_game_action(game.name, entry)
    digest = hashlib.sha256(f"timeout:{match.match_id}:{match.version}".encode()).digest()
    seed = int.from_bytes(digest[:8], "big")
    bot = game.bots().get("greedy", random_view_policy)(seed)
    chosen = bot(game.view(state, seat), seat, legal)
    return action_to_game_action(game.name, concrete(chosen, random.Random(seed)))


def _lobby(
    request: board_pb2.CreateMatchRequest, now: float
) -> tuple[platform_events_pb2.MatchLobby, platform_events_pb2.SeatJoined | None]:
    """How the match is offered, with its lobby's closing time recorded, and the creator's
    seat taken with the match, if the request takes one (refused unless it names a seat of
    the match and the id of the token the gateway issues for it)."""
    lobby = platform_events_pb2.MatchLobby()
    lobby.CopyFrom(request.lobby)
    if not request.HasField("seated"):
        lobby.open_until = int(now) + lobby.open_s if lobby.open_s else 0
        return lobby, None
    seated = platform_events_pb2.SeatJoined()
    seated.CopyFrom(request.seated)
    if seated.seat not in request.players:
        raise Refusal(RefusalKind.NOT_FOUND, "NO_SUCH_SEAT", "no such seat in this match")
    if seated.by != "creator" or not seated.join_id:
        raise Refusal(
            RefusalKind.INVALID_ARGUMENT, "MALFORMED_JOIN", "a join needs a claim and an id"
        )
    if seated.seat in lobby.bot_levels:  # the bots service's (services/board/lobby.py)
        raise Refusal(
            RefusalKind.PERMISSION_DENIED, "SEAT_FOR_A_BOT", "that seat is reserved for a bot"
        )
    starts = all(p == seated.seat for p in request.players)
    lobby.open_until = int(now) + lobby.open_s if lobby.open_s and not starts else 0
    seated.open_until = lobby.open_until
    return lobby, seated


def view_update(match: Match) -> bytes:
    """The match's update at its version, as the projector will publish it (no seed is
    revealed while the board acts on a match), for the gateway to show at once; nothing
    when it would exceed the bound the projector holds views to (it sets that match aside)."""
    update = update_bytes(match)
    return update if len(update) <= MAX_RECORD_BYTES else b""


def _result_label(results: dict[str, str]) -> str:
    if not results:
        return "none"  # a lobby that closed: nobody played
    values = set(results.values())
    if "won" in values:
        return "won"
    return "draw" if values == {"draw"} else "lost"


def _reply(accepted: Accepted) -> board_pb2.SubmitActionReply:
    return board_pb2.SubmitActionReply(
        version=accepted.version,
        events_appended=accepted.events_appended,
        duplicate=accepted.duplicate,
        finished=accepted.finished,
    )


async def _abort(context: grpc.aio.ServicerContext, refused: Refusal) -> None:
    context.set_trailing_metadata((("tabletop-reason", refused.code),))
    await context.abort(grpc.StatusCode[refused.kind.value], refused.message)
