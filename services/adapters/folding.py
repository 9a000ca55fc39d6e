"""Folding a match's board envelopes into its engine state: shared by the read side
(projector, scoring, replay, verify), so every reader folds exactly as the board does."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.adapters.game_adapter import game_and_messages
from services.adapters.protoconv import GameMessages
from services.common.envelope import is_a, unpack
from services.games.contract import Game
from tabletop.v1 import envelope_pb2, platform_events_pb2


@dataclass
class FoldedMatch:
    match_id: str
    game: Game[Any]
    messages: GameMessages
    players: tuple[str, ...]
    options: dict[str, str]
    state: Any
    version: int = 0
    finished: bool = False
    results: dict[str, str] = field(default_factory=dict)
    end_reason: str = ""
    dice_commitment: str = ""
    decks_commitment: str = ""
    #: the lobby (MatchCreated.lobby, SeatJoined): how the match is offered, who sits where
    private: bool = False
    bots: tuple[str, ...] = ()
    creator: str = ""
    #: joined seat → display name
    seats: dict[str, str] = field(default_factory=dict)
    #: joined seat → the id of its newest token (older ones no longer act)
    seat_tokens: dict[str, str] = field(default_factory=dict)

    @classmethod
    def created(cls, envelope: envelope_pb2.EventEnvelope) -> FoldedMatch:
        created = unpack(envelope, platform_events_pb2.MatchCreated)
        assert isinstance(created, platform_events_pb2.MatchCreated)
        game, messages = game_and_messages(created.game)
        match = cls(
            match_id=envelope.match_id,
            game=game,
            messages=messages,
            players=tuple(created.players),
            options=dict(created.options),
            state=game.initial_state(),
            dice_commitment=created.dice_commitment,
            decks_commitment=created.decks_commitment,
            private=created.lobby.private,
            bots=tuple(created.lobby.bots),
            creator=created.lobby.creator,
        )
        match.version = int(envelope.sequence)
        return match

    def fold(self, envelope: envelope_pb2.EventEnvelope) -> bool:
        """Fold the next board envelope; False (and no change) for one already folded."""
        if envelope.sequence <= self.version:
            return False
        if envelope.sequence != self.version + 1:
            raise ValueError(
                f"match {self.match_id}: event {envelope.sequence} after {self.version}"
            )
        self.version = int(envelope.sequence)
        if self.messages.is_game_event(envelope.payload):
            self.state = self.game.evolve(
                self.state, self.messages.event_from_any(envelope.payload)
            )
        elif is_a(envelope, platform_events_pb2.MatchEnded):
            ended = unpack(envelope, platform_events_pb2.MatchEnded)
            assert isinstance(ended, platform_events_pb2.MatchEnded)
            self.finished = True
            self.results = dict(ended.results)
            self.end_reason = ended.reason
        elif is_a(envelope, platform_events_pb2.SeatJoined):
            joined = unpack(envelope, platform_events_pb2.SeatJoined)
            assert isinstance(joined, platform_events_pb2.SeatJoined)
            self.seat(joined)
        return True

    def seat(self, joined: platform_events_pb2.SeatJoined) -> None:
        """Fold a SeatJoined (the board folds the one it appends with MatchCreated here)."""
        self.seats[joined.seat] = joined.display_name
        self.seat_tokens[joined.seat] = joined.join_id


def fold_board_events(envelopes: list[envelope_pb2.EventEnvelope]) -> FoldedMatch:
    """A match folded from its board envelopes, first to last."""
    if not envelopes or not is_a(envelopes[0], platform_events_pb2.MatchCreated):
        raise ValueError("a match's board events start with MatchCreated")
    match = FoldedMatch.created(envelopes[0])
    for envelope in envelopes[1:]:
        match.fold(envelope)
    return match
