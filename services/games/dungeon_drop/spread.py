"""Setup, "Drop the Dungeon": the first player drops the smaller cubes "so that the cubes
spread evenly across the table, without more than one or two touching each other".

A physical player gets this by how they drop; the simulated drop is checked instead, and
one that breaks the clause is picked up and dropped again from new dice (game.py). Read
here as: every cube lands on the table, and at most ``setup_touching_pairs`` (2) pairs of
cubes touch, two cubes touching when their squares are within ``touching_mm`` of each
other (content pack).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import shapely
from shapely.geometry import Polygon

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement, Settled
from services.games.dungeon_drop.rooms import square, square_corners


@dataclass(frozen=True)
class TouchingPair:
    """Two cubes at rest touching each other (``cube`` < ``other``)."""

    cube: str
    other: str


def touching_pairs(placements: Sequence[Placement]) -> tuple[TouchingPair, ...]:
    """Every pair of cubes within ``touching_mm`` of each other, in cube-id order.

    Shapely decides each pair as its STRtree query with the ``dwithin`` predicate did
    (the first cube's square prepared, GEOS's prepared distance-within); only pairs whose
    centres are too far apart for their corners to come that close are not asked."""
    ordered = sorted(placements, key=lambda p: p.cube)
    if len(ordered) < 2:
        return ()
    within = CONTENT.table.touching_mm
    centres = np.array([(p.x, p.y) for p in ordered])
    reach = np.array([CONTENT.edge(p.cube) for p in ordered]) * (math.sqrt(2.0) / 2.0)
    first, second = _pairs(len(ordered))
    # ``take``, not ``centres[first]``: the same rows, gathered several times faster
    apart = np.hypot(*(centres.take(first, axis=0) - centres.take(second, axis=0)).T)
    near = apart <= reach[first] + reach[second] + within + _MARGIN
    first, second = first[near].tolist(), second[near].tolist()
    if not first:
        return ()
    prepared = {i: Polygon(square_corners(ordered[i])) for i in set(first)}
    shapely.prepare(list(prepared.values()))
    hits = shapely.dwithin(
        [prepared[i] for i in first], [square(ordered[j]) for j in second], within
    )
    return tuple(
        TouchingPair(ordered[i].cube, ordered[j].cube)
        for i, j, hit in zip(first, second, hits.tolist(), strict=True)
        if hit
    )


@functools.lru_cache(maxsize=8)
def _pairs(count: int) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of ``count`` indices, first < second, in order (``np.triu_indices``;
    a table's cube count repeats from drop to drop)."""
    first, second = np.triu_indices(count, k=1)
    first.setflags(write=False)  # (cached: shared by every caller)
    second.setflags(write=False)
    return first, second


#: (mm) slack on the centres' test, far above floating point's rounding on the table
_MARGIN = 1e-3


def spread_evenly(settled: Settled, touching: Sequence[TouchingPair]) -> bool:
    """The setup clause holds for this drop: nothing off the table, few cubes touching."""
    return not settled.off_table and len(touching) <= CONTENT.setup_touching_pairs
