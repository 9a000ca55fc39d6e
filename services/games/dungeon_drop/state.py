"""The match state folded from events (never sent as is: views filter it)."""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement


class Phase(StrEnum):
    NOT_STARTED = "not-started"
    SETUP = "setup"
    NEXT_TURN = "next-turn"
    EXPLORE = "explore"
    ACT = "act"
    ABILITY = "ability"
    MEEPLES = "meeples"
    LOOT = "loot"
    TAKE = "take"
    TURN_OVER = "turn-over"
    ROUND_OVER = "round-over"
    REVEAL = "reveal"
    SCORING = "scoring"
    OVER = "over"


@dataclass(frozen=True)
class FlickAim:
    cube: str
    direction: float
    strength: float


@dataclass(frozen=True)
class DungeonDropState:
    players: tuple[str, ...] = ()
    variant: str = "standard"
    phase: Phase = Phase.NOT_STARTED
    shuffled: tuple[str, ...] = ()
    races: dict[str, str] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)
    quests: dict[str, str] = field(default_factory=dict)
    health: dict[str, int] = field(default_factory=dict)
    #: cube id -> where it rests; only cubes on the table
    table: dict[str, Placement] = field(default_factory=dict)
    #: setup drops picked up and dropped again (spread.py)
    setup_redrops: int = 0
    #: cubes that fell off, re-dropped by the next player's Explore
    aside: tuple[str, ...] = ()
    box_left: int = 0
    #: cubes still to draw from the box in the current Explore (or extra drop)
    to_draw: int = 0
    #: cubes drawn (and set-aside cubes) waiting for the dice of their drop
    pending_drop: tuple[str, ...] = ()
    stash: dict[str, tuple[str, ...]] = field(default_factory=dict)
    shields_used: dict[str, int] = field(default_factory=dict)
    round: int = 0
    order: tuple[str, ...] = ()
    turn: int = 0
    active: str | None = None
    #: the ability primitive being carried out and how many uses remain
    ability: str | None = None
    ability_left: int = 0
    pending_flick: FlickAim | None = None
    ward: bool = False
    #: cubes the hero may still take from outside the room after looting
    take_left: int = 0
    meeples: dict[str, tuple[float, float]] = field(default_factory=dict)
    teamwork: dict[str, int] = field(default_factory=dict)
    last_room: tuple[str, ...] = ()
    quests_revealed: bool = False
    chests_rolled: bool = False
    chest_rolls: dict[str, tuple[int, ...]] = field(default_factory=dict)
    scores: dict[str, int] = field(default_factory=dict)
    winner: str | None = None
    turns_played: int = 0
    flicks: int = 0
    fallen: int = 0

    def explore_count(self) -> int:
        if self.variant == "solo":
            return CONTENT.solo_explore
        return CONTENT.explore[len(self.players)]


FIELDS = frozenset(f.name for f in fields(DungeonDropState))
_new = object.__new__
_set = object.__setattr__


def changed(state: DungeonDropState, **changes: Any) -> DungeonDropState:
    """``dataclasses.replace`` for the state, which every event goes through: the instance
    dict merged with ``changes``, without running ``__init__`` with every field again (the
    state has no ``__post_init__`` to honour). mypy cannot check the names in ``changes``:
    a test folds every event of many matches and checks each state has exactly the
    state's fields (test_dd_folded.py), so a misspelt one cannot pass."""
    new = _new(DungeonDropState)
    _set(new, "__dict__", state.__dict__ | changes)  # past the frozen __setattr__
    return new
