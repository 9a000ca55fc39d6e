"""Bots: ``random`` (uniform over legal actions) and ``greedy`` (one-step, task-valued:
stop the worst threat, dig toward the exit, take Plan B once the exit is cut off).

Both decide from what their player sees. ``greedy_view_policy`` is the view-based bot a
networked client plays with (player's ``DrillitView``, player id, legal actions);
``BOTS`` gives the state-based policies of in-process simulations, which only pass
``make_view(state, player)`` on to the same decision. The greedy bot's scoring reads
``public_state(view)``: the table rebuilt from the view, hidden information left out.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Callable, Sequence
from typing import Any

from services.games.drillit import actions as act
from services.games.drillit.characters import move_cost
from services.games.drillit.content import CONTENT
from services.games.drillit.crystals import radar_goblins
from services.games.drillit.hexgrid import Hex
from services.games.drillit.public_state import public_state
from services.games.drillit.state import DrillitState, Phase
from services.games.drillit.tunnels import (
    distance_field,
    frontier,
    is_free,
    openings,
    piece_openings,
    plan_b_exit,
    reaches_exit,
)
from services.games.drillit.view import DrillitView, make_view
from services.games.playout import Policy, random_policy

#: chooses an action for a player from that player's view and legal actions
ViewPolicy = Callable[[DrillitView, str, Sequence[Any]], Any]

FAR = 99
STOP = 3.0  # below this value an action is not worth an Action Point


def goblin_threat(state: DrillitState, sector: int, space: int) -> float:
    """How much one Goblin at ``space`` of ``sector`` endangers the Tank."""
    if space == 0:
        return 100.0  # the next Goblin Advance costs Permanent Damage
    if space == 1:
        return 60.0 if sector in state.armor_destroyed else 35.0
    return 12.0 if space == 2 else 4.0


class _Digging:
    """Progress toward the exit, measured once per decision."""

    def __init__(self, state: DrillitState) -> None:
        self.state = state
        self.field = distance_field(state)
        self.occupied = piece_openings(state)
        ends = frontier(state)
        self.best = min((self.field.get(c, FAR) for c in ends), default=FAR)

    def value(self, piece: str, cell: Hex, rotation: int) -> float:
        shape = openings(piece, rotation)
        if reaches_exit(self.state, cell, shape):
            return 10_000.0
        ends = [cell.neighbour(d) for d in shape]
        new = min(
            (self.field.get(n, FAR) for n in ends if is_free(self.state, n, self.occupied)),
            default=FAR,
        )
        # dig toward the exit; a piece that opens a new best front counts extra
        value = max(1.0, 40.0 - 3.0 * new)
        if new < self.best:
            value += 30.0 + 10.0 * min(self.best - new, 3)
        return value


def _crystal_pressure(state: DrillitState) -> float:
    over = state.crystal_total - state.storage_limit
    return 45.0 if over > 0 else 10.0 if over == 0 else 0.0


class Greedy:
    """The greedy bot. It is called with a view (``choose``) or, in simulations, with the
    engine state (``__call__``, which passes on ``make_view(state, player)``); either way
    ``decide`` scores the actions on ``public_state(view)``: only what the player sees."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def __call__(self, state: DrillitState, player: str, legal: Sequence[Any]) -> Any:
        """As a simulation policy: decide from what ``player`` sees of ``state``."""
        return self.choose(make_view(state, player), player, legal)

    def choose(self, seen: DrillitView, player: str, legal: Sequence[Any]) -> Any:
        """As a view-based policy."""
        return self.decide(public_state(seen), player, legal)

    def decide(self, state: DrillitState, player: str, legal: Sequence[Any]) -> Any:
        """The decision. It reads only the fields ``public_state`` fills (tests check that
        it decides the same on the engine's full state)."""
        if state.phase == Phase.SETUP:
            return legal[0]
        digging = _Digging(state)
        if state.phase == Phase.TURBO:
            piece = state.turbo_piece or ""
            return max(legal, key=lambda a: digging.value(piece, a.cell, a.rotation))
        scored = [(self.value(state, player, a, digging), i) for i, a in enumerate(legal)]
        best, index = max(scored)
        return legal[index] if best >= STOP else act.EndTurn()

    def room_value(self, state: DrillitState, player: str, room: int, digging: _Digging) -> float:
        """The best thing ``player`` could do only from ``room``."""
        if room == CONTENT.centre:
            return 0.0
        sector = CONTENT.faces_sector[room]
        goblins = state.goblins(sector)
        values = [goblin_threat(state, sector, s) for s, n in enumerate(goblins) if n > 0]
        if room in state.armor_destroyed:
            values.append(self.repair_value(state, sector))
        fires = state.fires.get(room, 0)
        if fires:
            values.append(self.fire_value(state, fires))
        for owner in state.occupants(room):
            piece = state.hands.get(owner)
            if owner != player and piece is not None and not state.trap:
                values.append(25.0)
        return max(values, default=0.0)

    def repair_value(self, state: DrillitState, sector: int) -> float:
        near = sum(state.goblins(sector)[1:3])
        return 40.0 + 15.0 * near + self.danger(state)

    def fire_value(self, state: DrillitState, fires: int) -> float:
        return (70.0 if fires >= 2 else 22.0) + self.danger(state) / 2

    def danger(self, state: DrillitState) -> float:
        return 40.0 if state.damage >= CONTENT.life_track - 2 else 0.0

    def value(self, state: DrillitState, player: str, action: Any, digging: _Digging) -> float:
        match action:
            case act.EndTurn():
                return 0.0
            case act.Move(room=room):
                cost = move_cost(state, player, room)
                if state.action_points - cost < 1:
                    return 0.0
                here = self.room_value(state, player, state.rooms[player], digging)
                there = self.room_value(state, player, room, digging) - 6.0 * cost
                return there if there > here else 0.0
            case act.Attack(spaces=spaces):
                sector = CONTENT.faces_sector[state.rooms[player]]
                return sum(goblin_threat(state, sector, s) for s in spaces)
            case act.Repair():
                return self.repair_value(state, CONTENT.faces_sector[state.rooms[player]])
            case act.Extinguish():
                return self.fire_value(state, state.fires.get(state.rooms[player], 0))
            case act.Excavate(owner=owner, cell=cell, rotation=k):
                gain = digging.value(state.hands[owner], cell, k)
                crystal = -15.0 if state.crystal_total >= state.storage_limit else 2.0
                return gain + crystal + self.rng.random()
            case act.UseBlueOnFires(room=room):
                return self.fire_value(state, state.fires[room]) + _crystal_pressure(state)
            case act.UseBlueOnArmor():
                gain = sum(self.repair_value(state, r) for r in state.armor_destroyed)
                return gain - 20.0 + _crystal_pressure(state)
            case act.UseRedBomb(sector=sector):
                goblins = state.goblins(sector)
                threat = sum(goblin_threat(state, sector, s) * goblins[s] for s in (1, 2, 3))
                if not radar_goblins(state, sector):
                    return 0.0
                return threat - 10.0 + _crystal_pressure(state)
            case act.UseYellowTurbo():
                return (70.0 if digging.best < FAR else 0.0) + _crystal_pressure(state)
            case act.TakePlanB():
                return 500.0 if _plan_b_saves(state, digging) else 0.0
        return 0.0


