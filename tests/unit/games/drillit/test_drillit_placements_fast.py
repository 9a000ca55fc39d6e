"""``placements`` (where a Path piece may be laid: the Excavate and Turbo legal actions)
reads each candidate cell once into edge masks, on the map's cell numbers. This keeps the
slow references — the frontier from ``is_free`` over ``Hex``es, every frontier cell and
distinct rotation tried with ``connects``, as listing used to, and every cell of the map and
every rotation tried with ``can_place``, as ``decide`` checks — and compares them on every
state of many seeded matches, for every piece in a hand and every Turbo piece."""

from __future__ import annotations

import random

from services.games.chance import SeededChance
from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.drillit import GAME
from services.games.drillit.bots import greedy_policy
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex, distinct_rotations, rotate
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import (
    can_place,
    canonical_rotation,
    connects,
    frontier,
    is_free,
    layout,
    may_lay,
    piece_openings,
    placements,
)
from services.games.playout import random_policy, seeds_for

PLAYERS = ("p1", "p2", "p3")


def reference_frontier(state: DrillitState) -> tuple[Hex, ...]:
    """Free cells touching the Tank or an opening of a placed piece, in ``Hex`` order."""
    occupied = piece_openings(state)
    cells: set[Hex] = set()
    for tank in CONTENT.tank_cells:
        cells.update(tank.neighbours())
    for cell, shape in occupied.items():
        cells.update(cell.neighbour(d) for d in shape)
    return tuple(sorted(c for c in cells if is_free(state, c, occupied)))


def reference_placements(
    state: DrillitState, piece: str, anchor: Hex | None
) -> tuple[tuple[Hex, int], ...]:
    """Generate and test: candidate cells x distinct rotations, kept when they connect."""
    occupied = piece_openings(state)
    base = CONTENT.pieces[piece].openings
    cells = (
        reference_frontier(state)
        if anchor is None
        else tuple(c for c in anchor.neighbours() if is_free(state, c, occupied))
    )
    return tuple(
        (cell, k)
        for cell in cells
        for k in distinct_rotations(base)
        if connects(cell, rotate(base, k), occupied, anchor)
    )


def accepted_anywhere(state: DrillitState, piece: str, anchor: Hex | None) -> set[tuple[Hex, int]]:
    """Every cell of the map and every rotation ``can_place`` accepts, one per shape."""
    return {
        (cell, canonical_rotation(piece, k))
        for cell in layout(state).cells
        for k in range(6)
        if can_place(state, piece, cell, k, anchor)
    }


def states(seed: int) -> list[DrillitState]:
    """Every state of one seeded match where a player acts (random or greedy players,
    varied options)."""
    make = random_policy if seed % 2 else greedy_policy
    policies = {p: make(seed * 7 + i) for i, p in enumerate(PLAYERS)}
    options = {
        "difficulty": ("easy", "medium", "hard")[seed % 3],
        "distance": ("short", "medium", "long")[seed // 3 % 3],
    }
    chance = SeededChance(f"fast-{seed}", *seeds_for(seed))
    state = GAME.initial_state()
    seen = []

    def apply(batch: list[object]) -> None:
        nonlocal state
        for event in batch:
            state = GAME.evolve(state, event)
        seen.append(state)

    apply(GAME.setup(PLAYERS, options))
    while not isinstance(step := GAME.next_step(state), Finished):
        if isinstance(step, AwaitingChance):
            apply(GAME.resolve(state, chance.resolve(step.request)))
            continue
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        legal = GAME.legal_actions(state, player)
        apply(GAME.decide(state, player, policies[player](state, player, legal)))
    return seen


def test_placements_equal_generate_and_test_on_every_state_of_many_matches() -> None:
    compared = turbo = 0
    for seed in range(18):
        for index, state in enumerate(states(seed)):
            if not state.players or state.distance not in CONTENT.layouts:
                continue
            asks: list[tuple[str, Hex | None]] = [
                (piece, None) for piece in sorted(set(state.hands.values()))
            ]
            if state.turbo_piece is not None:
                asks.append((state.turbo_piece, state.turbo_anchor))
                turbo += 1
            assert frontier(state) == reference_frontier(state), seed
            for piece, anchor in asks:
                fast = placements(state, piece, anchor)
                assert fast == reference_placements(state, piece, anchor), (seed, piece)
                if index % 8 == 0 or anchor is not None:  # the whole map: slow, so sampled
                    assert set(fast) == accepted_anywhere(state, piece, anchor), (seed, piece)
                compared += bool(fast)
    assert compared > 500 and turbo > 0, (compared, turbo)


def test_may_lay_is_can_place_on_every_state_of_many_matches() -> None:
    """The rules check an Excavate or Turbo placement against the placements (``may_lay``);
    ``can_place`` is the reference: every cell near the tunnels (and a few far off, and one
    off the map), every rotation (and two out of range), for every piece in a hand and
    every Turbo piece."""
    rng = random.Random(3)
    compared = accepted = turbo = 0
    for seed in range(4):
        for state in states(seed):
            if not state.players or state.distance not in CONTENT.layouts:
                continue
            asks: list[tuple[str, Hex | None]] = [
                (piece, None) for piece in sorted(set(state.hands.values()))
            ]
            if state.turbo_piece is not None:
                asks.append((state.turbo_piece, state.turbo_anchor))
                turbo += 1
            near = set(frontier(state))
            for cell in list(near):
                near.update(cell.neighbours())
            far = rng.sample(sorted(layout(state).cells), 3)
            for piece, anchor in asks:
                for cell in [*sorted(near), *far, Hex(99, 0)]:
                    for rotation in range(-1, 7):
                        expected = can_place(state, piece, cell, rotation, anchor)
                        assert may_lay(state, piece, cell, rotation, anchor) == expected, seed
                        accepted += expected
                        compared += 1
    assert accepted > 1000 and turbo > 0, (compared, accepted, turbo)
