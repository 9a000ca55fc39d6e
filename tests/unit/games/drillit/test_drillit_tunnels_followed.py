"""The tunnels of a state (cells taken, the pieces' edge masks and those of the cells
around them, the frontier: what placements and the exit search read) are worked out from
the last ones asked about when the state has one Path piece or one Abyss more. This
compares them with the tunnels worked out afresh on every state of many seeded matches, as
the states follow one another and as they are asked about in any order."""

from __future__ import annotations

import random

from services.games.drillit import tunnels
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import _Dug
from tests.unit.games.drillit.test_drillit_placements_fast import states


def _afresh(state: DrillitState) -> tuple[object, ...]:
    return _of(_Dug.laid(state.distance, state.placed, state.abysses))


def _of(dug: _Dug) -> tuple[object, ...]:
    return dug.shapes, dug.taken, dug.frontier_cells, dug.bordered, dug.required, dug.keys


def test_tunnels_followed_by_a_piece_or_an_abyss_equal_those_worked_out_afresh() -> None:
    pieces = abysses = 0
    for seed in range(12):
        previous: _Dug | None = None
        for state in states(seed):
            if not state.players:
                continue
            if previous is not None:
                followed = previous.followed_by(state.distance, state.placed, state.abysses)
                if followed is not None and state.placed is not previous.placed:
                    assert _of(followed) == _afresh(state), seed
                    pieces += 1
                elif followed is not None:
                    assert _of(followed) == _afresh(state), seed
                    abysses += 1
            assert _of(tunnels._dug(state)) == _afresh(state), seed
            previous = tunnels._dug(state)
    assert pieces > 100 and abysses > 5, (pieces, abysses)


def test_tunnels_asked_about_in_any_order_equal_those_worked_out_afresh() -> None:
    rng = random.Random(5)
    asked = [s for seed in range(6) for s in states(seed) if s.players]
    rng.shuffle(asked)
    for state in asked:
        assert _of(tunnels._dug(state)) == _afresh(state)
