"""Taking back a seat's last command, where the rules allow it (the board's UndoCommand).

A seat may take back its own last command while it is still the current turn's: no other
seat acted since, the turn did not pass to a seat that was not already to play, and the
command showed nobody anything new — no chance outcome (a die rolled, a card drawn: the
game awaited chance somewhere in the command) and none of the events its game says reveal
hidden information (``Game.reveals``: a card turned, secret choices shown, a flick's
physics). Each undo takes back one command; another goes one further back, within the
same turn. A timed match's clock goes back with the state, and is then charged to the undo
as if the seat had never moved: no time is given back (folding.py).

The answer is an ``ActionsUndone`` carrying the game state (and clock) as it was before the
command, which every reader restores (services/adapters/folding.py); the board computes that
state by folding the log up to there, and verification checks it the same way.

Which commands are in effect is read from the log: an ``ActionsUndone`` cancels the
commands after its ``to_version``; seat events (joins, leaves, hand-overs) change no game
state and are passed over; anything else (a timeout, the start) ends what may be taken back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from services.adapters.folding import SEAT_EVENTS, fold_board_events
from services.adapters.game_adapter import messages_for
from services.common.envelope import is_a, unpack
from services.games.clock import Clock
from services.games.commands import Refusal, RefusalKind
from services.games.contract import AwaitingChance, AwaitingPlayers
from services.games.match import Match
from tabletop.v1 import envelope_pb2, platform_events_pb2

Envelope = envelope_pb2.EventEnvelope


NOTHING = "you have nothing to take back: you have not moved since your turn began"
NOT_YOURS = "another player has acted since; only your own last moves can be taken back"
CHANCE = "that move stands: chance decided part of it (a die rolled, a card drawn, a flick)"
REVEALED = "that move stands: it revealed something no one knew before"
TURN_OVER = "that move stands: your turn is over"


@dataclass(frozen=True)
class Takeback:
    """What an ``ActionsUndone`` records: the seat's command in ``(to_version,
    from_version]`` taken back, and the game state at ``to_version``."""

    seat: str
    to_version: int
    from_version: int
    state: Any
    #: a timed match's clock at ``to_version``
    clock: Clock | None = None


def takeback(match: Match, envelopes: Sequence[Envelope], seat: str) -> Takeback:
    """The seat's last command taken back, or a Refusal saying why it cannot be.
    ``envelopes``: every board event of the match, first to last."""
    _check_match(match, seat)
    command = _last_command(envelopes, match.game.name, seat)
    to_version = int(command[0].sequence) - 1
    earlier = fold_board_events(envelopes[:to_version])
    before = earlier.state
    _check_nothing_shown(match, before, command)
    _check_same_turn(match, before)
    return Takeback(seat, to_version, int(command[-1].sequence), before, earlier.clock)


def can_take_back(match: Match, envelopes: Sequence[Envelope], seat: str) -> bool:
    try:
        takeback(match, envelopes, seat)
    except Refusal:
        return False
    return True


def _check_match(match: Match, seat: str) -> None:
    if seat not in match.players:
        raise Refusal(RefusalKind.PERMISSION_DENIED, "NOT_A_PLAYER", "no such seat in this match")
    if match.finished:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "MATCH_OVER", "the match is over")


def _last_command(envelopes: Sequence[Envelope], game: str, seat: str) -> list[Envelope]:
    """The envelopes of the last command in effect (seat events passed over), if it is
    a move of ``seat``'s."""
    commands = _in_effect(envelopes)
    while commands and all(_is_seat_event(e) for e in commands[-1]):
        commands.pop()
    if not commands or not _is_move(commands[-1], game):
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "NOTHING_TO_UNDO", NOTHING)
    if commands[-1][0].actor != seat:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "NOT_YOUR_MOVE", NOT_YOURS)
    return commands[-1]


def _in_effect(envelopes: Sequence[Envelope]) -> list[list[Envelope]]:
    """The match's commands (one appended batch each) not taken back, in order."""
    commands: list[list[Envelope]] = []
    batch: list[Envelope] = []
    for envelope in envelopes:
        batch.append(envelope)
        if not envelope.last_in_batch:
            continue
        if is_a(batch[0], platform_events_pb2.ActionsUndone):
            undone = unpack(batch[0], platform_events_pb2.ActionsUndone)
            assert isinstance(undone, platform_events_pb2.ActionsUndone)
            while commands and commands[-1][0].sequence > undone.to_version:
                commands.pop()
        else:
            commands.append(batch)
        batch = []
    return commands


def _is_seat_event(envelope: Envelope) -> bool:
    return any(is_a(envelope, kind) for kind in SEAT_EVENTS)


def _is_move(command: list[Envelope], game: str) -> bool:
    """A seat's move: game events only (a timeout's, an opening's or an end's are not)."""
    messages = messages_for(game)
    return all(messages.is_game_event(e.payload) for e in command)


def _check_nothing_shown(match: Match, before: Any, command: list[Envelope]) -> None:
    game = match.game
    messages = messages_for(game.name)
    state = before
    for envelope in command:
        event = messages.event_from_any(envelope.payload)
        if isinstance(game.next_step(state), AwaitingChance):
            raise Refusal(RefusalKind.FAILED_PRECONDITION, "CHANCE_SINCE", CHANCE)
        if game.reveals(event):
            raise Refusal(RefusalKind.FAILED_PRECONDITION, "REVEALED_SINCE", REVEALED)
        state = game.evolve(state, event)


def _check_same_turn(match: Match, before: Any) -> None:
    """The seats to play now were all to play before the command (a simultaneous phase
    stays one turn; a turn passed on is over)."""
    then, now = match.game.next_step(before), match.game.next_step(match.state)
    waiting = set(then.players) if isinstance(then, AwaitingPlayers) else set()
    if isinstance(now, AwaitingPlayers) and not set(now.players) <= waiting:
        raise Refusal(RefusalKind.FAILED_PRECONDITION, "TURN_OVER", TURN_OVER)
