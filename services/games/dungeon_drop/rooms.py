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
    rad = at.angle * _DEG_TO_RAD  # math.radians, written out (a call through Python's)
    return _HALF_EDGE[at.cube], math.cos(rad), math.sin(rad)


#: math.radians' factor (CPython's ``x * degToRad``, degToRad = pi / 180.0)
_DEG_TO_RAD: Final = math.pi / 180.0


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
    triangles: Sequence[_Triangle],
    places: list[Placement],
    room: Callable[[int, int], Polygon],
) -> list[list[int]]:
    """Which cube squares each triangle intersects (per triangle, the indices into
    ``places`` in order), as shapely's ``intersects`` says (``_Triangle.verdict``;
    ``room(t, n)`` is triangle t's polygon, for the pairs shapely decides). Only the
    cubes whose centre lies within the triangle's widened box are tested (~20% of the
    pairs on a table): with the cubes ordered by x, those in its x-range are one slice."""
    count = len(places)
    squares = [_Square(p) for p in places]
    # the cubes by x: a triangle's candidates are those from its box's first on
    order = sorted(range(count), key=lambda n: places[n].x)
    by_x = [squares[n] for n in order]
    xs = [s.x for s in by_x]
    out: list[list[int]] = []
    for t, near in enumerate(triangles):
        hits: list[int] = []
        high_x = near.high_x
        for at in range(_first_at_least(xs, near.low_x), count):
            cube = by_x[at]
            if cube.x > high_x:
                break
            verdict = near.verdict(cube)
            if verdict > 0 or (
                verdict == 0 and shapely.intersects(square(places[order[at]]), room(t, order[at]))
            ):
                hits.append(order[at])
        hits.sort()
        out.append(hits)
    return out


def _first_at_least(values: list[float], low: float) -> int:
    """The first index whose value is not below ``low`` in the sorted ``values``
    (``bisect.bisect_left``, without a call through Python's)."""
    start, end = 0, len(values)
    while start < end:
        middle = (start + end) // 2
        if values[middle] < low:
            start = middle + 1
        else:
            end = middle
    return start


class _Square:
    """A cube's square as the separating-axis tests read it: its centre, half its edge
    and the direction of a side (a class of the compiled module: unboxed floats)."""

    def __init__(self, at: Placement) -> None:
        half, ux, uy = _frame(at)
        self.x: float = at.x
        self.y: float = at.y
        self.half: float = half
        self.ux: float = ux
        self.uy: float = uy


class _Triangle:
    """A triangle as the separating-axis tests read it: its corners, its bounding box
    widened by the largest cube's reach, and each edge's outward unit normal and its
    line's offset along it (a->b, b->c, c->a)."""

    def __init__(
        self,
        corners: Corners,
        ab: float,
        bc: float,
        ca: float,
    ) -> None:
        """``corners``: ax, ay, bx, by, cx, cy; ``ab``, ``bc``, ``ca``: the edges' lengths
        (``math.hypot`` of each edge, the same both ways: a Pillar pair's, found once)."""
        ax, ay, bx, by, cx, cy = corners
        self.ax, self.ay, self.bx, self.by, self.cx, self.cy = ax, ay, bx, by, cx, cy
        # (conditional expressions: the builtin min and max box every float)
        low = ax if ax < bx else bx
        self.low_x: float = (low if low < cx else cx) - _REACH
        high = ax if ax > bx else bx
        self.high_x: float = (high if high > cx else cx) + _REACH
        low = ay if ay < by else by
        self.low_y: float = (low if low < cy else cy) - _REACH
        high = ay if ay > by else by
        self.high_y: float = (high if high > cy else cy) + _REACH
        cross = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay)
        #: smaller than a room (as ``_edges``): shapely decides every pair
        self.small: bool = abs(cross) < 2.0 * MIN_ROOM_AREA
        turning = 1.0 if cross > 0.0 else (-1.0 if cross < 0.0 else 0.0)
        # each edge's outward unit normal (turning: +1 counter-clockwise, -1 clockwise; 0
        # for a degenerate triangle) and its line's offset along it
        scale = turning / (ab if ab > 0.0 else 1.0)
        self.n1x, self.n1y = (by - ay) * scale, -(bx - ax) * scale
        self.l1: float = self.n1x * ax + self.n1y * ay
        scale = turning / (bc if bc > 0.0 else 1.0)
        self.n2x, self.n2y = (cy - by) * scale, -(cx - bx) * scale
        self.l2: float = self.n2x * bx + self.n2y * by
        scale = turning / (ca if ca > 0.0 else 1.0)
        self.n3x, self.n3y = (ay - cy) * scale, -(ax - cx) * scale
        self.l3: float = self.n3x * cx + self.n3y * cy

    def verdict(self, cube: _Square) -> int:
        """1: the square intersects the triangle; -1: they are apart; 0: shapely decides.
        Separating axes (two convex shapes are apart exactly when their projections onto
        one of their edges' normals are), in floating point where the shapes are apart or
        overlap by more than ``_SURE``; the pairs closer than that to touching (a cube
        exactly on an edge), and triangles smaller than a room, are shapely's, which
        decides them exactly. A cube whose centre lies outside the widened box, or beyond
        an edge's line or inside all three by more than the reach, is decided at once."""
        x, y = cube.x, cube.y
        if x < self.low_x or x > self.high_x or y < self.low_y or y > self.high_y:
            return -1
        n1x, n1y, l1 = self.n1x, self.n1y, self.l1
        n2x, n2y, l2 = self.n2x, self.n2y, self.l2
        n3x, n3y, l3 = self.n3x, self.n3y, self.l3
        small = self.small
        if not small:
            # how far the centre lies beyond the farthest of the edges' lines
            d1 = n1x * x + n1y * y - l1
            d2 = n2x * x + n2y * y - l2
            d3 = n3x * x + n3y * y - l3
            beyond = d1 if d1 > d2 else d2
            beyond = beyond if beyond > d3 else d3
            if beyond > _REACH:
                return -1  # the whole cube beyond that edge
            if beyond < -_REACH:
                return 1  # the whole cube inside
        half, ux, uy = cube.half, cube.ux, cube.uy
        # the square's lowest point along an edge's normal m is its centre's less
        # half * (|m.u| + |m.v|), with its sides u = (ux, uy) and v = (-uy, ux)
        gap = n1x * x + n1y * y - l1 - half * (abs(n1x * ux + n1y * uy) + abs(n1y * ux - n1x * uy))
        g = n2x * x + n2y * y - l2 - half * (abs(n2x * ux + n2y * uy) + abs(n2y * ux - n2x * uy))
        gap = gap if gap > g else g
        g = n3x * x + n3y * y - l3 - half * (abs(n3x * ux + n3y * uy) + abs(n3y * ux - n3x * uy))
        gap = gap if gap > g else g
        if gap <= _SURE or small:
            # the square's sides u and v: the triangle's interval along each against the
            # square's
            ax, ay, bx, by, cx, cy = self.ax, self.ay, self.bx, self.by, self.cx, self.cy
            g = _side_gap(ax, ay, bx, by, cx, cy, x, y, half, ux, uy)
            gap = gap if gap > g else g
            g = _side_gap(ax, ay, bx, by, cx, cy, x, y, half, -uy, ux)
            gap = gap if gap > g else g
        if small or (-_SURE <= gap <= _SURE):
            return 0
        return 1 if gap < -_SURE else -1  # overlapping along every axis, or apart


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


