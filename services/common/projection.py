"""Building the published views of a match from its folded state (pure, no Faust)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.common.envelope import is_a, unpack
from services.common.folding import FoldedMatch
from services.common.game_adapter import (
    game_and_messages,
    next_step_message,
    view_to_game_view,
)
from services.games.codec import from_data, to_data
from tabletop.v1 import envelope_pb2, match_pb2, platform_events_pb2

STATUS = {False: match_pb2.MATCH_STATUS_ACTIVE, True: match_pb2.MATCH_STATUS_FINISHED}


def revealed_seed(envelope: envelope_pb2.EventEnvelope) -> tuple[str, str] | None:
    """``("dice_seed", hex)`` or ``("decks_seed", hex)`` for a seed reveal, else None."""
    for cls, attribute in (
        (platform_events_pb2.DiceSeedRevealed, "dice_seed"),
        (platform_events_pb2.DecksSeedRevealed, "decks_seed"),
    ):
        if is_a(envelope, cls):
            revealed: Any = unpack(envelope, cls)
            return attribute, str(revealed.seed)
    return None


@dataclass
class Projection:
    """A match as the projector keeps it: folded board state plus the other streams' facts."""

    match: FoldedMatch
    dice_seed: str = ""
    decks_seed: str = ""

    # -- table storage (JSON-safe) ------------------------------------------------------
    def to_record(self) -> dict[str, Any]:
        m = self.match
        return {
            "match_id": m.match_id,
            "game": m.game.name,
            "players": list(m.players),
            "options": m.options,
            "state": to_data(m.state),
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
        initial = game.initial_state()
        match = FoldedMatch(
            match_id=record["match_id"],
            game=game,
            messages=messages,
            players=tuple(record["players"]),
            options=record["options"],
            state=from_data(type(initial), record["state"]),
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

    def view_for(self, viewer: str) -> match_pb2.MatchView:
        m = self.match
        return match_pb2.MatchView(
            match_id=m.match_id,
            game=m.game.name,
            version=m.version,
            viewer=viewer,
            status=STATUS[m.finished],
            players=m.players,
            next=next_step_message(m.game.next_step(m.state)),
            game_view=view_to_game_view(m.game.name, m.game.view(m.state, viewer or None)),
            results=m.results,
            end_reason=m.end_reason,
            provenance=match_pb2.Provenance(
                dice_commitment=m.dice_commitment,
                decks_commitment=m.decks_commitment,
                dice_seed=self.dice_seed,
                decks_seed=self.decks_seed,
            ),
        )

    def update(self) -> match_pb2.ViewUpdate:
        viewers = [*self.match.players, ""]
        return match_pb2.ViewUpdate(
            summary=self.summary(),
            views=[self.view_for(v) for v in viewers],
            seat_tokens=self.match.seat_tokens,
        )
