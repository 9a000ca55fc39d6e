"""Rooms: the triangle of three Pillars and the cubes "within or touching" it (shapely).

A cube is the rotated square it covers on the table; it is in the room when that square
intersects the closed triangle whose corners are the three Pillars' centres (so a cube
merely touching an edge counts). The three corner Pillars form the room and are never
collected; a room that any other Pillar touches would collect a Pillar and is not
allowed. A degenerate triangle (three Pillars in a line) is no room.

Shapely (GEOS) decides "intersects" exactly. Asking it for every cube and every trio of
Pillars was most of a match's time (a table has tens of cubes and of trios), so the
separating-axis test decides in floating point every pair that is clearly apart or
clearly overlapping (scalar loops: this module is compiled, ``make install``), and shapely
only the pairs within a millionth of a millimetre of touching: the same answers
(test_dd_rooms_geometry.py).
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import shapely
from shapely.geometry import Point, Polygon

from services.games.dungeon_drop.content import CONTENT, PILLAR
from services.games.dungeon_drop.placement import Placement

#: a triangle with a smaller area (mm²) is three Pillars in a line, not a room
MIN_ROOM_AREA: Final = 50.0


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
_REACH: Final = max(CONTENT.edge(cube) for cube in CONTENT.cubes) / 2.0 * 1.415 + 1e-6


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
_SURE: Final = 1e-6


#: a triangle's corners: ax, ay, bx, by, cx, cy
Corners = tuple[float, float, float, float, float, float]


def _touching(
    triangles: Sequence[Corners],
    places: list[Placement],
    room: Callable[[int, int], Polygon],
) -> list[list[int]]:
    """Which cube squares each triangle intersects (per triangle, the indices into
    ``places`` in order), as shapely's ``intersects`` says. Decided by separating axes
    (two convex shapes are apart exactly when their projections onto one of their edges'
    normals are), in floating point where the shapes are apart or overlap by more than
    ``_SURE``; the few pairs closer than that to touching (a cube exactly on an edge), and
    triangles smaller than a room, are left to shapely, which decides them exactly:
    ``room(t, n)`` is triangle t's polygon. A cube whose centre lies outside the
    triangle's bounding box widened by the largest cube's reach is apart from it (~80% of
    the pairs on a table), and one whose centre lies beyond an edge's line, or inside all
    three, by more than that reach is apart, or inside, without the rest of the test.
    Written as scalar loops for the compiled module: a table's ~1,300 pairs near enough
    to test cost less so than numpy's per-operation overhead over them."""
    xs = [p.x for p in places]
    ys = [p.y for p in places]
    frames = [_frame(p) for p in places]
    count = len(places)
    out: list[list[int]] = []
    for t, (ax, ay, bx, by, cx, cy) in enumerate(triangles):
        hits: list[int] = []
        out.append(hits)
        low_x = (ax if ax < bx else bx) if (ax if ax < bx else bx) < cx else cx
        high_x = (ax if ax > bx else bx) if (ax if ax > bx else bx) > cx else cx
        low_y = (ay if ay < by else by) if (ay if ay < by else by) < cy else cy
        high_y = (ay if ay > by else by) if (ay if ay > by else by) > cy else cy
        low_x -= _REACH
        high_x += _REACH
        low_y -= _REACH
        high_y += _REACH
        cross = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay)
        small = abs(cross) < 2.0 * MIN_ROOM_AREA  # smaller than a room: as _edges
        turning = 1.0 if cross > 0.0 else (-1.0 if cross < 0.0 else 0.0)
        # each edge's outward unit normal and its line's offset along it: a->b, b->c, c->a
        n1x, n1y, l1 = _edge(ax, ay, bx, by, turning)
        n2x, n2y, l2 = _edge(bx, by, cx, cy, turning)
        n3x, n3y, l3 = _edge(cx, cy, ax, ay, turning)
        for n in range(count):
            x = xs[n]
            y = ys[n]
            if x < low_x or x > high_x or y < low_y or y > high_y:
                continue
            if not small:
                # how far the centre lies beyond the farthest of the edges' lines
                d1 = n1x * x + n1y * y - l1
                d2 = n2x * x + n2y * y - l2
                d3 = n3x * x + n3y * y - l3
                beyond = d1 if d1 > d2 else d2
                beyond = beyond if beyond > d3 else d3
                if beyond > _REACH:
                    continue  # the whole cube beyond that edge
                if beyond < -_REACH:
                    hits.append(n)  # the whole cube inside
                    continue
            half, ux, uy = frames[n]
            # the square's lowest point along an edge's normal m is its centre's less
            # half * (|m.u| + |m.v|), with its sides u = (ux, uy) and v = (-uy, ux)
            gap = (
                n1x * x
                + n1y * y
                - l1
                - half * (abs(n1x * ux + n1y * uy) + abs(n1y * ux - n1x * uy))
            )
            g = (
                n2x * x
                + n2y * y
                - l2
                - half * (abs(n2x * ux + n2y * uy) + abs(n2y * ux - n2x * uy))
            )
            gap = gap if gap > g else g
            g = (
                n3x * x
                + n3y * y
                - l3
                - half * (abs(n3x * ux + n3y * uy) + abs(n3y * ux - n3x * uy))
            )
            gap = gap if gap > g else g
            if gap <= _SURE or small:
                # the square's sides u and v: the triangle's interval along each
                # against the square's
                g = _side_gap(ax, ay, bx, by, cx, cy, x, y, half, ux, uy)
                gap = gap if gap > g else g
                g = _side_gap(ax, ay, bx, by, cx, cy, x, y, half, -uy, ux)
                gap = gap if gap > g else g
            if small or (-_SURE <= gap <= _SURE):
                if shapely.intersects(square(places[n]), room(t, n)):
                    hits.append(n)
            elif gap < -_SURE:
                hits.append(n)  # overlapping along every axis
    return out


