"""A match as its clients see it: the one place where a view is made, from a ``Match``.

A ``Match`` (services/games/match.py) travels between processes as its ``ViewUpdate``
(``update``): its summary, provenance, seat tokens and encoded engine state. The board
sends it with each acknowledgement and the projector publishes it on the views topic,
byte for byte the same for one version (``update_bytes``); a gateway decodes it back into
a ``Match`` (``from_update``) when a client first asks for a view of it. A view is what one
viewer (a seat, or "" for a spectator) may see of a match: ``view`` makes it, and
``StepViews`` makes the same views of a match folded event by event (a replay), keeping
one message and filling again only what changed.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from services.adapters.game_adapter import fill_game_view, game_and_messages, next_step_message
from services.adapters.refill import Refill
from services.games import clock, handover
from services.games.clock import Clock
from services.games.codec import from_data, from_data_reusing, to_data
from services.games.match import Match
from tabletop.v1 import match_pb2

STATUS = {False: match_pb2.MATCH_STATUS_ACTIVE, True: match_pb2.MATCH_STATUS_FINISHED}

#: a state's data (``codec.to_data``'s form, the JSON parsed) and the state it decodes to
Decoded = tuple[Any, Any]


# -- the engine state on the wire -----------------------------------------------------------
def encode_state(state: Any) -> str:
    """The engine state as compact JSON (``codec.to_data``): table records and updates."""
    return json.dumps(to_data(state), separators=(",", ":"))


@functools.cache
def _state_type(game_name: str) -> type:
    game, _ = game_and_messages(game_name)
    return type(game.initial_state())


def decode_state(game_name: str, encoded: str | bytes) -> Any:
    return from_data(_state_type(game_name), json.loads(encoded))


def state_from_data(game_name: str, data: Any) -> Any:
    """A state from its data (table records written before updates carried the state)."""
    return from_data(_state_type(game_name), data)


def decode_state_reusing(game_name: str, encoded: str | bytes, before: Decoded | None) -> Decoded:
    """The state ``encoded`` holds, with its data; given the match's state decoded before
    (``before``), every part whose data is unchanged is that state's own object
    (``codec.from_data_reusing``), so the game's views, which keep what they drew by the
    identity of the state's parts, draw only what changed."""
    data = json.loads(encoded)
    if before is None:
        return data, from_data(_state_type(game_name), data)
    return data, from_data_reusing(_state_type(game_name), data, *before)


# -- the update: a match on the wire ------------------------------------------------------------
def summary(match: Match) -> match_pb2.MatchSummary:
    return match_pb2.MatchSummary(
        match_id=match.match_id,
        game=match.game.name,
        players=match.players,
        status=STATUS[match.finished],
        version=match.version,
        results=match.results,
        end_reason=match.end_reason,
        next=next_step_message(match.game.next_step(match.state)),
        private=match.private,
        seats=match.seats,
        bots=match.bots,
        started=match.started,
        open_until=match.open_until,
        bot_levels=match.bot_levels,
        seat_states=match.seat_states(),
        clock=clock_message(match),
    )


def clock_message(match: Match) -> match_pb2.MatchClock | None:
    """The match's clocks as a client shows them (None: untimed)."""
    ticking = match.clock
    if ticking is None:
        return None
    since_ms = round(ticking.since * 1000)
    seats = []
    for seat in match.players:
        remaining_ms = round(ticking.remaining(seat, ticking.since) * 1000)
        running = ticking.deadline(seat) is not None
        seats.append(
            match_pb2.SeatClock(
                seat=seat,
                remaining_ms=remaining_ms,
                # (from the rounded figures: a match decoded from this message says the same)
                deadline_ms=since_ms + remaining_ms if running else 0,
                timeouts=ticking.timeouts.get(seat, 0),
            )
        )
    return match_pb2.MatchClock(
        control=ticking.control.describe(),
        on_timeout=ticking.control.on_timeout,
        since_ms=since_ms,
        seats=seats,
    )


def clock_from_message(shown: match_pb2.MatchClock, game: str) -> Clock | None:
    """The clock a ``clock_message`` was made from (a gateway's match from an update)."""
    if not shown.control:
        return None
    options = {clock.CLOCK_OPTION: shown.control, clock.TIMEOUT_OPTION: shown.on_timeout}
    try:
        control = clock.parse(game, options)
    except clock.BadTimeControl:
        return None
    if control is None:
        return None
    since = shown.since_ms / 1000
    running = [s for s in shown.seats if s.deadline_ms]
    return Clock(
        control,
        banks={s.seat: s.remaining_ms / 1000 for s in shown.seats},
        started={s.seat: s.deadline_ms / 1000 - control.per_move_s for s in running}
        if control.mode == clock.TURN
        else {},
        awaited=tuple(s.seat for s in running),
        since=since,
        timeouts={s.seat: s.timeouts for s in shown.seats if s.timeouts},
    )


def provenance(match: Match) -> match_pb2.Provenance:
    return match_pb2.Provenance(
        dice_commitment=match.dice_commitment,
        decks_commitment=match.decks_commitment,
        dice_seed=match.dice_seed,
        decks_seed=match.decks_seed,
    )


def update(match: Match, state: str | None = None) -> match_pb2.ViewUpdate:
    """The match's update; ``state``: its state's ``encode_state``, when made already."""
    return match_pb2.ViewUpdate(
        summary=summary(match),
        seat_tokens=match.seat_tokens,
        provenance=provenance(match),
        creator=match.creator,
        holders=match.holders,
        sealed=match.sealed,
        state=(encode_state(match.state) if state is None else state).encode(),
    )


