"""The table as rigid-body physics (pymunk over Chipmunk2D), seen from above.

Physics runs only where a chance outcome or a decision is turned into events (``resolve``
and ``decide``); the resulting positions are recorded in the events and folding copies
them, so replay never simulates. A simulation is a pure function of the table, the
launched cubes and the random reals taken from the dice service: bodies are added in
cube-id order and stepped a fixed number of times, so the same inputs on the same build
give the same positions.

Model: cubes slide on the table top (no gravity in the plane); the table's friction is
linear and angular damping; cubes collide with each other with friction and bounce.
A cube whose centre ends beyond the table's edge has fallen off.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pymunk

from services.games.dungeon_drop.content import CONTENT

#: each random real of a drop or flick is one die with this many sides
REAL_SIDES = 1_000_000
#: random reals per dropped cube: landing distance, landing bearing, rotation, spin, bounce
DROP_REALS_PER_CUBE = 5
#: random reals of a flick: direction noise, strength noise, spin
FLICK_REALS = 3


@dataclass(frozen=True)
class Placement:
    """A cube at rest on the table: centre in millimetres, rotation in degrees."""

    cube: str
    x: float
    y: float
    angle: float


@dataclass(frozen=True)
class Launch:
    """A cube set in motion: where it starts and how it moves (mm, mm/s, rad/s)."""

    cube: str
    x: float
    y: float
    angle: float
    vx: float
    vy: float
    spin: float


@dataclass(frozen=True)
class Settled:
    """Every cube on the table after a simulation, and the cubes that fell off."""

    placements: tuple[Placement, ...]
    off_table: tuple[str, ...]


def real(value: int) -> float:
    """A die roll of ``REAL_SIDES`` sides as a real in [0, 1]."""
    return (value - 1) / (REAL_SIDES - 1)


def on_table(x: float, y: float) -> bool:
    spec = CONTENT.table
    return 0.0 <= x <= spec.width and 0.0 <= y <= spec.height


def simulate(
    table: Mapping[str, Placement], launches: Sequence[Launch], held: Placement | None = None
) -> Settled:
    """Run the table until the launched cubes come to rest (a fixed number of steps).
    ``held`` is a cube a hand holds down where it is: it pushes the cubes it overlaps
    aside, nothing moves it, and it rests exactly there."""
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
            angle = math.degrees(body.angle) % 90.0  # a square looks the same every 90°
            placements.append(Placement(cube, round(x, 3), round(y, 3), round(angle, 3)))
        else:
            off.append(cube)
    return Settled(tuple(placements), tuple(off))


def drop_reals(cubes: int) -> int:
    """How many random reals a drop of ``cubes`` cubes needs (one more for the height)."""
    return 1 + DROP_REALS_PER_CUBE * cubes


def drop_height(values: Sequence[int]) -> float:
    low, high = CONTENT.drop_height
    return round(low + (high - low) * real(values[0]), 3)


def drop(table: Mapping[str, Placement], cubes: Sequence[str], values: Sequence[int]) -> Settled:
    """Drop ``cubes`` over the centre of the table from a height chosen by ``values[0]``:
    each lands scattered around the centre (farther from higher), turned, spinning and
    bouncing outward, then the whole table settles."""
    if len(values) != drop_reals(len(cubes)):
        raise ValueError(f"a drop of {len(cubes)} cubes needs {drop_reals(len(cubes))} reals")
    spec = CONTENT.table
    reach = spec.scatter_per_inch * drop_height(values)
    launches: list[Launch] = []
    for i, cube in enumerate(sorted(cubes)):
        r, bearing, turn, spin, bounce = (
            real(v) for v in values[1 + DROP_REALS_PER_CUBE * i : 1 + DROP_REALS_PER_CUBE * (i + 1)]
        )
        theta = 2.0 * math.pi * bearing
        distance = reach * math.sqrt(r)  # uniform over the landing disc
        speed = spec.bounce_speed * bounce
        launches.append(
            Launch(
                cube,
                spec.width / 2 + distance * math.cos(theta),
                spec.height / 2 + distance * math.sin(theta),
                90.0 * turn,
                speed * math.cos(theta),
                speed * math.sin(theta),
                (2.0 * spin - 1.0) * spec.max_spin,
            )
        )
    return simulate({c: p for c, p in table.items() if c not in cubes}, launches)


def flick(
    table: Mapping[str, Placement],
    cube: str,
    direction: float,
    strength: float,
    values: Sequence[int],
) -> Settled:
    """Flick ``cube`` toward ``direction`` (degrees, 0 = east, counter-clockwise) with
    ``strength`` (0..1 of the hardest flick); a finger is not exact, so the dice add a
    little noise to both, and some spin."""
    if len(values) != FLICK_REALS:
        raise ValueError(f"a flick needs {FLICK_REALS} reals")
    spec = CONTENT.table
    d_noise, s_noise, spin = (real(v) for v in values)
    heading = math.radians(direction + (2.0 * d_noise - 1.0) * spec.flick_noise_degrees)
    power = min(1.0, max(0.0, strength * (1.0 + (2.0 * s_noise - 1.0) * spec.flick_noise_strength)))
    speed = spec.flick_speed * power
    at = table[cube]
    launch = Launch(
        cube,
        at.x,
        at.y,
        at.angle,
        speed * math.cos(heading),
        speed * math.sin(heading),
        (2.0 * spin - 1.0) * spec.max_spin,
    )
    return simulate(table, [launch])


def place(table: Mapping[str, Placement], cube: str, x: float, y: float) -> Settled:
    """Set ``cube`` down at (x, y) by hand (moving a Pillar), turned as it was: it rests
    exactly there (on the table whenever (x, y) is), and cubes it overlaps are pushed
    aside. No randomness: the hand is exact."""
    at = table[cube]
    return simulate(
        {c: p for c, p in table.items() if c != cube}, [], Placement(cube, x, y, at.angle)
    )
