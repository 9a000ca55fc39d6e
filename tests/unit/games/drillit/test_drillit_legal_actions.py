"""legal_actions is exactly the set of actions decide accepts: checked on states met in
seeded matches against a broad generator of candidate actions."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from services.games.chance import SeededChance
from services.games.contract import AwaitingChance, AwaitingPlayers, RuleViolation
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import DrillitState, Phase
from services.games.drillit.tunnels import canonical_rotation, frontier
from services.games.playout import random_policy, seeds_for

PLAYERS = ("p1", "p2", "p3")
ROOMS = (0, *CONTENT.rooms)


def candidates(state: DrillitState) -> list[Any]:
    cells = set(frontier(state)) | {Hex(1, 0), Hex(5, 5)}
    out: list[Any] = [act.Move(r) for r in ROOMS]
    out += [act.Carry(r, p) for r in ROOMS for p in PLAYERS]
    spaces = range(CONTENT.radar_spaces + 1)
    out += [act.Attack((s,)) for s in spaces]
    out += [act.Attack(c) for c in itertools.combinations_with_replacement(spaces, 2)]
    out += [act.Repair(), act.Extinguish(), act.EndTurn(), act.UseBlueOnArmor()]
    out += [act.UseBlueOnFires(r) for r in ROOMS] + [act.UseRedBomb(s) for s in CONTENT.sectors]
    out += [act.UseYellowTurbo(), act.TakePlanB()]
    out += [act.Excavate(p, c, k) for p in PLAYERS for c in cells for k in range(6)]
    out += [act.PlaceTurboPiece(c, k) for c in cells for k in range(6)]
    return out


def canonical(state: DrillitState, action: Any) -> Any:
    if isinstance(action, act.Excavate) and action.owner in state.hands:
        k = canonical_rotation(state.hands[action.owner], action.rotation)
        return act.Excavate(action.owner, action.cell, k)
    if isinstance(action, act.PlaceTurboPiece) and state.turbo_piece:
        k = canonical_rotation(state.turbo_piece, action.rotation)
        return act.PlaceTurboPiece(action.cell, k)
    return action


def accepted(state: DrillitState, player: str, action: Any) -> bool:
    try:
        GAME.decide(state, player, action)
    except RuleViolation:
        return False
    return True


@pytest.mark.parametrize("seed", range(6))
def test_legal_actions_are_exactly_the_accepted_actions(seed: int) -> None:
    chance = SeededChance(f"legal-{seed}", *seeds_for(seed))
    policy = random_policy(seed)
    options = {
        "difficulty": "hard",
        "distance": ("short", "medium", "long")[seed % 3],
        "exit": "12"[seed % 2],
        "plan_b": ("allowed", "off")[seed // 3],
    }
    state = GAME.fold(GAME.setup(PLAYERS, options))
    checked = 0
    for _ in range(400):
        step = GAME.next_step(state)
        if isinstance(step, AwaitingChance):
            state = GAME.fold(GAME.resolve(state, chance.resolve(step.request)), state)
            continue
        if not isinstance(step, AwaitingPlayers):
            break
        player = step.players[0]
        legal = GAME.legal_actions(state, player)
        if state.phase in (Phase.ACTIONS, Phase.TURBO) and checked < 25:
            checked += 1
            accepted_set = {
                canonical(state, a) for a in candidates(state) if accepted(state, player, a)
            }
            assert accepted_set == set(legal)
            others = [p for p in PLAYERS if p != player]
            assert all(GAME.legal_actions(state, p) == () for p in others)
        state = GAME.fold(GAME.decide(state, player, policy(state, player, legal)), state)
    assert checked > 0
