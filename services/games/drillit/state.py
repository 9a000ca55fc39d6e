"""The match state: everything the rules need, including hidden information
(the event deck's order), which ``view`` never shows."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from services.games.drillit.content import COLOURS, CONTENT
from services.games.drillit.hexgrid import Hex
from services.games.frozen import quick_init_all


class Phase(StrEnum):
    NOT_STARTED = "not-started"
    SETUP = "setup"  # dealing pieces, characters, the event deck, start rooms
    TURN_START = "turn-start"  # the active player reveals an Event card
    FIRE = "fire"  # the Fire main event waits for its dice
    ATTACK = "attack"  # the Goblin attack waits for its dice
    ACTIONS = "actions"
    TURBO = "turbo"  # a Turbo waits for its next Path piece (draw, then placement)
    REFILL = "refill"  # players without a Path piece draw one
    TURN_OVER = "turn-over"
    OVER = "over"


# Phase's members as plain names, for the turn flow that tests the phase at every step: on
# Python 3.11 reading ``Phase.ACTIONS`` goes through the ``__getattr__`` hook of
# ``EnumType``, as costly as a function call.
NOT_STARTED, SETUP, TURN_START = Phase.NOT_STARTED, Phase.SETUP, Phase.TURN_START
FIRE, ATTACK, ACTIONS, TURBO = Phase.FIRE, Phase.ATTACK, Phase.ACTIONS, Phase.TURBO
REFILL, TURN_OVER, OVER = Phase.REFILL, Phase.TURN_OVER, Phase.OVER


@dataclass(frozen=True)
class PlacedPiece:
    piece: str
    cell: Hex
    rotation: int


@dataclass(frozen=True)
class SectorGoblins:
    """Goblins of one radar sector: ``spaces[0]`` inside the facing room, ``spaces[d]``
    on radar space ``d`` (1 touches the Armor, the last is the blue outermost one)."""

    sector: int
    spaces: tuple[int, ...]


quick_init_all((PlacedPiece, SectorGoblins))


@functools.lru_cache(maxsize=4096)
def sector_goblins(sector: int, spaces: tuple[int, ...]) -> SectorGoblins:
    """``SectorGoblins(sector, spaces)``: they are immutable, so one instance of each serves
    every radar (building a frozen one costs several times the cache's look-up, and every
    Goblin Advance and attack builds radars)."""
    return SectorGoblins(sector, spaces)


def empty_radar() -> tuple[SectorGoblins, ...]:
    return tuple(SectorGoblins(s, (0,) * (CONTENT.radar_spaces + 1)) for s in CONTENT.sectors)


def setup_radar() -> tuple[SectorGoblins, ...]:
    """One Goblin on each blue (outermost) radar space."""
    return _SETUP_RADAR


def _setup_radar() -> tuple[SectorGoblins, ...]:
    outer = (0,) * CONTENT.radar_spaces + (CONTENT.setup_goblins,)
    return tuple(SectorGoblins(s, outer) for s in CONTENT.sectors)


#: the radar is immutable: one set-up radar serves every match
_SETUP_RADAR = _setup_radar()


@dataclass(frozen=True)
class DrillitState:
    phase: Phase = Phase.NOT_STARTED
    players: tuple[str, ...] = ()
    difficulty: str = "easy"
    distance: str = "short"
    storage_limit: int = 4
    exit: str = "1"  # the exit option holding the Exit piece: only it wins
    plan_b: bool = True  # the Exit piece may still move to the other option once
    # --- setup progress ---
    path_pile: int = 0  # face-down pieces left (their order stays with the decks service)
    path_pile_shuffled: bool = False
    characters_shuffled: bool = False
    characters: dict[str, str] = field(default_factory=dict)
    staged: dict[str, tuple[str, ...]] = field(default_factory=dict)  # hidden
    shuffled_decks: tuple[str, ...] = ()
    event_deck: tuple[str, ...] = ()  # hidden: top card first
    event_deck_built: bool = False
    choosing_room: str | None = None  # rolled a 6, chooses a start room
    # --- board ---
    rooms: dict[str, int] = field(default_factory=dict)  # player -> room (0 = centre)
    hands: dict[str, str] = field(default_factory=dict)  # player -> Path piece
    placed: tuple[PlacedPiece, ...] = ()
    abysses: tuple[Hex, ...] = ()
    abysses_found: int = 0
    fires: dict[int, int] = field(default_factory=dict)  # room -> fires (only burning)
    armor_destroyed: tuple[int, ...] = ()  # rooms whose Armor lies on the Life Track
    radar: tuple[SectorGoblins, ...] = field(default_factory=empty_radar)
    permanent_damage: int = 0
    crystals: dict[str, int] = field(default_factory=lambda: dict.fromkeys(COLOURS, 0))
    # --- turn ---
    turn: int = 0
    active: str | None = None
    action_points: int = 0
    current_card: str | None = None
    blackout: bool = False  # the Goblin attack waits until after the actions
    trap: bool = False  # no Path piece may be placed this turn
    actions_done: bool = False
    fire_criticals: int = 0
    attack_sixes: int = 0  # 6s rolled so far in this Goblin attack
    mechanic_free_repair_used: bool = False
    turbo_left: int = 0  # Turbo pieces still to draw and place
    turbo_piece: str | None = None  # drawn, waiting for placement
    turbo_anchor: Hex | None = None  # the second Turbo piece must touch the first
    # --- end ---
    won: bool | None = None
    end_reason: str = ""
    # --- statistics ---
    goblins_defeated: int = 0
    crystals_used: int = 0

    @property
    def temporary_damage(self) -> int:
        return len(self.armor_destroyed)

    @property
    def damage(self) -> int:
        return self.temporary_damage + self.permanent_damage

    @property
    def crystal_total(self) -> int:
        return sum(self.crystals.values())

    def goblins(self, sector: int) -> tuple[int, ...]:
        at = _SECTOR_AT.get(sector)
        return self.radar[CONTENT.sectors.index(sector) if at is None else at].spaces

    def with_goblins(self, sector: int, spaces: tuple[int, ...]) -> DrillitState:
        return changed(self, radar=self.radar_with(sector, spaces))

    def radar_with(self, sector: int, spaces: tuple[int, ...]) -> tuple[SectorGoblins, ...]:
        """The radar with ``spaces`` for ``sector``'s Goblins."""
        radar = self.radar
        at = _SECTOR_AT.get(sector, -1)
        if 0 <= at < len(radar) and radar[at].sector == sector:
            # the radar holds each sector once, in their order (as ``goblins`` reads it):
            # one entry replaced, without a generator over the five
            changed = list(radar)
            changed[at] = sector_goblins(sector, spaces)
            return tuple(changed)
        return tuple(sector_goblins(s.sector, spaces) if s.sector == sector else s for s in radar)

    def occupants(self, room: int) -> tuple[str, ...]:
        return tuple(p for p in self.players if self.rooms.get(p) == room)

    def character_of(self, character: str) -> str | None:
        for player, name in self.characters.items():
            if name == character:
                return player
        return None

    def is_(self, player: str, character: str) -> bool:
        return self.characters.get(player) == character


