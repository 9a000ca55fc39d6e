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

The space is built with Chipmunk's own calls (pymunk's cffi library), exactly the calls,
in the order, that pymunk's Space, Body and Poly make: the same simulation, bit for bit,
without the Python objects pymunk wraps around each body and shape (they cost as much
as the stepping). ``ROLLOUT`` physics is for search bots' playouts only (``Game``'s
``rollout_engine``): bodies at rest fall asleep and the simulation ends once every body
sleeps, a few millimetres short of where ``FULL`` would leave the last moving cube. A
match's recorded drops and flicks always come from ``FULL``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pymunk._chipmunk import lib as chipmunk

from services.games.dungeon_drop.content import CONTENT
from services.games.frozen import quick_init_all

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


@dataclass(frozen=True)
class Physics:
    """How a simulation steps. ``sleep_after`` None: every body is stepped to the end;
    else a body slower than ``idle_speed`` (mm/s) for ``sleep_after`` seconds falls asleep
    (it is not stepped until something hits it), and the simulation ends once all sleep."""

    steps_per_second: int
    seconds: float
    sleep_after: float | None = None
    idle_speed: float = 0.0


quick_init_all((Placement, Launch, Settled))

#: the rules' physics: every drop and flick of a match
FULL = Physics(CONTENT.table.steps_per_second, CONTENT.table.seconds)
#: search bots' playouts: ~4 times cheaper; the moving cubes stop ~1-2 mm short (median)
ROLLOUT = Physics(CONTENT.table.steps_per_second, CONTENT.table.seconds, 0.05, 5.0)
#: steps between two looks at whether every body sleeps
_SLEEP_CHECK = 10


def real(value: int) -> float:
    """A die roll of ``REAL_SIDES`` sides as a real in [0, 1]."""
    return (value - 1) / (REAL_SIDES - 1)


def on_table(x: float, y: float) -> bool:
    spec = CONTENT.table
    return 0.0 <= x <= spec.width and 0.0 <= y <= spec.height


def simulate(
    table: Mapping[str, Placement],
    launches: Sequence[Launch],
    held: Placement | None = None,
    physics: Physics = FULL,
) -> Settled:
    """Run the table until the launched cubes come to rest (a fixed number of steps).
    ``held`` is a cube a hand holds down where it is: it pushes the cubes it overlaps
    aside, nothing moves it, and it rests exactly there."""
    spec = CONTENT.table
    cp = chipmunk
    space = cp.cpSpaceNew()
    cp.cpSpaceSetGravity(space, (0.0, 0.0))
    cp.cpSpaceSetDamping(space, spec.damping)
    if physics.sleep_after is not None:
        cp.cpSpaceSetSleepTimeThreshold(space, physics.sleep_after)
        cp.cpSpaceSetIdleSpeedThreshold(space, physics.idle_speed)
    moving = {launch.cube: launch for launch in launches}
    if held is not None:
        moving[held.cube] = Launch(held.cube, held.x, held.y, held.angle, 0.0, 0.0, 0.0)
    made: list[tuple[str, Any, Any]] = []
    # Chipmunk's functions looked up once (a simulation makes ~13 calls per cube)
    new_body, set_position, set_angle = cp.cpBodyNew, cp.cpBodySetPosition, cp.cpBodySetAngle
    new_box, add_body, add_shape = cp.cpBoxShapeNew, cp.cpSpaceAddBody, cp.cpSpaceAddShape
    set_friction, set_elasticity = cp.cpShapeSetFriction, cp.cpShapeSetElasticity
    friction, elasticity, radians = spec.friction, spec.elasticity, math.radians
    try:
        for cube in sorted(set(table) | set(moving)):
            edge, mass, moment = _SOLIDS[cube]
            if held is not None and cube == held.cube:
                body = cp.cpBodyNewKinematic()
            else:
                body = new_body(mass, moment)
            launch = moving.get(cube)
            if launch is not None:
                set_position(body, (launch.x, launch.y))
                set_angle(body, radians(launch.angle))
                cp.cpBodySetVelocity(body, (launch.vx, launch.vy))
                cp.cpBodySetAngularVelocity(body, launch.spin)
            else:
                at = table[cube]
                set_position(body, (at.x, at.y))
                set_angle(body, radians(at.angle))
            shape = new_box(body, edge, edge, 0.0)
            made.append((cube, body, shape))
            set_friction(shape, friction)
            set_elasticity(shape, elasticity)
            add_body(space, body)
            add_shape(space, shape)
        _run(space, physics, [b for c, b, _ in made if held is None or c != held.cube])
        placements: list[Placement] = []
        off: list[str] = []
        width, height = spec.width, spec.height
        get_position, get_angle = cp.cpBodyGetPosition, cp.cpBodyGetAngle
        for cube, body, _ in made:
            if held is not None and cube == held.cube:
                placements.append(held)
                continue
            position = get_position(body)
            x, y = float(position.x), float(position.y)
            if 0.0 <= x <= width and 0.0 <= y <= height:  # on_table(x, y)
                angle = math.degrees(get_angle(body)) % 90.0  # the same every 90°
                placements.append(Placement(cube, round(x, 3), round(y, 3), round(angle, 3)))
            else:
                off.append(cube)
        return Settled(tuple(placements), tuple(off))
    finally:
        # the space first: freeing it wakes its bodies (they must still be there) and
        # touches no shape; then each body and shape, none of them in a space any more
        cp.cpSpaceFree(space)
        free_shape, free_body = cp.cpShapeFree, cp.cpBodyFree
        for _, body, shape in made:
            free_shape(shape)
            free_body(body)


