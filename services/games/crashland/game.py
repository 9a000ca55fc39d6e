"""The Crashland engine: the contract's methods, delegating to the rules and the view."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services.games.contract import (
    Described,
    Game,
    MalformedAction,
    ViewPolicy,
    random_view_policy,
)
from services.games.crashland import actions as act
from services.games.crashland import bots, naming, rules
from services.games.crashland import events as ev
from services.games.crashland import render as text
from services.games.crashland.evolve import evolve
from services.games.crashland.picture import draw as draw_picture
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CrashlandView, view


class Crashland(Game[CrashlandState]):
    name = "crashland"
    title = "Crashland"
    rules_version = "crashland-1"
    min_players = 1
    max_players = 1
    action_types = act.ACTION_TYPES
    event_types = ev.EVENT_TYPES
    view_type = CrashlandView
    chance_services = frozenset({"decks"})  # it shuffles and draws, and rolls no dice
    renamed_events = {"GameStarted": ev.MatchSetUp}
    #: a face-down map card turned (and the Fuel Tank it shows): no taking back the move
    revealing_events = frozenset({ev.CardRevealed, ev.FuelTankLocated})

    def initial_state(self) -> CrashlandState:
        return CrashlandState()

    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        if len(players) != 1 or not players[0]:
            raise MalformedAction("PLAYERS", "Crashland is a solitaire game: one player.")
        if options:
            unknown = ", ".join(sorted(options))
            raise MalformedAction("UNKNOWN_OPTION", f"Crashland has no options ({unknown}).")
        return [ev.MatchSetUp(players[0], {})]

    # The rules' functions themselves (no method of their own delegating to them): the
    # command handler and playouts call these several times per action.
    evolve = staticmethod(evolve)
    next_step = staticmethod(rules.next_step)
    decide = staticmethod(rules.decide)
    resolve = staticmethod(rules.resolve)
    decide_folded = staticmethod(rules.decide_folded)
    resolve_folded = staticmethod(rules.resolve_folded)
    legal_actions = staticmethod(rules.legal_actions)
    legal_choices = staticmethod(rules.legal_choices)

    def view(self, state: CrashlandState, viewer: str | None) -> CrashlandView:
        return view(state, viewer)

    def statistics(self, state: CrashlandState) -> dict[str, float]:
        return {
            "turns": float(state.turn),
            "oxygen": float(state.oxygen),
            "battery": float(state.battery),
            "tanks_collected": float(len(state.collected)),
            "cards_explored": float(len(state.explored)),
        }

    def bots(self) -> Mapping[str, Callable[[int], ViewPolicy]]:
        return {"random": random_view_policy, "greedy": bots.greedy_view_policy}

    def render(self, view: Any) -> str:
        return text.render(view)

    def picture(self, view: Any) -> str | None:
        return draw_picture(view)

    def seat_summaries(self, state: CrashlandState) -> list[dict[str, str | float]]:
        if state.player is None:
            return []
        return [
            {
                "seat": state.player,
                "won": 1.0 if state.result == "won" else 0.0,
                "score": float(len(state.collected)),
            }
        ]

    def describe(self, view: Any, action: Any) -> Described:
        return naming.describe(view, action)

    def describe_action(self, action: Any) -> str:
        match action:
            case act.Move(direction=direction, pay=pay):
                return (
                    f"move {getattr(direction, 'value', direction)} ({getattr(pay, 'value', pay)})"
                )
            case act.EndMovement():
                return "end movement"
            case act.DiscardEquipment(card=card):
                return f"discard {card}"
            case act.KeepHand():
                return "keep the hand (end the events phase)"
            case act.SpendDomeShelter(boost=boost):
                gain = "+2 both" if boost == "both" else f"+3 {getattr(boost, 'value', boost)}"
                return f"spend Dome Shelter pair ({gain})"
            case act.SpendJetpack(destination=d):
                return f"spend Jetpack pair → ({d.row},{d.column})"
            case act.SpendSolarRecharge():
                return "spend Solar Recharge pair (+2 battery)"
            case act.SpendSatelliteUplink():
                return "spend Satellite Uplink pair (see the next 6 cards)"
            case act.ArrangeUplink(order=order):
                return "put back uplink cards: " + ", ".join(order)
            case act.EndTurn():
                return "end turn (systems check)"
        return repr(action)


__all__ = ["Crashland"]