def _edge(px: float, py: float, qx: float, qy: float, turning: float) -> tuple[float, float, float]:
    """The edge p->q's outward unit normal (turning: +1 counter-clockwise, -1 clockwise;
    0 for a degenerate triangle) and its line's offset along it."""
    ex, ey = qx - px, qy - py
    length = math.hypot(ex, ey)
    scale = turning / (length if length > 0.0 else 1.0)
    nx, ny = ey * scale, -ex * scale
    return nx, ny, nx * px + ny * py


def _side_gap(
    ax: float,
    ay: float,
    bx: float,
    by: float,
    cx: float,
    cy: float,
    x: float,
    y: float,
    half: float,
    sx: float,
    sy: float,
) -> float:
    """The gap between the triangle's and the square's intervals along the square's side
    (sx, sy): > 0 apart."""
    pa = ax * sx + ay * sy
    pb = bx * sx + by * sy
    pc = cx * sx + cy * sy
    centre = x * sx + y * sy
    low = pa if pa < pb else pb
    low = low if low < pc else pc
    high = pa if pa > pb else pb
    high = high if high > pc else pc
    below = low - (centre + half)
    above = (centre - half) - high
    return below if below > above else above


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
    if not open_ones:
        return ()
    pillars = tuple(p.cube for p in pillar_places)
    names = _trio_names(pillars)
    spots = {p.cube: p for p in pillar_places}
    places = [p for p in placements if not is_pillar(p.cube)]
    hits = _touching(corners, places, lambda t, n: triangle(spots, names[open_ones[t]]))
    cubes = [p.cube for p in places]
    return tuple(
        (names[t], tuple([cubes[n] for n in row])) for t, row in zip(open_ones, hits, strict=True)
    )


@functools.lru_cache(maxsize=64)
def _open_trios(
    pillar_places: tuple[Placement, ...],
) -> tuple[tuple[int, ...], tuple[Corners, ...]]:
    """The trios of Pillars (indices in combinations' order) that form a room no other
    Pillar is within or touching, and their corners. Cached apart from the rest of the
    table: a drop or a flick often leaves every Pillar where it was."""
    table = {p.cube: p for p in pillar_places}
    pillars = tuple(p.cube for p in pillar_places)
    xs = [p.x for p in pillar_places]
    ys = [p.y for p in pillar_places]
    rooms: list[int] = []
    corners_of: list[Corners] = []
    for t, (i, j, k) in enumerate(_trios(len(pillars))):
        ax, ay, bx, by, cx, cy = xs[i], ys[i], xs[j], ys[j], xs[k], ys[k]
        area = abs((bx - ax) * (cy - ay) - (cx - ax) * (by - ay))
        area /= 2.0
        if abs(area - MIN_ROOM_AREA) <= _SURE:
            area = triangle(table, (pillars[i], pillars[j], pillars[k])).area  # as shapely says
        if area >= MIN_ROOM_AREA:
            rooms.append(t)
            corners_of.append((ax, ay, bx, by, cx, cy))
    names = _trio_names(pillars)
    # a room no other Pillar is within or touching (its own three always are)
    pillar_hits = _touching(
        corners_of, list(pillar_places), lambda t, n: triangle(table, names[rooms[t]])
    )
    open_ones = tuple(t for t, hits in zip(rooms, pillar_hits, strict=True) if len(hits) == 3)
    corners = tuple(c for c, hits in zip(corners_of, pillar_hits, strict=True) if len(hits) == 3)
    return open_ones, corners


@functools.lru_cache(maxsize=32)
def _trios(count: int) -> tuple[tuple[int, int, int], ...]:
    return tuple(itertools.combinations(range(count), 3))


@functools.lru_cache(maxsize=32)
def _trio_names(pillars: tuple[str, ...]) -> tuple[tuple[str, ...], ...]:
    """Every trio's Pillars, in ``_trios``' order."""
    return tuple(itertools.combinations(pillars, 3))


def open_rooms(
    table: Mapping[str, Placement],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """Every room that collects no Pillar, with the cubes it would collect."""
    return _open_rooms(tuple(sorted(table.values(), key=lambda p: p.cube)))