def _plan_b_saves(state: DrillitState, digging: _Digging) -> bool:
    """The Exit piece is cut off and the other exit option can still be reached."""
    other = plan_b_exit(state)
    if digging.best < FAR or other is None:
        return False
    return _Digging(dataclasses.replace(state, exit=other)).best < FAR


def action_values(view: DrillitView, player: str, legal: Sequence[Any]) -> Callable[[Any], float]:
    """What the greedy bot makes of each action of ``legal`` in ``view``: a search's prior,
    to choose which of a dig's dozens of cells and turns to play out (its own choice is the
    best of them, or ending the turn when none is worth an Action Point)."""
    state = public_state(view)
    digging = _Digging(state)
    if state.phase == Phase.TURBO:
        piece = state.turbo_piece or ""
        return lambda action: digging.value(piece, action.cell, action.rotation)
    bot = Greedy(random.Random(0))
    return lambda action: bot.value(state, player, action, digging)


def greedy_policy(seed: int) -> Policy:
    return Greedy(random.Random(seed))


def greedy_view_policy(seed: int) -> ViewPolicy:
    """The greedy bot for networked play: it gets the player's view (as
    ``GAME.view(state, player)`` returns it) and picks what ``greedy_policy`` of the same
    seed would pick on the full state."""
    return Greedy(random.Random(seed)).choose


BOTS: dict[str, Callable[[int], Policy]] = {"random": random_policy, "greedy": greedy_policy}
