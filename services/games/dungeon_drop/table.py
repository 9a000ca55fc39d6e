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
from typing import Any, Final

from pymunk._chipmunk import ffi
from pymunk._chipmunk import lib as chipmunk

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Launch, Physics, Placement, Settled

#: each random real of a drop or flick is one die with this many sides
REAL_SIDES = 1_000_000
#: random reals per dropped cube: landing distance, landing bearing, rotation, spin, bounce
DROP_REALS_PER_CUBE = 5
#: random reals of a flick: direction noise, strength noise, spin
FLICK_REALS = 3


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
    held_cube = held.cube if held is not None else ""
    cubes = sorted(set(table) | set(moving))
    bodies: list[Any] = []
    shapes: list[Any] = []
    # Chipmunk's functions looked up once (a simulation makes ~13 calls per cube)
    new_body, set_position, set_angle = cp.cpBodyNew, cp.cpBodySetPosition, cp.cpBodySetAngle
    new_box, add_body, add_shape = cp.cpBoxShapeNew, cp.cpSpaceAddBody, cp.cpSpaceAddShape
    set_friction, set_elasticity = cp.cpShapeSetFriction, cp.cpShapeSetElasticity
    set_user_data, ids = cp.cpBodySetUserData, _BODY_IDS
    friction, elasticity = spec.friction, spec.elasticity
    try:
        for index, cube in enumerate(cubes):
            edge, mass, moment = _SOLIDS[cube]
            body = cp.cpBodyNewKinematic() if cube == held_cube else new_body(mass, moment)
            bodies.append(body)
            launch = moving.get(cube)
            if launch is not None:
                set_position(body, (launch.x, launch.y))
                set_angle(body, launch.angle * _DEG_TO_RAD)  # math.radians, written out
                cp.cpBodySetVelocity(body, (launch.vx, launch.vy))
                cp.cpBodySetAngularVelocity(body, launch.spin)
            else:
                at = table[cube]
                set_position(body, (at.x, at.y))
                set_angle(body, at.angle * _DEG_TO_RAD)
            set_user_data(body, ids[index])
            shape = new_box(body, edge, edge, 0.0)
            shapes.append(shape)
            set_friction(shape, friction)
            set_elasticity(shape, elasticity)
            add_body(space, body)
            add_shape(space, shape)
        _run(space, physics, [b for c, b in zip(cubes, bodies, strict=True) if c != held_cube])
        rows, values = _read_bodies(space, len(cubes))
        placements: list[Placement] = []
        off: list[str] = []
        width, height = spec.width, spec.height
        for index, cube in enumerate(cubes):
            if held is not None and cube == held_cube:
                placements.append(held)
                continue
            at_value = 3 * rows[index]
            x, y = values[at_value], values[at_value + 1]
            if 0.0 <= x <= width and 0.0 <= y <= height:  # on_table(x, y)
                # math.degrees, written out; the same every 90°
                angle = round3((values[at_value + 2] * _RAD_TO_DEG) % 90.0)
                x, y = round3(x), round3(y)
                was = table.get(cube)
                if was is not None and was.x == x and was.y == y and was.angle == angle:
                    placements.append(was)  # at rest where it was (most cubes a simulation)
                else:
                    placements.append(_placement(cube, x, y, angle))
            else:
                off.append(cube)
        return Settled(tuple(placements), tuple(off))
    finally:
        # the space first: freeing it wakes its bodies (they must still be there) and
        # touches no shape; then each body and shape, none of them in a space any more
        cp.cpSpaceFree(space)
        free_shape, free_body = cp.cpShapeFree, cp.cpBodyFree
        for shape in shapes:
            free_shape(shape)
        for body in bodies:
            free_body(body)


def _placement(cube: str, x: float, y: float, angle: float) -> Placement:
    """``Placement(cube, x, y, angle)``, its instance dict stored whole as its quick
    ``__init__`` stores it (services/games/frozen.py), without a Python frame for each
    cube a simulation reads back."""
    at: Placement = _new(Placement)
    _set(at, "__dict__", {"cube": cube, "x": x, "y": y, "angle": angle})
    return at


_new: Final = object.__new__
_set: Final = object.__setattr__  # past the frozen __setattr__


def round3(value: float) -> float:
    """``round(value, 3)``, the same float, several times faster for the values a table
    holds. Python rounds the exact binary value to the nearest thousandth (ties to even)
    and returns the float nearest that decimal; ``n / 1000.0`` is that float for the
    integer n (IEEE division is correctly rounded), and n is ``value * 1000.0`` rounded
    to an integer wherever that product is not within a millionth of a half (its
    rounding error is below 1e-9 for any value under 10**6). Elsewhere, and for negative
    values (signed zeros), Python's ``round`` decides."""
    scaled = value * 1000.0
    if 0.0 <= scaled < 1e9:
        fraction = scaled % 1.0
        if abs(fraction - 0.5) > 1e-6:
            whole = scaled - fraction
            return (whole + 1.0 if fraction > 0.5 else whole) / 1000.0
    return round(value, 3)


#: math.radians' and math.degrees' factors (CPython's ``x * degToRad``, ``x * radToDeg``)
_DEG_TO_RAD: Final = math.pi / 180.0
_RAD_TO_DEG: Final = 180.0 / math.pi
#: each body's user data: its index among the simulation's cubes, plus one
_BODY_IDS = tuple(ffi.cast("void *", i + 1) for i in range(len(CONTENT.cubes) + 1))
_READ: Final = chipmunk.BODY_ID | chipmunk.POSITION | chipmunk.ANGLE
_READ_BODIES = ffi.addressof(chipmunk, "pmSpaceBodyGetIteratorFuncBatched")


def _read_bodies(space: Any, count: int) -> tuple[list[int], list[float]]:
    """Every body's place in one call (pymunk's batch reader): for the i-th cube, its
    row r (rows[i]) holds x, y and the angle in radians at values[3r : 3r + 3]. Bodies
    that fell asleep leave Chipmunk's list in another order, so each row says whose it is."""
    cp = chipmunk
    floats = cp.pmFloatArrayNew(3 * count)
    ints = cp.pmIntArrayNew(count)
    try:
        data = ffi.new("pmBatchedData *")
        data.fields = _READ
        data.floatArray = floats
        data.intArray = ints
        cp.cpSpaceEachBody(space, _READ_BODIES, data)
        values: list[float] = ffi.unpack(floats.arr, floats.num)
        ids: list[int] = ffi.unpack(ints.arr, ints.num)
    finally:
        cp.pmFloatArrayFree(floats)
        cp.pmIntArrayFree(ints)
    rows = [0] * count
    for row, ident in enumerate(ids):
        rows[ident - 1] = row
    return rows, values


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
    count = len(dynamic)
    awake = 0  # the body last seen awake: the likeliest to be awake still
    for done in range(1, steps + 1):
        step(space, dt)
        if done % _SLEEP_CHECK == 0:
            # whether every body sleeps, asked from that body on (the same answer)
            for k in range(count):
                at = awake + k
                if at >= count:
                    at -= count
                if not sleeping(dynamic[at]):
                    awake = at
                    break
            else:
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
