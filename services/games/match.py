"""A match, as its events have made it: the one type for a match in every process.

The command handler decides on a ``Match`` (the board's, a playout's), and every reader
folds a match's events into one (services/adapters/folding.py: the board after a
restart, the projector, scoring, a replay, a picture, ``tabletop replay``). Its wire form
is the ``ViewUpdate`` (services/adapters/views.py): the board sends it with its
acknowledgements, the projector publishes it, and a gateway decodes it back into a
``Match`` to make the views its clients ask for, in one place (``views.view``).

Plain data: no protobuf, no Kafka, nothing of gRPC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from services.games.clock import Clock
from services.games.contract import AwaitingPlayers, Game
from services.games.frozen import quick_init_all

#: ``Match.last_mover`` after an undo: who moved before it is in the log
TAKEN_BACK = "*"


@dataclass(frozen=True)
class Accepted:
    """The reply to an accepted command; a retry gets it again with ``duplicate``."""

    version: int
    events_appended: int
    finished: bool
    duplicate: bool = False


@dataclass(slots=True)
class Match:
    match_id: str
    game: Game[Any]
    players: tuple[str, ...]
    #: the engine's state after the match's last whole command
    state: Any
    #: the number of the match's board events
    version: int = 0
    finished: bool = False
    results: dict[str, str] = field(default_factory=dict)
    end_reason: str = ""
    options: dict[str, str] = field(default_factory=dict)
    #: provenance: the seeds' commitments (MatchCreated) and, at the end, the seeds
    #: (dice and decks reveal them; "" until then, and for a service the game does not use)
    dice_commitment: str = ""
    decks_commitment: str = ""
    dice_seed: str = ""
    decks_seed: str = ""
    #: the lobby (MatchCreated.lobby, SeatJoined): how the match is offered, who sits where
    private: bool = False
    bots: tuple[str, ...] = ()
    #: bot seat → its level (easy, medium, hard), where the creator gave one
    bot_levels: dict[str, str] = field(default_factory=dict)
    creator: str = ""
    #: joined seat → display name
    seats: dict[str, str] = field(default_factory=dict)
    #: joined seat → the id of its newest token (older ones no longer act)
    seat_tokens: dict[str, str] = field(default_factory=dict)
    #: joined seat → the player who holds it (seats joined before players: none)
    holders: dict[str, str] = field(default_factory=dict)
    #: seat whose holder gave it up → "left" (waiting to be handed over) or "open" (handed
    #: over for a new player to join); gone once the seat is joined again
    vacated: dict[str, str] = field(default_factory=dict)
    #: seat handed over → what its game keeps from the new holder of what the old one saw
    #: (services/games/handover.py)
    sealed: dict[str, str] = field(default_factory=dict)
    #: every seat was joined once (the lobby is over)
    started: bool = False
    #: the lobby's time after its last seat event (MatchLobby.open_s; 0: it never closes)
    #: and when it closes unless it starts (unix seconds, recorded by the board; 0 once
    #: started)
    open_s: int = 0
    open_until: int = 0
    #: the time control's clock (the ``clock`` option; None: untimed), advanced at the end
    #: of each recorded command (services/adapters/folding.py)
    clock: Clock | None = None
    #: the actor of the match's last game event ("" after another platform event; seat
    #: events leave it; TAKEN_BACK after an undo): the board reads the log to tell whether
    #: a seat may take its move back only when this names that seat or TAKEN_BACK
    last_mover: str = ""
    #: the command handler's: command id → the reply it got, so a retry appends nothing
    replies: dict[str, Accepted] = field(default_factory=dict)
    #: command id → (player, action) of the commands this process accepted
    commands: dict[str, tuple[str, Any]] = field(default_factory=dict)

    def seat(self, seat: str, display_name: str, token_id: str, player_id: str = "") -> None:
        """A seat joined (again) by ``player_id``: its newest token is ``token_id``."""
        self.seats[seat] = display_name
        self.seat_tokens[seat] = token_id
        self.vacated.pop(seat, None)
        if player_id:
            self.holders[seat] = player_id
        if not self.started and all(p in self.seats for p in self.players):
            self.started, self.open_until = True, 0

    def leave(self, seat: str) -> None:
        """The seat's holder gave it up: none of its tokens acts or sees any more."""
        self.seat_tokens.pop(seat, None)
        self.holders.pop(seat, None)
        self.vacated[seat] = "left"

    def hand_over(self, seat: str, to: str, level: str, sealed: str) -> None:
        """An abandoned seat given to a bot at ``level`` (``to`` "bot": the bots service
        plays the seats with a level) or opened for a new player (``to`` "open");
        ``sealed``: what the game keeps from its new holder."""
        if to == "bot":
            self.vacated.pop(seat, None)
            self.bot_levels[seat] = level
            if seat not in self.bots:
                self.bots = (*self.bots, seat)
        else:
            self.vacated[seat] = "open"
        if sealed:
            self.sealed[seat] = sealed

    def seat_state(self, seat: str) -> str:
        """How a seat stands: "held", "bot", "left", "open", or "" (never joined)."""
        vacated = self.vacated.get(seat)
        if vacated:
            return vacated
        if seat in self.bot_levels:
            return "bot"
        return "held" if seat in self.seats else ""

    def seat_states(self) -> dict[str, str]:
        """Each seat joined (or handed over) → ``seat_state``."""
        states = {p: self.seat_state(p) for p in self.players}
        return {p: s for p, s in states.items() if s}

    def awaited(self) -> tuple[str, ...]:
        """The seats whose clocks run: those the game waits for, once the lobby is over."""
        if self.finished or not self.started:
            return ()
        step = self.game.next_step(self.state)
        return step.players if isinstance(step, AwaitingPlayers) else ()

    def superseded(self, player: str, seat_token: str) -> bool:
        """True if ``seat_token`` (when given) is not the seat's newest token (a seat its
        holder left has none)."""
        return bool(seat_token) and self.seat_tokens.get(player) != seat_token


quick_init_all((Accepted,))