def update_bytes(match: Match, state: str | None = None) -> bytes:
    """The update as the projector publishes it and the board sends it with its
    acknowledgements: serialized deterministically (map entries sorted), so the two
    copies of one version are equal bytes and a gateway can tell them by comparison."""
    return update(match, state).SerializeToString(deterministic=True)


def from_update(published: match_pb2.ViewUpdate, state: Any) -> Match:
    """The match an update was made from, with its ``state`` decoded (by the caller, who
    may reuse the state before: ``decode_state_reusing``). What an update leaves out (the
    options) is not part of any view."""
    summary = published.summary
    shown = published.provenance
    game, _ = game_and_messages(summary.game)
    # (empty maps and lists not converted: a gateway decodes an update for every first
    # view asked of it, and most of these are empty)
    results, bots, seats, levels = summary.results, summary.bots, summary.seats, summary.bot_levels
    tokens, holders = published.seat_tokens, published.holders
    return Match(
        match_id=summary.match_id,
        game=game,
        players=tuple(summary.players),
        state=state,
        version=summary.version,
        finished=summary.status == match_pb2.MATCH_STATUS_FINISHED,
        results=dict(results) if results else {},
        end_reason=summary.end_reason,
        dice_commitment=shown.dice_commitment,
        decks_commitment=shown.decks_commitment,
        dice_seed=shown.dice_seed,
        decks_seed=shown.decks_seed,
        private=summary.private,
        bots=tuple(bots) if bots else (),
        bot_levels=dict(levels) if levels else {},
        seats=dict(seats) if seats else {},
        seat_tokens=dict(tokens) if tokens else {},
        creator=published.creator,
        holders=dict(holders) if holders else {},
        started=summary.started,
        open_until=summary.open_until,
        vacated=_vacated(summary.seat_states) if summary.seat_states else {},
        sealed=dict(published.sealed) if published.sealed else {},
        clock=clock_from_message(summary.clock, summary.game)
        if summary.HasField("clock")
        else None,
    )


def _vacated(states: Any) -> dict[str, str]:
    return {seat: state for seat, state in states.items() if state in ("left", "open")}


# -- views ----------------------------------------------------------------------------------
def view(match: Match, viewer: str) -> match_pb2.MatchView:
    """What ``viewer`` (a seat, or "" for a spectator) may see of the match."""
    shown = match_pb2.MatchView(viewer=viewer, version=match.version)
    _frame(shown, match)
    shown.next.CopyFrom(next_step_message(match.game.next_step(match.state)))
    shown.next.SetInParent()
    game = match.game
    drawn = game.view(match.state, viewer or None)
    if viewer in match.sealed:
        drawn = handover.mask(game.name, drawn, match.sealed[viewer])
    fill_game_view(shown.game_view, game.name, drawn)
    return shown


def _frame(shown: match_pb2.MatchView, match: Match) -> None:
    """The view's facts of the match, but its version and next step (set in place: from a
    match's fields this is faster than the message's constructor)."""
    shown.match_id = match.match_id
    shown.game = match.game.name
    shown.status = STATUS[match.finished]
    del shown.players[:]
    shown.players.extend(match.players)
    shown.results.clear()
    shown.results.update(match.results)
    shown.end_reason = match.end_reason
    origin = shown.provenance  # (``provenance``'s fields, set in place)
    origin.SetInParent()  # present even when empty
    origin.dice_commitment = match.dice_commitment
    origin.decks_commitment = match.decks_commitment
    origin.dice_seed = match.dice_seed
    origin.decks_seed = match.decks_seed
    shown.ClearField("clock")
    shown_clock = clock_message(match)
    if shown_clock is not None:
        shown.clock.CopyFrom(shown_clock)


class StepViews:
    """One viewer's views of a match folded event by event (a replay): each equals
    ``view(match, viewer)`` at that point, but one message is kept from step to step and
    filled again only where it changed: nothing but the version when the fold left the
    engine state as it was (a view is a function of the state and the viewer), else the
    game view by ``Refill`` and the next step when the engine's differs; the rest of the
    frame when the match's facts differ."""

    def __init__(self, match: Match, viewer: str) -> None:
        self.match = match
        self.viewer = viewer
        self._view = match_pb2.MatchView(viewer=viewer)
        self._game_view = Refill(getattr(self._view.game_view, match.game.name))
        self._facts: tuple[Any, ...] = ()
        self._state: Any = self  # no state yet (a state is never this object)
        self._next: Any = None
        self._sealed = ""

    def view(self) -> match_pb2.MatchView:
        """The view of the match as folded so far: the same message on every call, changed
        by the next call (copy it to keep it)."""
        m = self.match
        shown = self._view
        facts = (
            m.match_id,
            m.players,
            m.finished,
            m.results,
            m.end_reason,
            m.dice_commitment,
            m.decks_commitment,
            m.dice_seed,
            m.decks_seed,
        )
        if facts != self._facts:  # once, and when the match ends
            self._facts = facts
            _frame(shown, m)
        shown.version = m.version
        shown_clock = clock_message(m)  # (it moves with every command)
        if shown_clock is not None:
            shown.clock.CopyFrom(shown_clock)
        state = m.state
        sealed = m.sealed.get(self.viewer, "")
        if state is self._state and sealed == self._sealed:
            return shown
        self._state, self._sealed = state, sealed
        step = m.game.next_step(state)
        if self._next is None or step != self._next:
            self._next = step
            shown.next.CopyFrom(next_step_message(step))
            shown.next.SetInParent()
        drawn = handover.mask(m.game.name, m.game.view(state, self.viewer or None), sealed)
        self._game_view.update(drawn)
        return shown
