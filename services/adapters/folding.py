"""Folding a match's events into its ``Match``, as every reader does: the board after a
restart, the projector, scoring, a replay, a picture (so every reader folds exactly as the
board does)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from services.adapters.game_adapter import game_and_messages, messages_for
from services.adapters.views import decode_state
from services.common.envelope import is_a, unpack
from services.games import clock, handover
from services.games.match import TAKEN_BACK, Match
from tabletop.v1 import envelope_pb2, platform_events_pb2

#: message name of a seed reveal → (its class, the Match's attribute)
_REVEALS: dict[str, tuple[Any, str]] = {
    cls.DESCRIPTOR.full_name: (cls, attribute)
    for cls, attribute in (
        (platform_events_pb2.DiceSeedRevealed, "dice_seed"),
        (platform_events_pb2.DecksSeedRevealed, "decks_seed"),
    )
}
_MATCH_CREATED = platform_events_pb2.MatchCreated.DESCRIPTOR.full_name


def created(envelope: envelope_pb2.EventEnvelope) -> Match:
    """The match a MatchCreated envelope opens."""
    opened = unpack(envelope, platform_events_pb2.MatchCreated)
    assert isinstance(opened, platform_events_pb2.MatchCreated)
    game, _ = game_and_messages(opened.game)
    return Match(
        match_id=envelope.match_id,
        game=game,
        players=tuple(opened.players),
        state=game.initial_state(),
        version=int(envelope.sequence),
        options=dict(opened.options),
        dice_commitment=opened.dice_commitment,
        decks_commitment=opened.decks_commitment,
        private=opened.lobby.private,
        bots=tuple(opened.lobby.bots),
        bot_levels=dict(opened.lobby.bot_levels),
        creator=opened.lobby.creator,
        open_s=opened.lobby.open_s,
        open_until=opened.lobby.open_until,
        clock=_clock_of(opened.game, opened.players, opened.options),
    )


def _clock_of(game: str, players: Sequence[str], options: Any) -> clock.Clock | None:
    try:
        control = clock.parse(game, options)
    except clock.BadTimeControl:  # (refused at create: never recorded)
        return None
    return clock.Clock.start(control, players) if control is not None else None


def is_created(envelope: envelope_pb2.EventEnvelope) -> bool:
    """A MatchCreated (read as ``Any.Is`` reads a payload's type)."""
    return envelope.payload.type_url.rpartition("/")[2] == _MATCH_CREATED


class Gap(ValueError):
    """A board event came after a missing one: what was folded so far is behind the log."""


def fold(match: Match, envelope: envelope_pb2.EventEnvelope) -> bool:
    """Fold the match's next board envelope; False (and no change) for one already
    folded, ``Gap`` for one past the next."""
    if envelope.sequence <= match.version:
        return False
    if envelope.sequence != match.version + 1:
        raise Gap(f"match {match.match_id}: event {envelope.sequence} after {match.version}")
    match.version = int(envelope.sequence)
    note_mover(match, envelope)
    messages = messages_for(match.game.name)
    if messages.is_game_event(envelope.payload):
        match.state = match.game.evolve(match.state, messages.event_from_any(envelope.payload))
    elif is_a(envelope, platform_events_pb2.MatchEnded):
        ended = unpack(envelope, platform_events_pb2.MatchEnded)
        assert isinstance(ended, platform_events_pb2.MatchEnded)
        match.finished = True
        match.results = dict(ended.results)
        match.end_reason = ended.reason
    elif is_a(envelope, platform_events_pb2.SeatJoined):
        joined = unpack(envelope, platform_events_pb2.SeatJoined)
        assert isinstance(joined, platform_events_pb2.SeatJoined)
        if not match.started:
            match.open_until = int(joined.open_until)
        match.seat(joined.seat, joined.display_name, joined.join_id, joined.player_id)
    elif is_a(envelope, platform_events_pb2.SeatLeft):
        left = unpack(envelope, platform_events_pb2.SeatLeft)
        assert isinstance(left, platform_events_pb2.SeatLeft)
        match.leave(left.seat)
    elif is_a(envelope, platform_events_pb2.SeatHandedOver):
        handed = unpack(envelope, platform_events_pb2.SeatHandedOver)
        assert isinstance(handed, platform_events_pb2.SeatHandedOver)
        # what the game keeps from the new holder, as the match stands now: the same for
        # every reader, since each folds the same events to the same state
        sealed = handover.seal(match.game.name, match.state, handed.seat)
        match.hand_over(handed.seat, handed.to, handed.level, sealed)
    elif is_a(envelope, platform_events_pb2.ActionsUndone):
        undone = unpack(envelope, platform_events_pb2.ActionsUndone)
        assert isinstance(undone, platform_events_pb2.ActionsUndone)
        # the state as the board computed it (verification checks it against the fold)
        match.state = decode_state(match.game.name, undone.state)
        if undone.clock and match.clock is not None:
            # as it was, then charged below up to now as if the seat had not moved
            facts = json.loads(undone.clock)
            match.clock = clock.Clock.from_facts(match.clock.control, facts)
    advance_clock(match, envelope)
    return True


#: seat events: they change who holds a seat, not the game's state
SEAT_EVENTS = (
    platform_events_pb2.SeatJoined,
    platform_events_pb2.SeatLeft,
    platform_events_pb2.SeatHandedOver,
)


def note_mover(match: Match, envelope: envelope_pb2.EventEnvelope) -> None:
    """``Match.last_mover`` after ``envelope``."""
    if messages_for(match.game.name).is_game_event(envelope.payload):
        match.last_mover = envelope.actor
    elif is_a(envelope, platform_events_pb2.ActionsUndone):
        match.last_mover = TAKEN_BACK
    elif not any(is_a(envelope, kind) for kind in SEAT_EVENTS):
        match.last_mover = ""


def commanded(match: Match, envelopes: Iterable[envelope_pb2.EventEnvelope]) -> None:
    """The board's, after a command the command handler appended (the handler folds the
    state itself): the match's last mover noted and its clock advanced."""
    taken = list(envelopes)
    for envelope in taken:
        note_mover(match, envelope)
    advance_clock_by(match, taken)


def advance_clock(match: Match, envelope: envelope_pb2.EventEnvelope) -> None:
    """The clock's part of folding ``envelope`` (already folded into the match's state): a
    timeout noted, and at the end of each command the clock advanced to its recorded time."""
    ticking = match.clock
    if ticking is None:
        return
    if is_a(envelope, platform_events_pb2.ClockExpired):
        expired = unpack(envelope, platform_events_pb2.ClockExpired)
        assert isinstance(expired, platform_events_pb2.ClockExpired)
        ticking.expired(expired.seat)
    if envelope.last_in_batch:
        at = envelope.occurred_at.seconds + envelope.occurred_at.nanos / 1e9
        # a move taken back is no move: it earns no increment and restarts no turn
        mover = "" if is_a(envelope, platform_events_pb2.ActionsUndone) else envelope.actor
        ticking.recorded(at, mover, match.awaited())


def advance_clock_by(match: Match, envelopes: Iterable[envelope_pb2.EventEnvelope]) -> None:
    """The board's: the clock's part of a command the command handler appended (the handler
    folds the state itself)."""
    if match.clock is None:
        return
    for envelope in envelopes:
        advance_clock(match, envelope)


def revealed_seed(envelope: envelope_pb2.EventEnvelope) -> tuple[str, str] | None:
    """``("dice_seed", hex)`` or ``("decks_seed", hex)`` for a seed reveal (dice and decks
    streams), else None."""
    # the payload's type name, as Any.Is reads it: after the type URL's last "/"
    found = _REVEALS.get(envelope.payload.type_url.rpartition("/")[2])
    if found is None:
        return None
    cls, attribute = found
    revealed: Any = unpack(envelope, cls)
    return attribute, str(revealed.seed)


def reveal(match: Match, seed: tuple[str, str]) -> None:
    """A seed ``revealed_seed`` read, into the match's provenance."""
    setattr(match, *seed)


def fold_board_events(envelopes: Sequence[envelope_pb2.EventEnvelope]) -> Match:
    """A match folded from its board envelopes, first to last."""
    if not envelopes or not is_a(envelopes[0], platform_events_pb2.MatchCreated):
        raise ValueError("a match's board events start with MatchCreated")
    match = created(envelopes[0])
    for envelope in envelopes[1:]:
        fold(match, envelope)
    return match
