"""Vocabulary shared by the Crashland actions, events, state and view."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from services.games.frozen import quick_init


class Phase(enum.StrEnum):
    SETUP = "setup"
    MOVEMENT = "movement"  # phase 1
    EVENTS = "events"  # phase 2: events and equipment
    SYSTEMS_CHECK = "systems_check"  # phase 3
    OVER = "over"


class Direction(enum.StrEnum):
    NORTH = "north"
    EAST = "east"
    SOUTH = "south"
    WEST = "west"


class Payment(enum.StrEnum):
    FREE = "free"
    OXYGEN = "oxygen"
    BATTERY = "battery"


class System(enum.StrEnum):
    OXYGEN = "oxygen"
    BATTERY = "battery"


class Boost(enum.StrEnum):
    """The Dome Shelter choice: +3 to one system or +2 to both."""

    OXYGEN = "oxygen"
    BATTERY = "battery"
    BOTH = "both"


class Equipment(enum.StrEnum):
    DOME_SHELTER = "dome_shelter"
    JETPACK = "jetpack"
    SOLAR_RECHARGE = "solar_recharge"
    SATELLITE_UPLINK = "satellite_uplink"


class MapKind(enum.StrEnum):
    SPACESHIP = "spaceship"
    DOME = "dome"
    BEACON = "beacon"
    PLAIN = "plain"


class Axis(enum.StrEnum):
    VERTICAL = "vertical"  # points up and down: gives the tank's column
    HORIZONTAL = "horizontal"  # points left and right: gives the tank's row


@dataclass(frozen=True, order=True)
class Position:
    """A map card's place in the grid, 0-based; row 0 is the top (north) row."""

    row: int
    column: int

    def step(self, direction: Direction) -> Position:
        d_row, d_col = _DELTAS[direction]
        return Position(self.row + d_row, self.column + d_col)


quick_init(Position)

_DELTAS: dict[Direction, tuple[int, int]] = {
    Direction.NORTH: (-1, 0),
    Direction.EAST: (0, 1),
    Direction.SOUTH: (1, 0),
    Direction.WEST: (0, -1),
}
