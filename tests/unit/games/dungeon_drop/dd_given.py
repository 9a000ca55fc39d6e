"""Given-events helpers for the Dungeon Drop tests: matches built from events only, with
tables laid out by hand (placements are facts in events, so a test may state them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.state import DungeonDropState

PLAYERS = ("ann", "bob")
RACES = {"ann": "gnome", "bob": "orc", "cid": "dwarf", "dee": "goliath"}  # initiative 1, 9, 6, 15
CLASSES = {"ann": "cleric", "bob": "ranger", "cid": "rogue", "dee": "mage"}
QUESTS = {"ann": "jeweler", "bob": "slayer", "cid": "miser", "dee": "locksmith"}

# A small triangle of pillars around (300, 300): corners pillar01..03; pillar04 far away.
TRIANGLE = {"pillar01": (250.0, 250.0), "pillar02": (350.0, 250.0), "pillar03": (300.0, 350.0)}


def at(cube: str, x: float, y: float, angle: float = 0.0) -> Placement:
    return Placement(cube, x, y, angle)


def room_table(*inside: Placement, far: Sequence[Placement] = ()) -> tuple[Placement, ...]:
    """The three-pillar room plus ``inside`` cubes, and a distant fourth pillar."""
    pillars = [at(p, x, y) for p, (x, y) in TRIANGLE.items()]
    return (*pillars, at("pillar04", 800.0, 500.0), *inside, *far)


def setup_events(
    players: Sequence[str] = PLAYERS,
    races: dict[str, str] | None = None,
    classes: dict[str, str] | None = None,
    quests: dict[str, str] | None = None,
    variant: str = "standard",
    table: Sequence[Placement] | None = None,
    box: int = 36,
) -> list[Any]:
    players = tuple(players)
    races = races or {p: RACES[p] for p in players}
    classes = classes or {p: CLASSES[p] for p in players}
    quests = quests or {p: QUESTS[p] for p in players}
    table = tuple(table) if table is not None else room_table()
    first = min(players, key=lambda p: CONTENT.races[races[p]].initiative)
    return [
        ev.MatchSetUp(players, variant, CONTENT.rules_version),
        ev.PileShuffled("races", 15),
        ev.RacesDealt(races),
        ev.PileShuffled("classes", 10),
        ev.ClassesDealt(classes),
        ev.PileShuffled("quests", 10),
        ev.QuestsDealt(quests),
        ev.PileShuffled("box", box),
        ev.CubesDropped(first, "setup", tuple(p.cube for p in table), 9.0, table, ()),
    ]


def given(*events: Any, **setup: Any) -> DungeonDropState:
    return GAME.fold([*setup_events(**setup), *events])


def at_loot(player: str, *events: Any, past: Sequence[Any] = (), **setup: Any) -> DungeonDropState:
    """``player``'s Loot step of round 1 after ``past`` turns' events (nothing explored),
    ``events`` happening during the turn before the Act step ends."""
    return given(*past, ev.TurnStarted(player, 1, 0), *events, ev.AbilityEnded(player), **setup)


def at_act(player: str, *events: Any, past: Sequence[Any] = (), **setup: Any) -> DungeonDropState:
    return given(*past, ev.TurnStarted(player, 1, 0), *events, **setup)


def looted(player: str, *cubes: str, health: int) -> ev.RoomLooted:
    """A past room that put ``cubes`` in ``player``'s stash."""
    return ev.RoomLooted(player, ("pillar01", "pillar02", "pillar03"), cubes, 0, 0, 0, health, ())
