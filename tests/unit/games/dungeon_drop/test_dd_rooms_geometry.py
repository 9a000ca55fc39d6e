"""Which cubes a room holds is decided by separating axes in floating point, and by
shapely only where a cube is within a millionth of a millimetre of touching: the rooms and
their cubes must be exactly shapely's, for random tables, for cubes set exactly on an
edge or a corner, turned or not, and for Pillars in a line."""

from __future__ import annotations

import itertools
import math
import random

import shapely
from shapely.geometry import Polygon

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.rooms import (
    MIN_ROOM_AREA,
    is_pillar,
    open_rooms,
    pillars_on,
    room_cubes,
    square,
    triangle,
)


def shapely_room_cubes(table: dict[str, Placement], trio: tuple[str, ...]) -> tuple[str, ...]:
    room = triangle(table, trio)
    others = sorted(c for c in table if c not in trio)
    hits = shapely.intersects(room, [square(table[c]) for c in others])
    return tuple(c for c, hit in zip(others, hits, strict=True) if hit)


def shapely_open_rooms(table: dict[str, Placement]) -> tuple[object, ...]:
    rooms = []
    for trio in itertools.combinations(pillars_on(table), 3):
        if triangle(table, trio).area < MIN_ROOM_AREA:
            continue
        inside = shapely_room_cubes(table, trio)
        if not any(is_pillar(c) for c in inside):
            rooms.append((trio, inside))
    return tuple(rooms)


def random_table(rng: random.Random, cubes: int) -> dict[str, Placement]:
    names = rng.sample(sorted(CONTENT.cubes), cubes)
    spec = CONTENT.table
    return {
        c: Placement(
            c,
            round(rng.uniform(0, spec.width), 3),
            round(rng.uniform(0, spec.height), 3),
            round(rng.uniform(0, 90), 3),
        )
        for c in names
    }


def touching_table(rng: random.Random) -> dict[str, Placement]:
    """Three Pillars and cubes set exactly on (or a hair from) the room's edges and
    corners: axis-aligned edges, so the touching is exact in floating point."""
    table = {
        "pillar01": Placement("pillar01", 200.0, 250.0, 0.0),
        "pillar02": Placement("pillar02", 400.0, 250.0, 0.0),
        "pillar03": Placement("pillar03", 200.0, 450.0, 0.0),
    }
    others = [c for c in sorted(CONTENT.cubes) if not is_pillar(c)]
    for cube in rng.sample(others, 12):
        half = CONTENT.edge(cube) / 2.0
        x = rng.choice([200.0 - half, 200.0 + half, 300.0, 400.0 + half, 199.0 - half])
        y = rng.choice([250.0 - half, 250.0 + half, 249.9999999 - half, 350.0])
        angle = rng.choice([0.0, 0.0, 45.0, 90.0])
        table[cube] = Placement(cube, x, y, angle)
    return table


def test_open_rooms_are_shapely_s_on_random_tables() -> None:
    rng = random.Random(7)
    for _ in range(30):
        table = random_table(rng, rng.randrange(20, 70))
        assert open_rooms(table) == shapely_open_rooms(table)


def test_room_cubes_are_shapely_s_for_every_trio_of_random_tables() -> None:
    rng = random.Random(8)
    for _ in range(10):
        table = random_table(rng, 40)
        pillars = pillars_on(table)
        for trio in itertools.combinations(pillars, 3):
            assert room_cubes(table, trio) == shapely_room_cubes(table, trio)


def test_cubes_exactly_touching_the_room_are_decided_as_shapely_decides() -> None:
    rng = random.Random(9)
    trio = ("pillar01", "pillar02", "pillar03")
    touched = 0
    for _ in range(40):
        table = touching_table(rng)
        expected = shapely_room_cubes(table, trio)
        assert room_cubes(table, trio) == expected
        assert open_rooms(table) == shapely_open_rooms(table)
        touched += sum(
            1
            for c in expected
            if math.isclose(
                square(table[c]).distance(Polygon([(200, 250), (400, 250), (200, 450)]).exterior),
                0.0,
                abs_tol=1e-9,
            )
        )
    assert touched > 20  # the exact touching cases were met


def test_pillars_in_a_line_and_on_one_spot_are_decided_as_shapely_decides() -> None:
    rng = random.Random(10)
    for _ in range(20):
        table = random_table(rng, 30)
        p = ("pillar01", "pillar02", "pillar03")
        table.update({c: Placement(c, 450.0, 300.0, 0.0) for c in p})
        table[p[1]] = Placement(p[1], rng.uniform(0, 900), rng.uniform(0, 600), 0.0)
        a = table[p[0]]
        # the third Pillar on the line through the first two, then on the first one
        b = table[p[1]]
        for x, y in ((2 * b.x - a.x, 2 * b.y - a.y), (a.x, a.y)):
            table[p[2]] = Placement(p[2], x, y, 0.0)
            assert room_cubes(table, p) == shapely_room_cubes(table, p)
            assert open_rooms(table) == shapely_open_rooms(table)
