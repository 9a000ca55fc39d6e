"""Building the published views of a match from its folded state (pure, no Faust).

The projector publishes a ``ViewUpdate`` per match: the summary, the provenance and the
encoded engine state. A gateway renders a viewer's view from it only when someone asks
(``PublishedMatch``), so no view is computed that nobody watches. Both the projector's own
``Projection.view_for`` and the gateways render through ``render_view``: the same view.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any

from services.adapters.folding import FoldedMatch
from services.adapters.game_adapter import (
    fill_game_view,
    game_and_messages,
    next_step_message,
)
from services.common.envelope import unpack
from services.games.codec import from_data, from_data_reusing, to_data
from services.games.contract import Game
from tabletop.v1 import envelope_pb2, match_pb2, platform_events_pb2

STATUS = {False: match_pb2.MATCH_STATUS_ACTIVE, True: match_pb2.MATCH_STATUS_FINISHED}


def encode_state(state: Any) -> str:
    """The engine state as compact JSON (``codec.to_data``): table records and updates."""
    return json.dumps(to_data(state), separators=(",", ":"))


@functools.cache
def _state_type(game_name: str) -> type:
    game, _ = game_and_messages(game_name)
    return type(game.initial_state())


def decode_state(game_name: str, encoded: str | bytes) -> Any:
    return from_data(_state_type(game_name), json.loads(encoded))


def render_view(
    summary: match_pb2.MatchSummary,
    provenance: match_pb2.Provenance,
    game: Game[Any],
    state: Any,
    viewer: str,
) -> match_pb2.MatchView:
    """What ``viewer`` (a seat, or "" for a spectator) may see of the match."""
    rendered = _match_view(summary, provenance, viewer)
    fill_game_view(rendered.game_view, game.name, game.view(state, viewer or None))
    return rendered


def _match_view(
    summary: match_pb2.MatchSummary,
    provenance: match_pb2.Provenance,
    viewer: str,
) -> match_pb2.MatchView:
    """The view's frame (its game view is filled in place after)."""
    return match_pb2.MatchView(
        match_id=summary.match_id,
        game=summary.game,
        version=summary.version,
        viewer=viewer,
        status=summary.status,
        players=summary.players,
        next=summary.next,
        results=summary.results,
        end_reason=summary.end_reason,
        provenance=provenance,
    )


#: message name of a seed reveal → (its class, the projection's attribute)
_REVEALS: dict[str, tuple[Any, str]] = {
    cls.DESCRIPTOR.full_name: (cls, attribute)
    for cls, attribute in (
        (platform_events_pb2.DiceSeedRevealed, "dice_seed"),
        (platform_events_pb2.DecksSeedRevealed, "decks_seed"),
    )
}


def revealed_seed(envelope: envelope_pb2.EventEnvelope) -> tuple[str, str] | None:
    """``("dice_seed", hex)`` or ``("decks_seed", hex)`` for a seed reveal, else None."""
    # the payload's type name, as Any.Is reads it: after the type URL's last "/"
    found = _REVEALS.get(envelope.payload.type_url.rpartition("/")[2])
    if found is None:
        return None
    cls, attribute = found
    revealed: Any = unpack(envelope, cls)
    return attribute, str(revealed.seed)