def _solid(cube: str) -> tuple[float, float, float]:
    """A cube's edge (mm), mass and moment of inertia (the same numbers every time: the
    mass from the edge, the moment as Chipmunk computes it for a box)."""
    edge = CONTENT.edge(cube)
    mass = edge * edge / 100.0
    return edge, mass, float(chipmunk.cpMomentForBox(mass, edge, edge))


_SOLIDS = {cube: _solid(cube) for cube in CONTENT.cubes}


def _run(space: Any, physics: Physics, dynamic: list[Any]) -> None:
    step, dt = chipmunk.cpSpaceStep, 1.0 / physics.steps_per_second
    steps = round(physics.seconds * physics.steps_per_second)
    if physics.sleep_after is None:
        for _ in range(steps):
            step(space, dt)
        return
    sleeping = chipmunk.cpBodyIsSleeping
    for done in range(1, steps + 1):
        step(space, dt)
        if done % _SLEEP_CHECK == 0 and all(sleeping(body) for body in dynamic):
            return


def drop_reals(cubes: int) -> int:
    """How many random reals a drop of ``cubes`` cubes needs (one more for the height)."""
    return 1 + DROP_REALS_PER_CUBE * cubes


def drop_height(values: Sequence[int]) -> float:
    low, high = CONTENT.drop_height
    return round(low + (high - low) * real(values[0]), 3)


def drop(
    table: Mapping[str, Placement],
    cubes: Sequence[str],
    values: Sequence[int],
    physics: Physics = FULL,
) -> Settled:
    """Drop ``cubes`` over the centre of the table from a height chosen by ``values[0]``:
    each lands scattered around the centre (farther from higher), turned, spinning and
    bouncing outward, then the whole table settles."""
    if len(values) != drop_reals(len(cubes)):
        raise ValueError(f"a drop of {len(cubes)} cubes needs {drop_reals(len(cubes))} reals")
    spec = CONTENT.table
    reach = spec.scatter_per_inch * drop_height(values)
    launches: list[Launch] = []
    last = REAL_SIDES - 1
    reals = [(v - 1) / last for v in values]  # real(v), written out: hundreds a drop
    for i, cube in enumerate(sorted(cubes)):
        at = 1 + DROP_REALS_PER_CUBE * i
        r, bearing, turn, spin, bounce = reals[at : at + DROP_REALS_PER_CUBE]
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
    return simulate({c: p for c, p in table.items() if c not in cubes}, launches, None, physics)


def flick(
    table: Mapping[str, Placement],
    cube: str,
    direction: float,
    strength: float,
    values: Sequence[int],
    physics: Physics = FULL,
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
    return simulate(table, [launch], None, physics)


def place(
    table: Mapping[str, Placement], cube: str, x: float, y: float, physics: Physics = FULL
) -> Settled:
    """Set ``cube`` down at (x, y) by hand (moving a Pillar), turned as it was: it rests
    exactly there (on the table whenever (x, y) is), and cubes it overlaps are pushed
    aside. No randomness: the hand is exact."""
    at = table[cube]
    return simulate(
        {c: p for c, p in table.items() if c != cube}, [], Placement(cube, x, y, at.angle), physics
    )