def within_pairs(places: Sequence[Placement], within: float) -> list[tuple[int, int]]:
    """Every pair (i, j), i < j, in order, of the cubes' squares within ``within`` mm of
    each other, as GEOS's prepared distance-within says (the i-th square prepared).
    Decided in floating point where the distance is more than ``_SURE`` from ``within``
    (squares apart by more than ``within`` along a separating axis, or overlapping by
    more than ``_SURE``; else their distance, a corner's to a side, when they are apart),
    and by GEOS for the pairs closer than that to the limit or to touching."""
    squares = [_Square(p) for p in places]
    corners = [_corners(s) for s in squares]
    out: list[tuple[int, int]] = []
    count = len(squares)
    for i in range(count):
        a = squares[i]
        for j in range(i + 1, count):
            b = squares[j]
            dx, dy = b.x - a.x, b.y - a.y
            # centres too far apart for any corners to come that close (the corners lie
            # within half * sqrt(2) < half * 1.415 of the centre)
            reach = (a.half + b.half) * 1.415 + within + _SURE
            if dx * dx + dy * dy > reach * reach:
                continue
            verdict = _within(a, b, corners[i], corners[j], within)
            if verdict > 0 or (verdict == 0 and _geos_within(places[i], places[j], within)):
                out.append((i, j))
    return out


def _corners(s: _Square) -> tuple[float, float, float, float, float, float, float, float]:
    """The square's corners, x and y each, in ``square_corners``' order."""
    hu, hv = s.half * s.ux, s.half * s.uy
    return (
        s.x - hu + hv,
        s.y - hv - hu,
        s.x + hu + hv,
        s.y + hv - hu,
        s.x + hu - hv,
        s.y + hv + hu,
        s.x - hu - hv,
        s.y - hv + hu,
    )


def _within(
    a: _Square,
    b: _Square,
    ca: tuple[float, float, float, float, float, float, float, float],
    cb: tuple[float, float, float, float, float, float, float, float],
    within: float,
) -> int:
    """1: the squares are within ``within`` of each other; -1: farther; 0: GEOS decides."""
    dx, dy = b.x - a.x, b.y - a.y
    gap = -math.inf
    # along each square's sides: the gap between the two squares' intervals
    for sx, sy in ((a.ux, a.uy), (-a.uy, a.ux), (b.ux, b.uy), (-b.uy, b.ux)):
        spread_a = a.half * (abs(sx * a.ux + sy * a.uy) + abs(sy * a.ux - sx * a.uy))
        spread_b = b.half * (abs(sx * b.ux + sy * b.uy) + abs(sy * b.ux - sx * b.uy))
        g = abs(sx * dx + sy * dy) - spread_a - spread_b
        gap = gap if gap > g else g
    if gap > within + _SURE:
        return -1  # the distance is at least the gap
    if gap < -_SURE:
        return 1  # overlapping: the distance is 0
    if gap <= _SURE:
        return 0  # touching, or nearly
    # apart: the distance is the nearest corner's to a side of the other square
    nearest = min(_corner_to_sides(ca, cb), _corner_to_sides(cb, ca))
    distance = math.sqrt(nearest)
    if distance < within - _SURE:
        return 1
    if distance > within + _SURE:
        return -1
    return 0