@dataclass
class Projection:
    """A match as the projector keeps it: folded board state plus the other streams' facts."""

    match: FoldedMatch
    dice_seed: str = ""
    decks_seed: str = ""
    #: (version, ``encode_state`` of the state at it): a batch's table record and its
    #: update share one encoding
    _encoded: tuple[int, str] = field(default=(-1, ""), repr=False, compare=False)

    def encoded_state(self) -> str:
        version, encoded = self._encoded
        if version != self.match.version:
            encoded = encode_state(self.match.state)
            self._encoded = (self.match.version, encoded)
        return encoded

    # -- table storage (JSON-safe) ------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        m = self.match
        return {
            "match_id": m.match_id,
            "game": m.game.name,
            "players": list(m.players),
            "options": m.options,
            "state": self.encoded_state(),
            "version": m.version,
            "finished": m.finished,
            "results": m.results,
            "end_reason": m.end_reason,
            "dice_commitment": m.dice_commitment,
            "decks_commitment": m.decks_commitment,
            "dice_seed": self.dice_seed,
            "decks_seed": self.decks_seed,
            "private": m.private,
            "bots": list(m.bots),
            "creator": m.creator,
            "seats": m.seats,
            "seat_tokens": m.seat_tokens,
        }

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> Projection:
        game, messages = game_and_messages(record["game"])
        state = record["state"]
        match = FoldedMatch(
            match_id=record["match_id"],
            game=game,
            messages=messages,
            players=tuple(record["players"]),
            options=record["options"],
            # the state as encode_state wrote it (str or its UTF-8 bytes); records written
            # before updates carried the state hold its data
            state=(
                decode_state(game.name, state)
                if isinstance(state, str | bytes)
                else from_data(_state_type(game.name), state)
            ),
            version=record["version"],
            finished=record["finished"],
            results=record["results"],
            end_reason=record["end_reason"],
            dice_commitment=record["dice_commitment"],
            decks_commitment=record["decks_commitment"],
            # records written before the lobby existed have none
            private=record.get("private", False),
            bots=tuple(record.get("bots", ())),
            creator=record.get("creator", ""),
            seats=dict(record.get("seats", {})),
            seat_tokens=dict(record.get("seat_tokens", {})),
        )
        return cls(match, record["dice_seed"], record["decks_seed"])

    # -- the other streams ----------------------------------------------------------------
    def note(self, envelope: envelope_pb2.EventEnvelope) -> bool:
        """Fold a dice/decks fact that shows in views; True if anything changed."""
        seed = revealed_seed(envelope)
        if seed is None:
            return False
        setattr(self, seed[0], seed[1])
        return True

    # -- views --------------------------------------------------------------------------
    def summary(self) -> match_pb2.MatchSummary:
        m = self.match
        return match_pb2.MatchSummary(
            match_id=m.match_id,
            game=m.game.name,
            players=m.players,
            status=STATUS[m.finished],
            version=m.version,
            results=m.results,
            end_reason=m.end_reason,
            next=next_step_message(m.game.next_step(m.state)),
            private=m.private,
            seats=m.seats,
            bots=m.bots,
        )

    def provenance(self) -> match_pb2.Provenance:
        m = self.match
        return match_pb2.Provenance(
            dice_commitment=m.dice_commitment,
            decks_commitment=m.decks_commitment,
            dice_seed=self.dice_seed,
            decks_seed=self.decks_seed,
        )

    def view_for(self, viewer: str) -> match_pb2.MatchView:
        m = self.match
        return render_view(self.summary(), self.provenance(), m.game, m.state, viewer)

    def update(self) -> match_pb2.ViewUpdate:
        return match_pb2.ViewUpdate(
            summary=self.summary(),
            seat_tokens=self.match.seat_tokens,
            provenance=self.provenance(),
            state=self.encoded_state().encode(),
        )

    def update_bytes(self) -> bytes:
        """The update as the projector publishes it and the board sends it with its
        acknowledgements: serialized deterministically (map entries sorted), so the two
        copies of one version are equal bytes and a gateway can tell them by comparison."""
        return self.update().SerializeToString(deterministic=True)


class PublishedMatch:
    """A ``ViewUpdate`` as a gateway holds it: each viewer's view is rendered on its first
    request and kept with the update (the state is decoded once, for the first view).

    Given the match's update before (``before``), the state is decoded reusing what did
    not change since (``codec.from_data_reusing``): the game's views, which keep what they
    drew by the identity of the state's parts, then draw only what changed."""

    def __init__(self, update: match_pb2.ViewUpdate, before: PublishedMatch | None = None) -> None:
        self.update = update
        #: (the state's data, the state) once decoded; no data for a finished match (no
        #: update follows to reuse it, and a gateway keeps every match's last update)
        self._decoded: tuple[Any, Any] | None = None
        self._before = before._decoded if before is not None else None
        if self._before is not None and self._before[0] is None:
            self._before = None
        self._views: dict[str, match_pb2.MatchView] = {}

    def _state(self) -> Any:
        if self._decoded is None:
            game_name = self.update.summary.game
            data = json.loads(self.update.state)
            before, self._before = self._before, None
            if before is None:
                state = from_data(_state_type(game_name), data)
            else:
                state = from_data_reusing(_state_type(game_name), data, *before)
            finished = self.update.summary.status == match_pb2.MATCH_STATUS_FINISHED
            self._decoded = (None if finished else data, state)
        return self._decoded[1]

    def view(self, viewer: str) -> match_pb2.MatchView | None:
        """None for a viewer that is no seat of the match ("" is the spectator)."""
        view = self._views.get(viewer)
        if view is not None:
            return view
        summary = self.update.summary
        if viewer and viewer not in summary.players:
            return None
        game, _ = game_and_messages(summary.game)
        view = render_view(summary, self.update.provenance, game, self._state(), viewer)
        self._views[viewer] = view
        return view
