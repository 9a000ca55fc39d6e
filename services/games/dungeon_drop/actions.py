"""What a player may ask for. Flicks, pillar moves and meeples carry continuous
parameters (``legal_actions`` offers them as ``ActionTemplate``s)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.frozen import quick_init_all


@dataclass(frozen=True)
class UseAbility:
    """Act: activate the Race or the Class ability (``source`` = "race" / "class")."""

    source: str


@dataclass(frozen=True)
class SkipAbility:
    pass


@dataclass(frozen=True)
class Flick:
    """Flick ``cube`` toward ``direction`` (degrees, 0 = east, counter-clockwise) with
    ``strength`` in [0, 1]."""

    cube: str
    direction: float
    strength: float


@dataclass(frozen=True)
class MovePillar:
    pillar: str
    x: float
    y: float


@dataclass(frozen=True)
class EndAbility:
    """Stop using the ability before its uses run out."""


@dataclass(frozen=True)
class PlaceMeeple:
    x: float
    y: float


@dataclass(frozen=True)
class LootRoom:
    """Form a room from three Pillars and collect what is within or touching it."""

    pillars: tuple[str, ...]


@dataclass(frozen=True)
class LeaveEmptyHanded:
    """Form a room that collects nothing (always possible: no cube is taken)."""


@dataclass(frozen=True)
class TakeCube:
    cube: str


@dataclass(frozen=True)
class SkipTake:
    pass


ACTION_TYPES: tuple[type, ...] = (
    UseAbility,
    SkipAbility,
    Flick,
    MovePillar,
    EndAbility,
    PlaceMeeple,
    LootRoom,
    LeaveEmptyHanded,
    TakeCube,
    SkipTake,
)

quick_init_all(ACTION_TYPES)
