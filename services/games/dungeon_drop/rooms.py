"""Rooms: the triangle of three Pillars and the cubes "within or touching" it (shapely).

A cube is the rotated square it covers on the table; it is in the room when that square
intersects the closed triangle whose corners are the three Pillars' centres (so a cube
merely touching an edge counts). The three corner Pillars form the room and are never
collected; a room that any other Pillar touches would collect a Pillar and is not
allowed. A degenerate triangle (three Pillars in a line) is no room.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Mapping

import shapely
from shapely.geometry import Point, Polygon

from services.games.dungeon_drop.content import CONTENT, PILLAR
from services.games.dungeon_drop.table import Placement

#: a triangle with a smaller area (mm²) is three Pillars in a line, not a room
MIN_ROOM_AREA = 50.0


@functools.lru_cache(maxsize=8192)
def square(at: Placement) -> Polygon:
    """The rotated square a cube covers (cached: placements are immutable)."""
    half = CONTENT.edge(at.cube) / 2.0
    rad = math.radians(at.angle)
    c, s = math.cos(rad), math.sin(rad)
    corners = [(dx, dy) for dx, dy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    return Polygon(
        [(at.x + half * (dx * c - dy * s), at.y + half * (dx * s + dy * c)) for dx, dy in corners]
    )


def triangle(table: Mapping[str, Placement], pillars: tuple[str, ...]) -> Polygon:
    return Polygon([(table[p].x, table[p].y) for p in pillars])


def room_cubes(table: Mapping[str, Placement], pillars: tuple[str, ...]) -> tuple[str, ...]:
    """Every cube within or touching the room, its three corner Pillars left out."""
    room = triangle(table, pillars)
    others = sorted(c for c in table if c not in pillars)
    hits = shapely.intersects(room, [square(table[c]) for c in others])
    return tuple(c for c, hit in zip(others, hits, strict=True) if hit)


def contains_point(
    table: Mapping[str, Placement], pillars: tuple[str, ...], x: float, y: float
) -> bool:
    """A meeple at (x, y) is within or touching the room."""
    return bool(triangle(table, pillars).intersects(Point(x, y)))


def is_pillar(cube: str) -> bool:
    return CONTENT.cubes[cube] == PILLAR


def pillars_on(table: Mapping[str, Placement]) -> tuple[str, ...]:
    return tuple(sorted(c for c in table if is_pillar(c)))


@functools.lru_cache(maxsize=64)
def _open_rooms(
    placements: tuple[Placement, ...],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    table = {p.cube: p for p in placements}
    cubes = sorted(table)
    squares = [square(table[c]) for c in cubes]
    shapely.prepare(squares)
    pillars = pillars_on(table)
    rooms = []
    for trio in itertools.combinations(pillars, 3):
        room = triangle(table, trio)
        if room.area < MIN_ROOM_AREA:
            continue
        hits = shapely.intersects(squares, room)
        inside = tuple(c for c, hit in zip(cubes, hits, strict=True) if hit and c not in trio)
        if not any(is_pillar(c) for c in inside):
            rooms.append((trio, inside))
    return tuple(rooms)


def open_rooms(
    table: Mapping[str, Placement],
) -> tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]:
    """Every room that collects no Pillar, with the cubes it would collect."""
    return _open_rooms(tuple(sorted(table.values(), key=lambda p: p.cube)))