#: sector -> its place on the radar (``CONTENT.sectors.index``, once)
_SECTOR_AT = {sector: i for i, sector in enumerate(CONTENT.sectors)}
_FIELDS = frozenset(f.name for f in fields(DrillitState))
_new = object.__new__


def changed(state: DrillitState, **changes: Any) -> DrillitState:
    """``dataclasses.replace`` for the state, which every event goes through: a copy of the
    instance's fields with ``changes`` over them. ``replace`` calls ``__init__`` with every
    field, a tenth of a playout's time; the state has no ``__post_init__`` nor init-only
    fields for it to honour. mypy cannot check the names in ``changes``: a test folds every
    event of many matches and checks each state has exactly the state's fields
    (tests/unit/games/drillit/test_drillit_folded.py), so a misspelt one cannot pass."""
    new = _new(DrillitState)
    # filled in place, past the frozen __setattr__ (cheaper than a copy set as __dict__)
    attributes = new.__dict__
    attributes |= state.__dict__  # (``|=``, not ``update``: no argument parsing)
    attributes |= changes
    return new


def copied(state: DrillitState) -> DrillitState:
    """A copy of ``state`` (``changed`` with no changes), for the folds to lay events'
    changes over in place (``evolve.fold_into``)."""
    new = _new(DrillitState)
    attributes = new.__dict__
    attributes |= state.__dict__  # (``|=``, not ``update``: no argument parsing)
    return new
