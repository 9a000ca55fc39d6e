"""Rooms: the triangle of three Pillars and the cubes "within or touching" it (shapely).

A cube is the rotated square it covers on the table; it is in the room when that square
intersects the closed triangle whose corners are the three Pillars' centres (so a cube
merely touching an edge counts). The three corner Pillars form the room and are never
collected; a room that any other Pillar touches would collect a Pillar and is not
allowed. A degenerate triangle (three Pillars in a line) is no room.

Shapely (GEOS) decides "intersects" exactly. Asking it for every cube and every trio of
Pillars was most of a match's time (a table has tens of cubes and of trios), so the
separating-axis test decides in floating point every pair that is clearly apart or
clearly overlapping, for all trios at once (numpy), and shapely only the pairs within a
millionth of a millimetre of touching: the same answers (test_dd_rooms_geometry.py).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping

import numpy as np
import shapely
from shapely.geometry import Point, Polygon

from services.games.dungeon_drop.content import CONTENT, PILLAR
from services.games.dungeon_drop.table import Placement

#: a triangle with a smaller area (mm²) is three Pillars in a line, not a room
MIN_ROOM_AREA = 50.0


@functools.lru_cache(maxsize=8192)
def square(at: Placement) -> Polygon:
    """The rotated square a cube covers (cached: placements are immutable)."""
    return Polygon(square_corners(at))


def square_corners(at: Placement) -> list[tuple[float, float]]:
    half, c, s = _frame(at)
    return [
        (at.x + half * (dx * c - dy * s), at.y + half * (dx * s + dy * c))
        for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1))
    ]


def _frame(at: Placement) -> tuple[float, float, float]:
    """Half the cube's edge, and the cosine and sine of its turn. (Not cached: a cache
    hashes the placement, which costs more than the sums.)"""
    rad = math.radians(at.angle)
    return _HALF_EDGE[at.cube], math.cos(rad), math.sin(rad)


#: half of each cube's edge (read for every cube of every room tested: a dict's look-up,
#: not the content's two)
_HALF_EDGE = {cube: CONTENT.edge(cube) / 2.0 for cube in CONTENT.cubes}


#: beyond the corners of the largest cube, from its centre
_REACH = max(CONTENT.edge(cube) for cube in CONTENT.cubes) / 2.0 * 1.415 + 1e-6


def triangle(table: Mapping[str, Placement], pillars: tuple[str, ...]) -> Polygon:
    return Polygon([(table[p].x, table[p].y) for p in pillars])


def room_cubes(table: Mapping[str, Placement], pillars: tuple[str, ...]) -> tuple[str, ...]:
    """Every cube within or touching the room, its three corner Pillars left out."""
    a, b, c = (table[p] for p in pillars)
    edges = _edges(a.x, a.y, b.x, b.y, c.x, c.y)
    # the triangle's bounding box, widened by the largest cube's reach
    low_x, high_x = min(a.x, b.x, c.x) - _REACH, max(a.x, b.x, c.x) + _REACH
    low_y, high_y = min(a.y, b.y, c.y) - _REACH, max(a.y, b.y, c.y) + _REACH
    (n1x, n1y, l1), (n2x, n2y, l2), (n3x, n3y, l3) = edges or ((0.0, 0.0, 0.0),) * 3
    inside = []
    for cube in sorted(c for c in table if c not in pillars):
        at = table[cube]
        x, y = at.x, at.y
        if x < low_x or x > high_x or y < low_y or y > high_y:
            continue  # too far from the triangle to touch it
        if edges is None:
            gap = 0.0  # (shapely decides)
        else:
            # how far the centre lies beyond the farthest of the edges' lines
            beyond = max(n1x * x + n1y * y - l1, n2x * x + n2y * y - l2, n3x * x + n3y * y - l3)
            if beyond > _REACH:
                continue  # the whole cube beyond that edge
            if beyond < -_REACH:
                inside.append(cube)  # the whole cube inside
                continue
            half, ux, uy = _frame(at)
            gap = _gap(edges, (a, b, c), x, y, half, ux, uy)
        if gap < -_SURE or (
            gap <= _SURE and shapely.intersects(square(at), triangle(table, pillars))
        ):
            inside.append(cube)
    return tuple(inside)


#: a triangle's edges: (outward unit normal x, y, the edge line's offset along it) each
Edges = tuple[tuple[float, float, float], ...]


def _edges(ax: float, ay: float, bx: float, by: float, cx: float, cy: float) -> Edges | None:
    """None for a triangle smaller than a room (nearly or exactly in a line: shapely
    decides, exactly, what floating point would only approximate)."""
    cross = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay)
    if abs(cross) < 2.0 * MIN_ROOM_AREA:
        return None
    turning = 1.0 if cross > 0 else -1.0
    out = []
    for px, py, qx, qy in ((ax, ay, bx, by), (bx, by, cx, cy), (cx, cy, ax, ay)):
        ex, ey = qx - px, qy - py
        scale = turning / math.hypot(ex, ey)
        nx, ny = ey * scale, -ex * scale
        out.append((nx, ny, nx * px + ny * py))
    return tuple(out)


def _gap(
    edges: Edges,
    corners: tuple[Placement, Placement, Placement],
    x: float,
    y: float,
    half: float,
    ux: float,
    uy: float,
) -> float:
    """The widest gap between the triangle and the square (centre x, y, sides along
    (ux, uy) and (-uy, ux)) over their edges' normals: > 0 apart, < 0 overlapping (what
    ``_touching`` computes for many at once, written out for one)."""
    gap = -math.inf
    for nx, ny, line in edges:
        beyond = nx * x + ny * y - line - half * (abs(nx * ux + ny * uy) + abs(ny * ux - nx * uy))
        gap = max(gap, beyond)
    for sx, sy in ((ux, uy), (-uy, ux)):
        a, b, c = (p.x * sx + p.y * sy for p in corners)
        centre = x * sx + y * sy
        gap = max(gap, min(a, b, c) - (centre + half), (centre - half) - max(a, b, c))
    return gap


def contains_point(
    table: Mapping[str, Placement], pillars: tuple[str, ...], x: float, y: float
) -> bool:
    """A meeple at (x, y) is within or touching the room."""
    return bool(triangle(table, pillars).intersects(Point(x, y)))


#: how far (mm) two shapes must be apart, or overlap, for floating-point arithmetic to
#: decide it: far above its rounding on a 900 mm table, far below any distance that matters
_SURE = 1e-6


#: each corner's next one round the triangle (a->b, b->c, c->a)
_NEXT_CORNER = np.array([1, 2, 0])


def _touching(
    triangles: np.ndarray,
    places: list[Placement],
    room: Callable[[int, int], Polygon],
) -> np.ndarray:
    """Which cube squares each triangle (a T×3×2 array of corners) intersects: T×N, as
    shapely's ``intersects`` says. Decided by separating axes (two convex shapes are apart
    exactly when their projections onto one of their edges' normals are), in floating
    point where the shapes are apart or overlap by more than ``_SURE``; the few pairs
    closer than that to touching (a cube exactly on an edge), and triangles smaller than
    a room, are left to shapely, which decides them exactly: ``room(t, n)`` is triangle t's
    polygon. A cube whose centre lies outside the triangle's bounding box widened by the
    largest cube's reach is apart from it (~80% of the pairs on a table): only the other
    pairs are tested."""
    count = len(places)
    hits = np.zeros((len(triangles), count), dtype=bool)
    if not count:
        return hits
    x = np.array([p.x for p in places])
    y = np.array([p.y for p in places])
    ax, ay = triangles[:, 0, 0], triangles[:, 0, 1]
    bx, by = triangles[:, 1, 0], triangles[:, 1, 1]
    cx, cy = triangles[:, 2, 0], triangles[:, 2, 1]
    low_x = np.minimum(np.minimum(ax, bx), cx) - _REACH
    high_x = np.maximum(np.maximum(ax, bx), cx) + _REACH
    low_y = np.minimum(np.minimum(ay, by), cy) - _REACH
    high_y = np.maximum(np.maximum(ay, by), cy) + _REACH
    near = (x >= low_x[:, None]) & (x <= high_x[:, None])
    near &= (y >= low_y[:, None]) & (y <= high_y[:, None])
    tri, cube = np.nonzero(near)  # the pairs tested, each a triangle and a cube
    if not len(tri):
        return hits
    # ``take``, not ``[cube]``: the same rows, gathered several times faster
    frames = np.array([_frame(p) for p in places]).take(cube, axis=0)
    # half the edge; the square's sides: u = (ux, uy), v = (-uy, ux)
    half, ux, uy = frames[:, 0], frames[:, 1], frames[:, 2]
    x, y = x[cube], y[cube]
    cross = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay)
    turning = np.sign(cross)  # +1 counter-clockwise, -1 clockwise
    # the triangle's edges a->b, b->c, c->a (3×T each), each with its outward unit normal
    # n: the square's lowest point along n is its centre's less half * (|n.u| + |n.v|),
    # the triangle's highest the edge. The three edges (and below, the square's two
    # sides) are stacked on a first axis: the same arithmetic per element as one at a time
    px, py = triangles[:, :, 0].T, triangles[:, :, 1].T
    qx, qy = px[_NEXT_CORNER], py[_NEXT_CORNER]
    ex, ey = qx - px, qy - py
    length = np.hypot(ex, ey)
    scale = turning / np.where(length > 0, length, 1.0)
    nx, ny = ey * scale, -ex * scale
    line = (nx * px + ny * py).take(tri, axis=1)
    nx, ny = nx.take(tri, axis=1), ny.take(tri, axis=1)
    reach = half * (np.abs(nx * ux + ny * uy) + np.abs(ny * ux - nx * uy))
    gap = (nx * x + ny * y - line - reach).max(axis=0)
    # the square's sides u and v: the triangle's interval along each against the square's
    sx, sy = np.stack((ux, -uy)), np.stack((uy, ux))
    pa = ax[tri] * sx + ay[tri] * sy
    pb = bx[tri] * sx + by[tri] * sy
    pc = cx[tri] * sx + cy[tri] * sy
    centre = x * sx + y * sy
    below = np.minimum(np.minimum(pa, pb), pc) - (centre + half)
    above = (centre - half) - np.maximum(np.maximum(pa, pb), pc)
    np.maximum(gap, np.maximum(below, above).max(axis=0), out=gap)
    hits[tri, cube] = gap < -_SURE  # overlapping along every axis
    # smaller than a room: as _edges
    unsure = (np.abs(gap) <= _SURE) | (np.abs(cross) < 2.0 * MIN_ROOM_AREA)[tri]
    for t, n in zip(tri[unsure].tolist(), cube[unsure].tolist(), strict=True):
        hits[t, n] = shapely.intersects(square(places[n]), room(t, n))
    return hits


def is_pillar(cube: str) -> bool:
    return CONTENT.cubes[cube] == PILLAR


def pillars_on(table: Mapping[str, Placement]) -> tuple[str, ...]:
    return tuple(sorted(c for c in table if is_pillar(c)))


@functools.lru_cache(maxsize=64)
def _open_rooms(
    placements: tuple[Placement, ...],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    pillar_places = tuple(p for p in placements if is_pillar(p.cube))
    open_ones, corners = _open_trios(pillar_places)
    if not len(open_ones):
        return ()
    pillars = tuple(p.cube for p in pillar_places)
    names = _trio_names(pillars)
    spots = {p.cube: p for p in pillar_places}
    places = [p for p in placements if not is_pillar(p.cube)]
    hits = _touching(corners, places, lambda t, n: triangle(spots, names[int(open_ones[t])]))
    cubes = [p.cube for p in places]
    return tuple(
        (names[t], tuple(itertools.compress(cubes, row)))
        for t, row in zip(open_ones.tolist(), hits.tolist(), strict=True)
    )


@functools.lru_cache(maxsize=64)
def _open_trios(pillar_places: tuple[Placement, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The trios of Pillars (indices in combinations' order) that form a room no other
    Pillar is within or touching, and their corners (T×3×2). Cached apart from the rest of
    the table: a drop or a flick often leaves every Pillar where it was."""
    table = {p.cube: p for p in pillar_places}
    pillars = tuple(p.cube for p in pillar_places)
    if len(pillars) < 3:
        return np.zeros(0, dtype=np.intp), np.zeros((0, 3, 2))
    trios = _trios(len(pillars))  # T×3 indices into pillars, in combinations' order
    spots = np.array([(table[p].x, table[p].y) for p in pillars])
    corners_of = spots[trios]  # T×3×2
    a, b, c = corners_of[:, 0], corners_of[:, 1], corners_of[:, 2]
    area = np.abs(
        (b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])
    )
    area /= 2.0
    for t in np.nonzero(np.abs(area - MIN_ROOM_AREA) <= _SURE)[0].tolist():
        area[t] = triangle(table, _names(pillars, trios[t])).area  # as shapely says there
    rooms = np.nonzero(area >= MIN_ROOM_AREA)[0]
    # a room no other Pillar is within or touching (its own three always are)
    pillar_hits = _touching(
        corners_of[rooms],
        list(pillar_places),
        lambda t, n: triangle(table, _names(pillars, trios[rooms[t]])),
    )
    open_ones = rooms[pillar_hits.sum(axis=1) == 3]
    corners = corners_of[open_ones]
    open_ones.setflags(write=False)  # (cached: shared by every caller)
    corners.setflags(write=False)
    return open_ones, corners


@functools.lru_cache(maxsize=32)
def _trios(count: int) -> np.ndarray:
    return np.array(list(itertools.combinations(range(count), 3)), dtype=np.intp)


@functools.lru_cache(maxsize=32)
def _trio_names(pillars: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Every trio's Pillars, in ``_trios``' order."""
    return tuple(itertools.combinations(pillars, 3))


def _names(pillars: tuple[str, ...], trio: np.ndarray) -> tuple[str, ...]:
    return tuple(pillars[i] for i in trio.tolist())


def open_rooms(
    table: Mapping[str, Placement],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """Every room that collects no Pillar, with the cubes it would collect."""
    return _open_rooms(tuple(sorted(table.values(), key=lambda p: p.cube)))
