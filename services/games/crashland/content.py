"""The content pack: map cards, event and equipment cards, levels (loaded once at import).

The rulebook gives no card counts; ``content/crashland.yaml`` supplies them as house
content. This is the engine's only I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import yaml

from services.games.crashland.model import Axis, Equipment, MapKind, System

_PACK = Path(__file__).parent / "content" / "crashland.yaml"


@dataclass(frozen=True)
class MapCard:
    id: str
    kind: MapKind
    number: int | None = None  # beacons only
    axis: Axis | None = None  # beacons only


@dataclass(frozen=True)
class EventCard:
    id: str
    number: int
    system: System
    loss: int


@dataclass(frozen=True)
class EquipmentCard:
    id: str
    kind: Equipment


@dataclass(frozen=True)
class Content:
    house_content: bool
    rows: int
    columns: int
    start_level: int
    max_level: int
    min_level: int
    free_cards: int
    hand_limit: int
    events_per_turn: int
    uplink_cards: int
    map_cards: dict[str, MapCard]
    event_cards: dict[str, EventCard]
    equipment_cards: dict[str, EquipmentCard]

    # derived once (the rules ask for them on every move); the pack is never changed

    @cached_property
    def map_ids(self) -> tuple[str, ...]:
        return tuple(self.map_cards)

    @cached_property
    def deck_ids(self) -> tuple[str, ...]:
        return (*self.event_cards, *self.equipment_cards)

    @cached_property
    def tank_numbers(self) -> tuple[int, ...]:
        return tuple(sorted({c.number for c in self.map_cards.values() if c.number is not None}))


def parse(raw: dict[str, Any]) -> Content:
    map_cards = {
        c["id"]: MapCard(
            c["id"],
            MapKind(c["kind"]),
            c.get("number"),
            Axis(c["axis"]) if "axis" in c else None,
        )
        for c in raw["map"]
    }
    event_cards = {
        c["id"]: EventCard(c["id"], int(c["number"]), System(c["system"]), int(c["loss"]))
        for c in raw["events"]
    }
    equipment_cards = {
        c["id"]: EquipmentCard(c["id"], Equipment(c["kind"])) for c in raw["equipment"]
    }
    content = Content(
        house_content=bool(raw["house_content"]),
        rows=int(raw["grid"]["rows"]),
        columns=int(raw["grid"]["columns"]),
        start_level=int(raw["levels"]["start"]),
        max_level=int(raw["levels"]["maximum"]),
        min_level=int(raw["levels"]["minimum"]),
        free_cards=int(raw["movement"]["free_cards_per_turn"]),
        hand_limit=int(raw["hand_limit"]),
        events_per_turn=int(raw["events_per_turn"]),
        uplink_cards=int(raw["uplink_cards"]),
        map_cards=map_cards,
        event_cards=event_cards,
        equipment_cards=equipment_cards,
    )
    _check(content)
    return content


def _check(content: Content) -> None:
    """Refuse a pack that breaks the rulebook's fixed facts."""
    kinds = [c.kind for c in content.map_cards.values()]
    if len(kinds) != content.rows * content.columns:
        raise ValueError("the map deck must fill the grid")
    if kinds.count(MapKind.SPACESHIP) != 1:
        raise ValueError("exactly one spaceship card")
    beacons = [c for c in content.map_cards.values() if c.kind is MapKind.BEACON]
    for number in content.tank_numbers:
        axes = sorted(c.axis for c in beacons if c.number == number if c.axis is not None)
        if axes != [Axis.HORIZONTAL, Axis.VERTICAL]:
            raise ValueError(f"beacon {number} needs one vertical and one horizontal card")
    if len(content.tank_numbers) != 3:
        raise ValueError("three fuel tanks, so three beacon pairs")
    if len(content.deck_ids) != 21:
        raise ValueError("the rulebook's event and equipment deck has 21 cards")
    numbers = [c.number for c in content.event_cards.values()]
    if len(set(numbers)) != len(numbers):
        raise ValueError("event numbers must differ so the highest is unique")
    overlap = set(content.event_cards) & set(content.equipment_cards)
    if overlap or set(content.map_cards) & set(content.deck_ids):
        raise ValueError("card ids must be unique")


def load(path: Path = _PACK) -> Content:
    with path.open(encoding="utf-8") as handle:
        return parse(yaml.safe_load(handle))


CONTENT = load()
