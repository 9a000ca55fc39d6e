"""``exit_reachable`` searches best-first on cell numbers. This keeps the reference — a
breadth-first search from the frontier over every free cell, as the end-of-turn check used
to run — and compares them on every state of many seeded matches, and on those states with
Abysses strewn over the map until the exit is often cut off."""

from __future__ import annotations

import random
from collections import deque

from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import DrillitState, PlacedPiece, changed
from services.games.drillit.tunnels import (
    exit_reachable,
    exits,
    frontier,
    is_free,
    layout,
    piece_openings,
)
from tests.unit.games.drillit.test_drillit_placements_fast import reference_frontier, states


def reference_exit_reachable(state: DrillitState) -> bool:
    occupied = piece_openings(state)
    targets = set(exits(state))
    start = reference_frontier(state)
    seen = set(start)
    queue = deque(start)
    while queue:
        cell = queue.popleft()
        if any(n in targets for n in cell.neighbours()):
            return True
        for n in cell.neighbours():
            if n not in seen and is_free(state, n, occupied):
                seen.add(n)
                queue.append(n)
    return False


def strewn(state: DrillitState, rng: random.Random, share: float) -> DrillitState:
    """``state`` with Abysses on a random ``share`` of the map's free cells."""
    occupied = piece_openings(state)
    free = sorted(c for c in layout(state).cells if is_free(state, c, occupied))
    abysses: tuple[Hex, ...] = tuple(c for c in free if rng.random() < share)
    return changed(state, abysses=state.abysses + abysses)


def test_exit_reachable_equals_breadth_first_search_on_many_states() -> None:
    rng = random.Random(13)
    answers = {True: 0, False: 0}
    for seed in range(6):
        for state in states(seed):
            if not state.players or state.distance not in CONTENT.layouts:
                continue
            for probe in (state, strewn(state, rng, rng.choice((0.2, 0.35, 0.5)))):
                expected = reference_exit_reachable(probe)
                assert exit_reachable(probe) == expected, (seed, probe.placed, probe.abysses)
                answers[expected] += 1
    assert answers[True] > 300 and answers[False] > 50, answers


def _one_more(state: DrillitState, rng: random.Random) -> DrillitState:
    """``state`` with one Abyss or one piece more on a random free cell (a piece mostly on
    the frontier, as the rules lay them), which the tunnels follow from ``state``'s."""
    occupied = piece_openings(state)
    edge = frontier(state)
    cells = edge if edge and rng.random() < 0.7 else layout(state).cells
    free = sorted(c for c in cells if is_free(state, c, occupied))
    if not free:
        return state
    cell = rng.choice(free)
    if rng.random() < 0.5:
        return changed(state, abysses=(*state.abysses, cell))
    piece = PlacedPiece(rng.choice(sorted(CONTENT.pieces)), cell, rng.randrange(6))
    return changed(state, placed=(*state.placed, piece))


def test_exit_reachable_kept_from_the_tunnels_before_equals_breadth_first_search() -> None:
    """The answer passed on from the tunnels with one piece or Abyss less (the way found
    still clear, or the exit already out of reach) on states that follow one another: the
    match's, and strewn ones with a piece or an Abyss more, one at a time."""
    rng = random.Random(29)
    answers = {True: 0, False: 0}
    for seed in range(4):
        for state in states(seed):
            if not state.players or state.distance not in CONTENT.layouts:
                continue
            assert exit_reachable(state) == reference_exit_reachable(state), seed
            probe = strewn(state, rng, rng.choice((0.2, 0.35, 0.5)))
            for _ in range(4):
                expected = reference_exit_reachable(probe)
                assert exit_reachable(probe) == expected, (seed, probe.placed, probe.abysses)
                answers[expected] += 1
                probe = _one_more(probe, rng)
    assert answers[True] > 300 and answers[False] > 100, answers  # (about 700 and 150)
