"""Drillit! as a contract ``Game``: wires setup, the turn flow, actions and views."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    ChanceOutcome,
    Choices,
    DeckShuffled,
    Described,
    DiceRolled,
    DrawCards,
    Game,
    MalformedAction,
    OptionSpec,
    RollDice,
    RuleViolation,
    ShuffleDeck,
    ViewPolicy,
    random_view_policy,
)
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit import naming
from services.games.drillit import render as text
from services.games.drillit.actions import ACTION_TYPES
from services.games.drillit.bots import greedy_view_policy
from services.games.drillit.content import CONTENT
from services.games.drillit.events import EVENT_TYPES
from services.games.drillit.evolve import evolve
from services.games.drillit.flow import advance_folded, missing_pieces, next_step
from services.games.drillit.goblin_attack import resolve_attack_die
from services.games.drillit.picture import draw as draw_picture
from services.games.drillit.player_actions import (
    decide_turn_action,
    listed_turn_action,
    place_turbo_piece,
    turbo_choices,
    turn_choices,
)
from services.games.drillit.setup_rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    OPTIONS,
    gnome_placed,
    match_set_up,
    resolve_setup_draw,
    resolve_start_roll,
    room_has_space,
    setup_chooser,
)
from services.games.drillit.state import ACTIONS, FIRE, SETUP, TURBO, DrillitState
from services.games.drillit.turn_start import resolve_fire_die
from services.games.drillit.view import DrillitView, describe_action, make_view

#: states are immutable: one empty state opens every match (building one runs the
#: dataclass's ``__init__`` over all its fields)
_INITIAL_STATE = DrillitState()
#: (a tuple, not ``A | B``: that union would be built again at every decision)
_SETUP_CHOICES = (act.ChooseStartRoom, act.ChooseStartingPlayer)

#: the turn choices handed out last: (state, player, choices). An action that is the
#: entry last read from them (``Choices.last_read``), asked of that very state (states
#: never change, and this one is held here) for that player, is one the rules allow: it
#: needs no checks. One tuple, replaced whole, so concurrent callers never mix two.
_offered: tuple[DrillitState | None, str, Choices | None] = (None, "", None)


@functools.lru_cache(maxsize=256)
def _shuffled(deck: str, size: int) -> ev.PileShuffled:
    """(events are immutable: one instance of each serves every match; building a frozen
    event costs several times the cache's look-up)"""
    return ev.PileShuffled(deck, size)


class Drillit(Game[DrillitState]):
    name: ClassVar[str] = "drillit"
    title: ClassVar[str] = "Drillit!"
    rules_version: ClassVar[str] = CONTENT.rules_version
    min_players: ClassVar[int] = MIN_PLAYERS
    max_players: ClassVar[int] = MAX_PLAYERS
    action_types: ClassVar[tuple[type, ...]] = ACTION_TYPES
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    view_type: ClassVar[type] = DrillitView
    options: ClassVar[tuple[OptionSpec, ...]] = OPTIONS
    #: the Event card turned from the face-down Event Deck at the end of a turn
    revealing_events: ClassVar[frozenset[type] | None] = frozenset({ev.EventCardRevealed})

    def initial_state(self) -> DrillitState:
        return _INITIAL_STATE

    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        return match_set_up(players, options)

    evolve = staticmethod(evolve)

    # the flow's function itself (no method delegating to it): the command handler and
    # playouts ask for the step several times per action
    next_step = staticmethod(next_step)

    # --- players -------------------------------------------------------------------

    def decide(self, state: DrillitState, player: str, action: Any) -> list[Any]:
        return self.decide_folded(state, player, action)[0]

    def decide_folded(
        self, state: DrillitState, player: str, action: Any
    ) -> tuple[list[Any], DrillitState]:
        """The events and the state after them, which ``advance`` folds on its way (so the
        command handler does not fold them again)."""
        offered_state, offered_player, offered = _offered
        if (
            offered_state is state
            and offered is not None
            and offered.last_read is action
            and offered_player == player
        ):  # listed by ``legal_choices`` (a policy's pick)
            return advance_folded(state, listed_turn_action(state, player, action))
        return advance_folded(state, self._decide(state, player, action))

    def _decide(self, state: DrillitState, player: str, action: Any) -> list[Any]:
        if isinstance(action, _SETUP_CHOICES):
            return self._setup_choice(state, player, action)
        phase = state.phase
        if (phase != ACTIONS and phase != TURBO) or player != state.active:
            who = state.active if phase in (ACTIONS, TURBO) else None
            if who is not None and player != who:
                raise RuleViolation("NOT_YOUR_TURN", f"It is {who}'s turn.")
            raise RuleViolation("NOT_NOW", "Nobody may act now; the game is resolving.")
        if phase == TURBO:
            if not isinstance(action, act.PlaceTurboPiece):
                raise RuleViolation("TURBO", "Place the Turbo's Path piece first.")
            return place_turbo_piece(state, action)
        if isinstance(action, act.PlaceTurboPiece):
            raise RuleViolation("NO_TURBO", "No Turbo is running.")
        return decide_turn_action(state, player, action)

    def _setup_choice(self, state: DrillitState, player: str, action: Any) -> list[Any]:
        chooser = setup_chooser(state) if state.phase == SETUP else None
        if isinstance(action, act.ChooseStartRoom):
            if state.choosing_room is None or state.phase != SETUP:
                raise RuleViolation("NOT_NOW", "Only a player who rolled a 6 chooses a room.")
            if player != chooser:
                raise RuleViolation("NOT_YOUR_CHOICE", f"{chooser} chooses a start room now.")
            if action.room not in CONTENT.rooms:
                raise MalformedAction("BAD_ROOM", "Start in one of the rooms 1 to 5.")
            if not room_has_space(state, action.room):
                raise RuleViolation("ROOM_FULL", f"Room {action.room} already holds 2 Gnomes.")
            return [gnome_placed(player, action.room)]
        if chooser is None or state.choosing_room is not None:
            raise RuleViolation("NOT_NOW", "The starting player is not being chosen now.")
        if player != chooser:
            raise RuleViolation("NOT_YOUR_CHOICE", f"{chooser} announces who starts.")
        if action.player not in state.players:
            raise MalformedAction("BAD_PLAYER", f"{action.player!r} does not play.")
        return [ev.StartingPlayerChosen(action.player, "chosen by the players")]

    def legal_actions(self, state: DrillitState, player: str) -> tuple[Any, ...]:
        return tuple(self.legal_choices(state, player))

    def legal_choices(self, state: DrillitState, player: str) -> Sequence[Any]:
        """The legal actions, the Excavate ones (most of them) built only when read."""
        global _offered
        step = next_step(state)
        if not isinstance(step, AwaitingPlayers) or player not in step.players:
            return ()
        phase = state.phase
        if phase == ACTIONS:
            choices = turn_choices(state, player)
            _offered = (state, player, choices)
            return choices
        if phase == SETUP:
            if state.choosing_room is not None:
                return tuple(
                    act.ChooseStartRoom(r) for r in CONTENT.rooms if room_has_space(state, r)
                )
            return tuple(act.ChooseStartingPlayer(p) for p in state.players)
        if phase == TURBO:
            return turbo_choices(state)
        return turn_choices(state, player)

    # --- chance --------------------------------------------------------------------

    def resolve(self, state: DrillitState, outcome: ChanceOutcome) -> list[Any]:
        return self.resolve_folded(state, outcome)[0]

    def resolve_folded(
        self, state: DrillitState, outcome: ChanceOutcome
    ) -> tuple[list[Any], DrillitState]:
        """The events and the state after them (see ``decide_folded``)."""
        step = next_step(state)
        if not isinstance(step, AwaitingChance):
            raise RuleViolation("NO_CHANCE_PENDING", "No dice or cards are awaited now.")
        return advance_folded(state, self._resolve(state, step.request, outcome))

    def _resolve(self, state: DrillitState, request: Any, outcome: ChanceOutcome) -> list[Any]:
        # tests of the outcome's type, not ``match (request, outcome)``: a match builds the
        # pair and tries each case's class patterns in turn, at every chance node
        if isinstance(outcome, DiceRolled):
            values = outcome.values
            if isinstance(request, RollDice) and len(values) == 1 and 1 <= values[0] <= 6:
                if state.phase == SETUP:
                    return resolve_start_roll(state, values[0])
                if state.phase == FIRE:
                    return resolve_fire_die(state, values[0])
                return resolve_attack_die(state, values[0])
        elif isinstance(outcome, CardsDrawn):
            cards = outcome.cards
            if (
                isinstance(request, DrawCards)
                and outcome.deck == request.deck
                and len(cards) == request.count
            ):
                return self._drawn(state, request.deck, cards)
        elif (
            isinstance(outcome, DeckShuffled)
            and isinstance(request, ShuffleDeck)
            and outcome.deck == request.deck
        ):
            return [_shuffled(request.deck, outcome.size)]
        raise RuleViolation("UNEXPECTED_OUTCOME", f"{outcome!r} does not answer {request!r}.")

    def _drawn(self, state: DrillitState, deck: str, cards: tuple[str, ...]) -> list[Any]:
        if state.phase == SETUP:
            return resolve_setup_draw(state, deck, cards)
        if state.phase == TURBO:
            return [ev.TurboPieceDrawn(cards[0], state.path_pile - 1)]
        drawers = missing_pieces(state)[: len(cards)]
        pieces = dict(zip(drawers, cards, strict=True))
        return [ev.PathPiecesDrawn(pieces, state.path_pile - len(cards))]

    # --- reading -------------------------------------------------------------------

    def view(self, state: DrillitState, viewer: str | None) -> DrillitView:
        return make_view(state, viewer)

    def statistics(self, state: DrillitState) -> dict[str, float]:
        return {
            "turns": float(state.turn),
            "turns_survived": float(state.turn),
            "damage_taken": float(state.damage),
            "permanent_damage": float(state.permanent_damage),
            "goblins_defeated": float(state.goblins_defeated),
            "crystals_used": float(state.crystals_used),
            "won": 1.0 if state.won else 0.0,
        }

    def bots(self) -> Mapping[str, Callable[[int], ViewPolicy]]:
        return {"random": random_view_policy, "greedy": greedy_view_policy}

    def render(self, view: Any) -> str:
        return text.render(view)

    def picture(self, view: Any) -> str | None:
        return draw_picture(view)

    def seat_summaries(self, state: DrillitState) -> list[dict[str, str | float]]:
        # cooperative: every seat shares the result; the character is the seat's own
        return [
            {
                "seat": player,
                "won": 1.0 if state.won else 0.0,
                "score": float(state.turn),  # turns survived
                "character": state.characters.get(player, ""),
                "difficulty": state.difficulty,
                "distance": state.distance,
            }
            for player in state.players
        ]

    def describe(self, view: Any, action: Any) -> Described:
        return naming.describe(view, action)

    def describe_action(self, action: Any) -> str:
        return describe_action(action)