def _corner_to_sides(
    corners: tuple[float, float, float, float, float, float, float, float],
    sides: tuple[float, float, float, float, float, float, float, float],
) -> float:
    """The squared distance from the nearest of ``corners`` to the square ``sides``'
    outline."""
    nearest = math.inf
    for k in range(4):
        px, py = corners[2 * k], corners[2 * k + 1]
        for e in range(4):
            qx, qy = sides[2 * e], sides[2 * e + 1]
            rx, ry = sides[(2 * e + 2) % 8], sides[(2 * e + 3) % 8]
            ex, ey = rx - qx, ry - qy
            t = ((px - qx) * ex + (py - qy) * ey) / (ex * ex + ey * ey)
            t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
            fx, fy = px - (qx + t * ex), py - (qy + t * ey)
            d = fx * fx + fy * fy
            nearest = nearest if nearest < d else d
    return nearest


def _geos_within(first: Placement, second: Placement, within: float) -> bool:
    """GEOS's distance-within for one pair, the first square prepared (as the setup's
    STRtree query asked it)."""
    prepared = Polygon(square_corners(first))
    shapely.prepare(prepared)
    return bool(shapely.dwithin(prepared, square(second), within))


def is_pillar(cube: str) -> bool:
    return CONTENT.cubes[cube] == PILLAR


def pillars_on(table: Mapping[str, Placement]) -> tuple[str, ...]:
    return tuple(sorted(c for c in table if is_pillar(c)))


@functools.lru_cache(maxsize=64)
def _open_rooms(
    placements: tuple[Placement, ...],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    pillar_places = tuple(p for p in placements if is_pillar(p.cube))
    open_ones, rooms = _open_trios(pillar_places)
    if not open_ones:
        return ()
    pillars = tuple(p.cube for p in pillar_places)
    names = _trio_names(pillars)
    spots = {p.cube: p for p in pillar_places}
    places = [p for p in placements if not is_pillar(p.cube)]
    hits = _touching(rooms, places, lambda t, n: triangle(spots, names[open_ones[t]]))
    cubes = [p.cube for p in places]
    return tuple(
        (names[t], tuple([cubes[n] for n in row])) for t, row in zip(open_ones, hits, strict=True)
    )


@functools.lru_cache(maxsize=64)
def _open_trios(
    pillar_places: tuple[Placement, ...],
) -> tuple[tuple[int, ...], tuple[_Triangle, ...]]:
    """The trios of Pillars (indices in combinations' order) that form a room no other
    Pillar is within or touching, and their triangles. Cached apart from the rest of the
    table: a drop or a flick often leaves every Pillar where it was."""
    table = {p.cube: p for p in pillar_places}
    pillars = tuple(p.cube for p in pillar_places)
    names = _trio_names(pillars)
    squares = [_Square(p) for p in pillar_places]
    count = len(squares)
    # each pair of Pillars' distance, an edge's length in every trio it is part of
    length = [
        [math.hypot(b.x - a.x, b.y - a.y) if i < j else 0.0 for j, b in enumerate(squares)]
        for i, a in enumerate(squares)
    ]
    open_ones: list[int] = []
    rooms: list[_Triangle] = []
    for t, (i, j, k) in enumerate(_trios(count)):
        a, b, c = squares[i], squares[j], squares[k]
        ax, ay, bx, by, cx, cy = a.x, a.y, b.x, b.y, c.x, c.y
        area = abs((bx - ax) * (cy - ay) - (cx - ax) * (by - ay))
        area /= 2.0
        if abs(area - MIN_ROOM_AREA) <= _SURE:
            area = triangle(table, names[t]).area  # as shapely says
        if area < MIN_ROOM_AREA:
            continue
        near = _Triangle((ax, ay, bx, by, cx, cy), length[i][j], length[j][k], length[i][k])
        # a room no other Pillar is within or touching (its own three always are: each
        # corner lies inside its Pillar's square)
        for n in range(count):
            if n in (i, j, k):
                continue
            verdict = near.verdict(squares[n])
            if verdict > 0 or (
                verdict == 0
                and shapely.intersects(square(pillar_places[n]), triangle(table, names[t]))
            ):
                break
        else:
            open_ones.append(t)
            rooms.append(near)
    return tuple(open_ones), tuple(rooms)


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
    # sorted by cube id: the table's keys (unique: no two placements are ever compared)
    return _open_rooms(tuple([at for _, at in sorted(table.items())]))
