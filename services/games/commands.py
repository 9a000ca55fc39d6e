"""The command handler: decide → resolve chance → append → fold, in one place.

The board service and in-process playouts both run a match through this loop; they differ
only in what they inject. A ``ChanceResolver`` supplies chance outcomes (the dice and decks
services, or ``SeededChance``); an ``EventStore`` appends one command's events atomically
(a Kafka transaction, or a list). Nothing here knows gRPC, Kafka or protobuf.

Each event is evolved exactly once: the handler takes the state after each decision or
chance outcome from the engine's ``decide_folded`` / ``resolve_folded`` (the engine needs
that state to say what comes next; one that folds while deciding hands over its own), and
only after the store has appended all the events does the match take that state. A
refused command, or an append that fails, leaves the match as it was.

A retried command (same command id) gets the first reply and appends nothing. A command id
reused for a different command is refused (``COMMAND_ID_REUSED``). The handler remembers
the command of each id it accepted itself; commands recovered from the log are known only
by id, so a reused id among those is answered as a retry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from services.games.contract import (
    AwaitingChance,
    ChanceOutcome,
    ChanceRequest,
    Finished,
    Game,
    MalformedAction,
    Outcome,
    RuleViolation,
)
from services.games.frozen import quick_init_all
from services.games.match import Accepted, Match

#: a command resolving more chance nodes than this is a bug in an engine
MAX_CHANCE_NODES = 10_000


class RefusalKind(StrEnum):
    """Why a command was refused, in terms every transport can map (gRPC status codes)."""

    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    ABORTED = "ABORTED"
    UNAVAILABLE = "UNAVAILABLE"
    #: a fault of the platform, not of the command (a peer refused what the board asked)
    INTERNAL = "INTERNAL"


class Refusal(Exception):
    """A command not carried out: ``code`` is the stable reason, ``message`` for people."""

    def __init__(self, kind: RefusalKind, code: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.code = code
        self.message = message


class ChanceResolver(Protocol):
    async def resolve(
        self, match_id: str, request: ChanceRequest, request_id: str, cause: str
    ) -> ChanceOutcome:
        """The outcome of ``request``; the same ``request_id`` must get the same outcome.

        Raises Refusal(UNAVAILABLE) when the outcome cannot be had now."""
        ...

    async def settle(self, match_id: str, cause: str) -> None:
        """Make the outcomes given out for command ``cause`` durable: called once the
        command's chance is resolved, before its events are appended (a resolver whose
        outcomes are durable when given out does nothing).

        Raises Refusal(UNAVAILABLE) when they cannot be made durable now."""
        ...


@dataclass(frozen=True)
class Opening:
    """What opens a match's log before its first game event (the board's MatchCreated)."""

    game: str
    players: tuple[str, ...]
    options: Mapping[str, str]
    dice_commitment: str = ""
    decks_commitment: str = ""
    #: who may sit where (the board's MatchLobby message): passed through to the store
    lobby: Any = None
    #: the seat the creator takes with the match (the board's SeatJoined message), appended
    #: right after MatchCreated; None: nobody sits yet
    seated: Any = None

    def __len__(self) -> int:
        """The platform events that open the log."""
        return 1 + (self.seated is not None)


@dataclass(frozen=True)
class Batch:
    """One command's events, appended all or nothing, in this order: the opening (for a
    new match), the game events, the ending (when the match is over)."""

    match_id: str
    command_id: str
    actor: str
    events: Sequence[Any]
    ending: Outcome | None = None
    opening: Opening | None = None
    #: platform events recorded before the game events (the board's ClockExpired)
    preface: Sequence[Any] = ()

    def __len__(self) -> int:
        opened = len(self.opening) if self.opening is not None else 0
        return len(self.preface) + len(self.events) + (self.ending is not None) + opened


class EventStore(Protocol):
    async def append(self, game: Game[Any], batch: Batch) -> int:
        """Append ``batch`` atomically and return the match's new version (its number of
        stored events). Raises Refusal(UNAVAILABLE) when nothing was appended."""
        ...


@dataclass(frozen=True)
class Command:
    command_id: str
    player: str
    #: the action as submitted; ``CommandHandler.decode`` turns it into an engine action
    action: Any
    expected_version: int | None = None
    #: platform events appended before the command's own (the board's ClockExpired)
    preface: tuple[Any, ...] = ()


def require_command_id(command_id: str) -> None:
    if not command_id:
        raise Refusal(
            RefusalKind.INVALID_ARGUMENT,
            "MISSING_COMMAND_ID",
            "command_id is required (it makes retries safe)",
        )


def _engine_action(game: Game[Any], action: Any) -> Any:
    return action


class CommandHandler:
    def __init__(
        self,
        chance: ChanceResolver,
        store: EventStore,
        decode: Callable[[Game[Any], Any], Any] = _engine_action,
    ) -> None:
        """``decode`` turns a submitted action into the engine's action, raising
        ValueError or TypeError when it cannot (refused as MALFORMED_ACTION)."""
        self._chance = chance
        self._store = store
        self._decode = decode

    async def create(
        self,
        match: Match,
        options: Mapping[str, str],
        command_id: str,
        actor: str,
        opening: Callable[[], Awaitable[Opening]],
    ) -> Accepted:
        """Set up a new match (``match`` holds the game's initial state, version 0).

        ``opening`` is awaited once the rules accept the players and options (the board
        commits to the match's seeds then, not for a match it refuses)."""
        if match.version != 0:
            raise Refusal(
                RefusalKind.ALREADY_EXISTS, "MATCH_EXISTS", f"match {match.match_id} exists"
            )
        try:
            setup = match.game.setup(match.players, options)
        except RuleViolation as refused:
            raise Refusal(RefusalKind.INVALID_ARGUMENT, refused.code, refused.message) from refused
        after = match.game.fold(setup, match.state)
        return await self._carry_out(match, setup, after, command_id, actor, await opening())

    async def submit(self, match: Match, command: Command) -> Accepted:
        command_id, player = command.command_id, command.player
        if not command_id:
            require_command_id(command_id)
        first = match.replies.get(command_id)
        if first is not None:
            known = match.commands.get(command_id)
            if known is not None and known != (player, command.action):
                raise Refusal(
                    RefusalKind.FAILED_PRECONDITION,
                    "COMMAND_ID_REUSED",
                    f"command id {command_id} was used for another command; "
                    "use a new id for a new command",
                )
            return Accepted(first.version, first.events_appended, first.finished, True)
        if command.expected_version is not None and command.expected_version != match.version:
            raise Refusal(
                RefusalKind.ABORTED,
                "STALE_VERSION",
                f"the match moved on: you decided on version {command.expected_version}, "
                f"it is now at version {match.version}",
            )
        if match.finished:
            raise Refusal(RefusalKind.FAILED_PRECONDITION, "MATCH_OVER", "the match is over")
        if player not in match.players:
            raise Refusal(
                RefusalKind.PERMISSION_DENIED,
                "NOT_A_PLAYER",
                f"{player or 'nobody'} does not play in this match",
            )
        decode = self._decode
        if decode is _engine_action:  # (what it returns, without the call)
            action = command.action
        else:
            try:
                action = decode(match.game, command.action)
            except (ValueError, TypeError) as bad:
                raise Refusal(RefusalKind.INVALID_ARGUMENT, "MALFORMED_ACTION", str(bad)) from bad
        try:
            events, after = match.game.decide_folded(match.state, player, action)
        except MalformedAction as refused:
            raise Refusal(RefusalKind.INVALID_ARGUMENT, refused.code, refused.message) from refused
        except RuleViolation as refused:
            raise Refusal(
                RefusalKind.FAILED_PRECONDITION, refused.code, refused.message
            ) from refused
        accepted = await self._carry_out(
            match, events, after, command_id, player, preface=command.preface
        )
        match.commands[command_id] = (player, command.action)
        return accepted

    async def _carry_out(
        self,
        match: Match,
        decided: list[Any],
        after: Any,
        command_id: str,
        actor: str,
        opening: Opening | None = None,
        preface: tuple[Any, ...] = (),
    ) -> Accepted:
        """From ``after`` (the state with ``decided`` folded in) resolve chance until a
        player must act or the match ends, append everything, and only then let the match
        take the new state."""
        game = match.game
        state = after
        events = list(decided)
        index = 0  # (a counted loop, not ``range``: most commands meet no chance node)
        while True:
            step = game.next_step(state)
            if not isinstance(step, AwaitingChance):
                break
            if index == MAX_CHANCE_NODES:
                raise RuntimeError(
                    f"{game.name}: more than {MAX_CHANCE_NODES} chance nodes in a row"
                )
            request = step.request
            if request.service not in game.chance_services:  # a bug in the engine
                raise RuntimeError(
                    f"{game.name} asked {request.service}, which it does not declare "
                    "in chance_services (no seed is committed there for its matches)"
                )
            outcome = await self._chance.resolve(
                match.match_id, request, f"{command_id}:{index}", command_id
            )
            resolved, state = game.resolve_folded(state, outcome)
            events += resolved
            index += 1
        if index or opening is not None:  # outcomes or seed commitments were given out
            await self._chance.settle(match.match_id, command_id)
        ending = step.outcome if isinstance(step, Finished) else None
        batch = Batch(match.match_id, command_id, actor, events, ending, opening, preface)
        # len(batch), without its call
        appended = len(preface) + len(events) + (ending is not None)
        appended += len(opening) if opening else 0
        match.version = await self._store.append(game, batch)
        match.state = state
        if ending is not None:
            match.finished = True
            match.results = dict(ending.results)
            match.end_reason = ending.reason
        reply = Accepted(match.version, appended, match.finished)
        match.replies[command_id] = reply
        return reply


quick_init_all((Batch, Command))
