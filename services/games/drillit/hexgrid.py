"""Hexagonal geometry of the tunnel map (axial coordinates, flat six directions).

Direction ``d`` and ``(d + 3) % 6`` are opposite edges, so two tiles connect when
one's opening ``d`` faces the other's opening ``(d + 3) % 6``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from services.games.frozen import quick_init

#: axial offsets of the six edges, counter-clockwise starting east
DIRECTIONS: tuple[tuple[int, int], ...] = ((1, 0), (1, -1), (0, -1), (-1, 0), (-1, 1), (0, 1))


@dataclass(frozen=True, order=True)
class Hex:
    q: int
    r: int

    def neighbour(self, direction: int) -> Hex:
        return _neighbours(self.q, self.r)[direction % 6]

    def neighbours(self) -> tuple[Hex, ...]:
        return _neighbours(self.q, self.r)


quick_init(Hex)


# Geometry is asked for far more often than the map has cells (every legal-action listing and
# end-of-turn check walks the tunnels), so the answers are remembered: the map's cells and
# their rims fit comfortably; the bound only keeps odd coordinates from a request in check.
@functools.lru_cache(maxsize=4096)
def _neighbours(q: int, r: int) -> tuple[Hex, ...]:
    return tuple(Hex(q + dq, r + dr) for dq, dr in DIRECTIONS)


ORIGIN = Hex(0, 0)


def opposite(direction: int) -> int:
    return (direction + 3) % 6


def distance(a: Hex, b: Hex) -> int:
    dq, dr = a.q - b.q, a.r - b.r
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


@functools.lru_cache(maxsize=1024)
def rotate(openings: tuple[int, ...], rotation: int) -> tuple[int, ...]:
    return tuple(sorted((d + rotation) % 6 for d in openings))


@functools.lru_cache(maxsize=256)
def distinct_rotations(openings: tuple[int, ...]) -> tuple[int, ...]:
    """Rotations giving different opening sets (a straight tile has 3, a star 1)."""
    seen: set[tuple[int, ...]] = set()
    out: list[int] = []
    for k in range(6):
        shape = rotate(openings, k)
        if shape not in seen:
            seen.add(shape)
            out.append(k)
    return tuple(out)


def disc(radius: int, centre: Hex = ORIGIN) -> tuple[Hex, ...]:
    """All cells within ``radius`` of ``centre``, in a stable order."""
    cells = []
    for q in range(-radius, radius + 1):
        for r in range(max(-radius, -q - radius), min(radius, -q + radius) + 1):
            cells.append(Hex(centre.q + q, centre.r + r))
    return tuple(cells)
