"""Loading the content pack (content/drillit.yaml): the only I/O of the engine."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.games.drillit.hexgrid import Hex, disc

_PACK = Path(__file__).parent / "content" / "drillit.yaml"

SUB_EVENTS = ("advance", "intensify", "overheat")
MAIN_EVENTS = (
    "crystal-blue",
    "crystal-red",
    "crystal-yellow",
    "abyss",
    "blackout",
    "trap",
    "fire",
)
HORDE = "horde"
COLOURS = ("blue", "red", "yellow")
DIFFICULTIES = ("easy", "medium", "hard")
DISTANCES = ("short", "medium", "long")
EXIT_OPTIONS = ("1", "2")


@dataclass(frozen=True)
class PathPiece:
    id: str
    shape: str
    openings: tuple[int, ...]
    crystal: str


@dataclass(frozen=True)
class EventCard:
    id: str
    #: sub-event name -> "on" / "off" / "3+"
    sub_events: dict[str, str]
    main: str
    #: yellow, orange, red box: a number of Goblins or "horde"
    attack: tuple[str, ...]

    def sub_event_active(self, name: str, players: int) -> bool:
        mode = self.sub_events[name]
        return mode == "on" or (mode == "3+" and players >= 3)


@dataclass(frozen=True)
class Layout:
    map_radius: int
    exits: dict[str, Hex]

    @functools.cached_property
    def cells(self) -> frozenset[Hex]:
        return frozenset(disc(self.map_radius))


@dataclass(frozen=True)
class Content:
    rules_version: str
    action_points: int
    room_capacity: int
    storage_limits: dict[str, int]
    explosion_fires: int
    crystal_cost: int
    rooms: tuple[int, ...]
    centre: int
    adjacency: dict[int, tuple[int, ...]]
    faces_sector: dict[int, int]
    tank_cells: frozenset[Hex]
    sectors: tuple[int, ...]
    radar_spaces: int
    life_track: int
    layouts: dict[str, Layout]
    #: variant name -> (fewest, most) players: "box" (2-4) or "house"
    player_counts: dict[str, tuple[int, int]]
    pieces: dict[str, PathPiece]
    cards: dict[str, EventCard]
    characters: tuple[str, ...]
    orange_after_abysses: int
    red_after_abysses: int
    top_cards: int
    setup_goblins: int

    def abyss_cards(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.cards.values() if c.main == "abyss")

    def other_cards(self) -> tuple[str, ...]:
        return tuple(c.id for c in self.cards.values() if c.main != "abyss")


def _card(raw: dict[str, Any]) -> EventCard:
    subs = {name: str(raw[name]) for name in SUB_EVENTS}
    for mode in subs.values():
        if mode not in ("on", "off", "3+"):
            raise ValueError(f"card {raw['id']}: bad sub-event mode {mode!r}")
    if raw["main"] not in MAIN_EVENTS:
        raise ValueError(f"card {raw['id']}: unknown main event {raw['main']!r}")
    attack = tuple(str(box) for box in raw["attack"])
    if len(attack) != 3:
        raise ValueError(f"card {raw['id']}: needs three attack boxes")
    return EventCard(raw["id"], subs, raw["main"], attack)


@functools.cache
def load(path: Path = _PACK) -> Content:
    raw = yaml.safe_load(path.read_text())
    book, tank, radar = raw["rulebook"], raw["tank"], raw["radar"]
    pieces = {
        p["id"]: PathPiece(p["id"], p["shape"], tuple(p["openings"]), p["crystal"])
        for p in raw["path_pieces"]["pieces"]
    }
    cards = {c["id"]: _card(c) for c in raw["event_cards"]["cards"]}
    content = Content(
        rules_version=str(raw["rules_version"]),
        action_points=book["action_points"],
        room_capacity=book["room_capacity"],
        storage_limits=dict(book["storage_limits"]),
        explosion_fires=book["explosion_fires"],
        crystal_cost=book["crystal_cost"],
        rooms=tuple(tank["rooms"]),
        centre=tank["centre"],
        adjacency={int(k): tuple(v) for k, v in tank["adjacency"].items()},
        faces_sector={int(k): int(v) for k, v in tank["faces_sector"].items()},
        tank_cells=frozenset(disc(tank["tank_radius"])),
        sectors=tuple(radar["sectors"]),
        radar_spaces=radar["spaces_per_sector"],
        life_track=raw["life_track"]["length"],
        layouts={
            name: Layout(
                spec["map_radius"], {str(k): Hex(v[0], v[1]) for k, v in spec["exits"].items()}
            )
            for name, spec in raw["tunnels"]["distances"].items()
        },
        player_counts={
            name: (int(spec["min"]), int(spec["max"]))
            for name, spec in raw["player_counts"].items()
        },
        pieces=pieces,
        cards=cards,
        characters=tuple(raw["characters"]["names"]),
        orange_after_abysses=book["horde_min_abysses"]["orange"],
        red_after_abysses=book["horde_min_abysses"]["red"],
        top_cards=book["top_cards"],
        setup_goblins=book["setup_goblins_per_sector"],
    )
    _check(content, book)
    return content


def _check(content: Content, book: dict[str, Any]) -> None:
    """Keep every number the rulebook prints."""
    if len(content.pieces) != book["path_pieces"]:
        raise ValueError("the rulebook has 36 Path pieces")
    if len(content.cards) != book["event_cards"]:
        raise ValueError("the Event Deck must contain 18 cards")
    if len(content.abyss_cards()) != book["abyss_cards"]:
        raise ValueError("the rulebook has 5 Abyss cards")
    if content.storage_limits != {"easy": 4, "medium": 3, "hard": 2}:
        raise ValueError("Crystal Storage limits are 4/3/2")
    if content.player_counts["box"] != (2, 4):
        raise ValueError("the box says 2-4 players")
    for name, lay in content.layouts.items():
        if tuple(sorted(lay.exits)) != EXIT_OPTIONS:
            raise ValueError(f"distance {name}: the board has exit options 1 and 2")


CONTENT = load()
