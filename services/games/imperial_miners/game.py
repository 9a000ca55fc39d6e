"""Imperial Miners as a contract ``Game``: wires setup, flow, decisions, chance, views.

Where the rulebook extract leaves a choice open, the content pack's ``house_choices``
lists what is done and the clause it fills. Where each is implemented:
- Placement geometry, and Level I open anywhere (a finite, complete list): mine.py.
- The Event deck (the top 10 of 18), the deal, draws cut short and the forced Level I
  play with nothing to draw (no card that round): flow.py.
- The chain: the placed card, then always one card directly above (the player picks when
  two lie above), up to the Surface board; Mine cards' effects are optional, climbing and
  the Surface board's effect (one of 3, chosen) are not; a caved-in card reached by the
  chain only loses its token: decide.py, flow.py.
- Machinery, the Progress track and "as far as possible": effects.py.
- Tie-break and solo bands: rules.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, ClassVar

from services.games.contract import (
    ChanceOutcome,
    Described,
    Game,
    MalformedAction,
    OptionSpec,
    ViewPolicy,
    random_view_policy,
)
from services.games.imperial_miners import events as ev
from services.games.imperial_miners.actions import ACTION_TYPES
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.decide import decide_folded, legal, legal_choices
from services.games.imperial_miners.events import EVENT_TYPES
from services.games.imperial_miners.evolve import evolve
from services.games.imperial_miners.flow import next_step, resolve_folded
from services.games.imperial_miners.mine import complete_carts, faction_count
from services.games.imperial_miners.picture import draw as draw_picture
from services.games.imperial_miners.rules import final_scores
from services.games.imperial_miners.state import ImperialMinersState
from services.games.imperial_miners.view import ImperialMinersView, make_view

OPTIONS = (
    OptionSpec(
        "first_game",
        "false",
        "first game: draw 2 Level I, 2 Level II and 2 Level III cards and keep all 6",
        ("false", "true"),
    ),
)


class ImperialMiners(Game[ImperialMinersState]):
    name: ClassVar[str] = "imperial_miners"
    title: ClassVar[str] = "Imperial Miners"
    rules_version: ClassVar[str] = CONTENT.rules_version
    min_players: ClassVar[int] = CONTENT.min_players
    max_players: ClassVar[int] = CONTENT.max_players
    action_types: ClassVar[tuple[type, ...]] = ACTION_TYPES
    event_types: ClassVar[tuple[type, ...]] = EVENT_TYPES
    view_type: ClassVar[type] = ImperialMinersView
    options: ClassVar[tuple[OptionSpec, ...]] = OPTIONS
    #: the secretly chosen cards shown together, the round's Event turned, Mine cards
    #: drawn (a draw that ran dry too)
    revealing_events: ClassVar[frozenset[type] | None] = frozenset(
        {ev.CardsRevealed, ev.EventRevealed, ev.MineCardsDrawn, ev.DrawCutShort}
    )

    def initial_state(self) -> ImperialMinersState:
        return ImperialMinersState()

    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        players = tuple(players)
        if not self.min_players <= len(players) <= self.max_players:
            raise MalformedAction("PLAYER_COUNT", "Imperial Miners is for 1 to 5 players.")
        if len(set(players)) != len(players):
            raise MalformedAction("DUPLICATE_PLAYER", "Each player takes one seat.")
        unknown = set(options) - {o.name for o in OPTIONS}
        if unknown:
            raise MalformedAction("UNKNOWN_OPTION", f"Unknown option(s): {', '.join(unknown)}.")
        first_game = options.get("first_game", "false")
        if first_game not in ("true", "false"):
            raise MalformedAction("BAD_OPTION", "first_game is true or false.")
        return [ev.MatchSetUp(players, first_game == "true", CONTENT.rules_version)]

    def evolve(self, state: ImperialMinersState, event: Any) -> ImperialMinersState:
        return evolve(state, event)

    # the flow's function itself (no method delegating to it): the command handler and
    # playouts ask for the step several times per action
    next_step = staticmethod(next_step)

    def decide(self, state: ImperialMinersState, player: str, action: Any) -> list[Any]:
        return decide_folded(state, player, action)[0]

    # the compiled functions themselves (no method delegating to them): every action and
    # chance outcome of every match comes through them. ``decide_folded`` and
    # ``resolve_folded`` return the events and the state ``advance`` folded them into.
    decide_folded = staticmethod(decide_folded)
    resolve_folded = staticmethod(resolve_folded)

    # (the compiled function itself: playouts and search ask for it at every decision)
    legal_choices = staticmethod(legal_choices)

    def legal_actions(self, state: ImperialMinersState, player: str) -> tuple[Any, ...]:
        return legal(state, player)

    def resolve(self, state: ImperialMinersState, outcome: ChanceOutcome) -> list[Any]:
        return resolve_folded(state, outcome)[0]

    def view(self, state: ImperialMinersState, viewer: str | None) -> ImperialMinersView:
        return make_view(state, viewer)

    def statistics(self, state: ImperialMinersState) -> dict[str, float]:
        scores, carts = final_scores(state) if state.players else ({}, {})
        stats: dict[str, float] = {"rounds": float(state.round), "turns": float(state.round)}
        for p in state.players:
            stats[f"vp.{p}"] = float(scores[p])
            stats[f"carts.{p}"] = float(carts[p])
        return stats

    def seat_summaries(self, state: ImperialMinersState) -> list[dict[str, str | float]]:
        scores, _ = final_scores(state)
        rows: list[dict[str, str | float]] = []
        for p in state.players:
            mine = state.mine(p)
            counts = {f: faction_count(mine, f) for f in CONTENT.factions}
            row: dict[str, str | float] = {
                "seat": p,
                "won": 1.0 if state.results.get(p) == "won" else 0.0,
                "score": float(scores[p]),
                "faction": dominant_faction(counts),
                "carts": float(complete_carts(mine)),
            }
            row.update({f"cards_{f}": float(n) for f, n in counts.items()})
            rows.append(row)
        return rows

    def bots(self) -> Mapping[str, Callable[[int], ViewPolicy]]:
        from services.games.imperial_miners.bots import greedy_view_policy

        return {"random": random_view_policy, "greedy": greedy_view_policy}

    def render(self, view: Any) -> str:
        from services.games.imperial_miners.render import render

        return render(view)

    def picture(self, view: Any) -> str | None:
        return draw_picture(view)

    def describe(self, view: Any, action: Any) -> Described:
        from services.games.imperial_miners.naming import describe

        return describe(view, action)

    def describe_action(self, action: Any) -> str:
        from services.games.imperial_miners.render import describe_action

        return describe_action(action)


def dominant_faction(counts: Mapping[str, int]) -> str:
    """The faction with most cards in a Mine (ties: the first in content order)."""
    best = max(counts.values(), default=0)
    if best == 0:
        return "none"
    return next(f for f, n in counts.items() if n == best)
