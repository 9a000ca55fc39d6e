"""Drillit! as a contract ``Game``: wires setup, the turn flow, actions and views."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from services.games.contract import (
    ChanceOutcome,
    Described,
    Game,
    OptionSpec,
    ViewPolicy,
    random_view_policy,
)
from services.games.drillit import events as ev
from services.games.drillit import naming, steps
from services.games.drillit import render as text
from services.games.drillit.actions import ACTION_TYPES
from services.games.drillit.bots import greedy_view_policy
from services.games.drillit.content import CONTENT
from services.games.drillit.events import EVENT_TYPES
from services.games.drillit.evolve import evolve
from services.games.drillit.flow import next_step
from services.games.drillit.picture import draw as draw_picture
from services.games.drillit.setup_rules import (
    MAX_PLAYERS,
    MIN_PLAYERS,
    OPTIONS,
    match_set_up,
)
from services.games.drillit.state import DrillitState
from services.games.drillit.view import DrillitView, describe_action, make_view

#: states are immutable: one empty state opens every match (building one runs the
#: dataclass's ``__init__`` over all its fields)
_INITIAL_STATE = DrillitState()


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

    # the compiled functions themselves (no method delegating to them): the command
    # handler asks at every step (see steps)
    decide_folded = staticmethod(steps.decide_folded)

    def legal_actions(self, state: DrillitState, player: str) -> tuple[Any, ...]:
        return tuple(self.legal_choices(state, player))

    legal_choices = staticmethod(steps.legal_choices)

    # --- chance --------------------------------------------------------------------

    def resolve(self, state: DrillitState, outcome: ChanceOutcome) -> list[Any]:
        return self.resolve_folded(state, outcome)[0]

    resolve_folded = staticmethod(steps.resolve_folded)

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
