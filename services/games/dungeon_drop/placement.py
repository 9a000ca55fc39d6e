"""What the table's physics (``table.py``) reads and returns: cubes at rest, cubes set in
motion, a simulation's result, and how a simulation steps.

Plain frozen dataclasses, apart from the simulation: events and states carry placements,
and the codec reads these classes' annotations, which a module compiled by mypyc (as
``table.py`` is, ``make install``) would erase.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.games.frozen import quick_init_all


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
