"""Setup, "Drop the Dungeon": the first player drops the smaller cubes "so that the cubes
spread evenly across the table, without more than one or two touching each other".

A physical player gets this by how they drop; the simulated drop is checked instead, and
one that breaks the clause is picked up and dropped again from new dice (game.py). Read
here as: every cube lands on the table, and at most ``setup_touching_pairs`` (2) pairs of
cubes touch, two cubes touching when their squares are within ``touching_mm`` of each
other (content pack).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement, Settled
from services.games.dungeon_drop.rooms import within_pairs


@dataclass(frozen=True)
class TouchingPair:
    """Two cubes at rest touching each other (``cube`` < ``other``)."""

    cube: str
    other: str


def touching_pairs(placements: Sequence[Placement]) -> tuple[TouchingPair, ...]:
    """Every pair of cubes within ``touching_mm`` of each other, in cube-id order: the
    pairs GEOS's prepared distance-within says are (what the STRtree query with the
    ``dwithin`` predicate found), decided in floating point wherever that is sure
    (``rooms.within_pairs``)."""
    ordered = sorted(placements, key=lambda p: p.cube)
    return tuple(
        TouchingPair(ordered[i].cube, ordered[j].cube)
        for i, j in within_pairs(ordered, CONTENT.table.touching_mm)
    )


def spread_evenly(settled: Settled, touching: Sequence[TouchingPair]) -> bool:
    """The setup clause holds for this drop: nothing off the table, few cubes touching."""
    return not settled.off_table and len(touching) <= CONTENT.setup_touching_pairs
