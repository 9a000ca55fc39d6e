"""The table is simulated with Chipmunk's own calls, the ones pymunk's Space, Body and
Poly make: a simulation must give exactly what the same simulation built with pymunk's
objects gives (the reference below, table.py's code before), for drops onto an empty or
crowded table, flicks and held Pillars. ``ROLLOUT`` physics (search bots' playouts only)
stops when every cube sleeps: close to ``FULL``, never used for a match's own events."""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Mapping, Sequence

import pymunk

from services.games.dungeon_drop import GAME
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Launch, Placement, Settled
from services.games.dungeon_drop.table import (
    FULL,
    REAL_SIDES,
    ROLLOUT,
    drop,
    drop_reals,
    flick,
    on_table,
    place,
    simulate,
)


def pymunk_simulate(
    table: Mapping[str, Placement], launches: Sequence[Launch], held: Placement | None = None
) -> Settled:
    """The simulation written with pymunk's objects."""
    spec = CONTENT.table
    space = pymunk.Space()
    space.gravity = (0.0, 0.0)
    space.damping = spec.damping
    moving = {launch.cube: launch for launch in launches}
    if held is not None:
        moving[held.cube] = Launch(held.cube, held.x, held.y, held.angle, 0.0, 0.0, 0.0)
    bodies: dict[str, pymunk.Body] = {}
    for cube in sorted(set(table) | set(moving)):
        edge = CONTENT.edge(cube)
        mass = edge * edge / 100.0
        if held is not None and cube == held.cube:
            body = pymunk.Body(body_type=pymunk.Body.KINEMATIC)
        else:
            body = pymunk.Body(mass, pymunk.moment_for_box(mass, (edge, edge)))
        launch = moving.get(cube)
        if launch is not None:
            body.position = (launch.x, launch.y)
            body.angle = math.radians(launch.angle)
            body.velocity = (launch.vx, launch.vy)
            body.angular_velocity = launch.spin
        else:
            at = table[cube]
            body.position = (at.x, at.y)
            body.angle = math.radians(at.angle)
        shape = pymunk.Poly.create_box(body, (edge, edge))
        shape.friction = spec.friction
        shape.elasticity = spec.elasticity
        space.add(body, shape)
        bodies[cube] = body
    dt = 1.0 / spec.steps_per_second
    for _ in range(round(spec.seconds * spec.steps_per_second)):
        space.step(dt)
    placements: list[Placement] = []
    off: list[str] = []
    for cube, body in bodies.items():
        if held is not None and cube == held.cube:
            placements.append(held)
            continue
        x, y = float(body.position.x), float(body.position.y)
        if on_table(x, y):
            angle = math.degrees(body.angle) % 90.0
            placements.append(Placement(cube, round(x, 3), round(y, 3), round(angle, 3)))
        else:
            off.append(cube)
    return Settled(tuple(placements), tuple(off))


def reals(rng: random.Random, count: int) -> tuple[int, ...]:
    return tuple(rng.randint(1, REAL_SIDES) for _ in range(count))


def crowded(rng: random.Random) -> dict[str, Placement]:
    """A table after the setup drop and a few Explores."""
    cubes = sorted(CONTENT.cubes)
    table = {
        p.cube: p for p in drop({}, rng.sample(cubes, 40), reals(rng, drop_reals(40))).placements
    }
    return table


def launches_of(table: Mapping[str, Placement], rng: random.Random) -> list[Launch]:
    cube = rng.choice(sorted(table))
    at = table[cube]
    heading = rng.uniform(0, 2 * math.pi)
    speed = rng.uniform(0, 1400)
    return [
        Launch(cube, at.x, at.y, at.angle, speed * math.cos(heading), speed * math.sin(heading), 3)
    ]


def test_simulations_are_pymunk_s_bit_for_bit() -> None:
    rng = random.Random(11)
    for _ in range(12):
        table = crowded(rng)
        # a flick, a drop of new cubes onto the table, a Pillar held down, an empty table
        launches = launches_of(table, rng)
        assert simulate(table, launches) == pymunk_simulate(table, launches)
        outside = [c for c in sorted(CONTENT.cubes) if c not in table][:3]
        dropped = [
            Launch(c, 450 + 9 * i, 300, 10.0 * i, 50.0 * i, -40.0, 1.0)
            for i, c in enumerate(outside)
        ]
        assert simulate(table, dropped) == pymunk_simulate(table, dropped)
        pillar = next(c for c in sorted(table) if c.startswith("pillar"))
        rest = {c: p for c, p in table.items() if c != pillar}
        held = Placement(pillar, rng.uniform(0, 900), rng.uniform(0, 600), table[pillar].angle)
        assert simulate(rest, [], held) == pymunk_simulate(rest, [], held)
        assert simulate({}, dropped) == pymunk_simulate({}, dropped)


def test_rollout_physics_leaves_cubes_close_to_where_full_physics_does() -> None:
    rng = random.Random(12)
    moved: list[float] = []
    for _ in range(12):
        table = crowded(rng)
        cube = rng.choice(sorted(table))
        direction, strength, dice = rng.uniform(0, 360), rng.uniform(0, 1), reals(rng, 3)
        full = flick(table, cube, direction, strength, dice)
        rollout = flick(table, cube, direction, strength, dice, ROLLOUT)
        assert {p.cube for p in rollout.placements} | set(rollout.off_table) == set(table)
        full_at = {p.cube: p for p in full.placements}
        rollout_at = {p.cube: p for p in rollout.placements}
        moved += [
            math.dist((full_at[c].x, full_at[c].y), (rollout_at[c].x, rollout_at[c].y))
            for c in full_at.keys() & rollout_at.keys()
            if full_at[c] != table[c]
        ]
        pillar = next(c for c in sorted(table) if c.startswith("pillar"))
        held = place(table, pillar, 450.0, 300.0, ROLLOUT)
        assert next(p for p in held.placements if p.cube == pillar) == Placement(
            pillar, 450.0, 300.0, table[pillar].angle
        )
    assert moved and statistics.median(moved) < 5.0


def test_a_match_s_own_drops_and_flicks_use_full_physics() -> None:
    assert GAME.physics == FULL
    assert GAME.rollout_engine().physics == ROLLOUT
    assert GAME.rollout_engine().rollout_engine() is GAME.rollout_engine()
