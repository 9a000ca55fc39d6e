"""Loading the content pack (content/dungeon_drop.yaml): the only I/O of the engine."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.games.house import HouseChoice, house_choices

_PACK = Path(__file__).parent / "content" / "dungeon_drop.yaml"

PRIMITIVES = ("flick", "extra_drop", "move_pillar", "take_outside", "heal", "ward")
PILLAR = "pillar"
MONSTER = "monster"
TREASURE = "treasure"
GEM_KINDS = ("gem", "crystal")
#: a Quest bonus per Key paired with a Chest (unpaired ones score nothing)
PAIR = "pair"


@dataclass(frozen=True)
class CubeKind:
    kind: str
    size: str
    count: int
    points: int
    category: str
    colour: str
    damage: int = 0
    heals: int = 0
    shield: bool = False
    die: bool = False
    translucent: bool = False


@dataclass(frozen=True)
class Ability:
    primitive: str
    amount: int


@dataclass(frozen=True)
class Race:
    id: str
    name: str
    initiative: int
    health: int
    ability: Ability


@dataclass(frozen=True)
class HeroClass:
    id: str
    name: str
    ability: Ability


@dataclass(frozen=True)
class Quest:
    id: str
    name: str
    gem: int
    crystal: int
    bonus: dict[str, int]


@dataclass(frozen=True)
class TableSpec:
    width: float
    height: float
    sizes: dict[str, float]
    scatter_per_inch: float
    bounce_speed: float
    max_spin: float
    flick_speed: float
    flick_noise_degrees: float
    flick_noise_strength: float
    damping: float
    friction: float
    elasticity: float
    seconds: float
    steps_per_second: int
    touching_mm: float
    max_setup_drops: int


@dataclass(frozen=True)
class Content:
    rules_version: str
    min_players: int
    max_players: int
    rounds: int
    explore: dict[int, int]
    drop_height: tuple[float, float]
    setup_touching_pairs: int
    chest_die_sides: int
    table: TableSpec
    kinds: dict[str, CubeKind]
    #: every cube id -> its kind ("gold07" -> gold), the 87 cubes plus the Solo Phantoms
    cubes: dict[str, str]
    solo_kinds: tuple[str, ...]
    solo_explore: int
    solo_target: int
    races: dict[str, Race]
    classes: dict[str, HeroClass]
    quests: dict[str, Quest]
    house_choices: tuple[HouseChoice, ...]

    def kind(self, cube: str) -> CubeKind:
        return self.kinds[self.cubes[cube]]

    def edge(self, cube: str) -> float:
        return self.table.sizes[self.kind(cube).size]

    def cubes_of(self, *kinds: str) -> tuple[str, ...]:
        return tuple(c for c, k in self.cubes.items() if k in kinds)

    def setup_cubes(self, solo: bool) -> tuple[str, ...]:
        """The smaller cubes plus the Dragon (and, in Solo, the Phantoms)."""
        return tuple(
            c
            for c, k in self.cubes.items()
            if self.kinds[k].size != "large" and (solo or k not in self.solo_kinds)
        )

    def box_cubes(self) -> tuple[str, ...]:
        """The larger cubes (the dice among them) go back to the box to be Explored."""
        return tuple(c for c, k in self.cubes.items() if self.kinds[k].size == "large")


def _ability(raw: dict[str, Any]) -> Ability:
    if raw["primitive"] not in PRIMITIVES:
        raise ValueError(f"unknown ability primitive {raw['primitive']!r}")
    return Ability(raw["primitive"], int(raw["amount"]))


def _kind(kind: str, raw: dict[str, Any]) -> CubeKind:
    return CubeKind(
        kind=kind,
        size=raw["size"],
        count=int(raw["count"]),
        points=int(raw["points"]),
        category=raw["category"],
        colour=raw["colour"],
        damage=int(raw.get("damage", 0)),
        heals=int(raw.get("heals", 0)),
        shield=bool(raw.get("shield", False)),
        die=bool(raw.get("die", False)),
        translucent=bool(raw.get("translucent", False)),
    )


@functools.cache
def load(path: Path = _PACK) -> Content:
    raw = yaml.safe_load(path.read_text())
    book, table, solo = raw["rulebook"], raw["table"], raw["solo"]
    kinds = {k: _kind(k, v) for k, v in raw["cubes"].items() if k != "house_content"}
    solo_kinds = {k: _kind(k, v) for k, v in solo.items() if isinstance(v, dict)}
    all_kinds = {**kinds, **solo_kinds}
    cubes = {f"{k}{i:02d}": k for k, spec in all_kinds.items() for i in range(1, spec.count + 1)}
    content = Content(
        rules_version=str(raw["rules_version"]),
        min_players=book["players"][0],
        max_players=book["players"][1],
        rounds=book["rounds"],
        explore={int(k): int(v) for k, v in book["explore"].items()},
        drop_height=(float(book["drop_height_inches"][0]), float(book["drop_height_inches"][1])),
        setup_touching_pairs=int(book["setup_touching_pairs"]),
        chest_die_sides=book["chest_die_sides"],
        table=TableSpec(
            **{k: v for k, v in table.items() if k != "house_content"},
        ),
        kinds=all_kinds,
        cubes=cubes,
        solo_kinds=tuple(solo_kinds),
        solo_explore=int(solo["explore"]),
        solo_target=int(solo["target"]),
        races={
            r["id"]: Race(r["id"], r["name"], r["initiative"], r["health"], _ability(r["ability"]))
            for r in raw["races"]["cards"]
        },
        classes={
            c["id"]: HeroClass(c["id"], c["name"], _ability(c["ability"]))
            for c in raw["classes"]["cards"]
        },
        quests={
            q["id"]: Quest(q["id"], q["name"], q["gem"], q["crystal"], dict(q["bonus"]))
            for q in raw["quests"]["cards"]
        },
        house_choices=house_choices(raw["house_choices"]),
    )
    _check(content, book, kinds)
    return content


def _check(content: Content, book: dict[str, Any], kinds: dict[str, CubeKind]) -> None:
    """Keep every number the rulebook prints."""
    if sum(k.count for k in kinds.values()) != book["cubes"]:
        raise ValueError("the game has 87 cubes")
    if sum(k.count for k in kinds.values() if k.die) != 6:
        raise ValueError("the 6 custom dice are the Chests")
    if len(content.races) != book["races"] or len(content.classes) != book["classes"]:
        raise ValueError("the game has 15 Race and 10 Class cards")
    if len(content.quests) != book["quests"]:
        raise ValueError("the game has 10 Quest cards")
    if len({r.initiative for r in content.races.values()}) != len(content.races):
        raise ValueError("Initiative numbers must be distinct")
    for quest in content.quests.values():
        for bonus in quest.bonus:
            if bonus in ("key", "chest"):
                raise ValueError(
                    f"Quest {quest.id}: unpaired Keys and Chests are ignored at the end; "
                    "a Quest may pay per Key-Chest pair, not per Key or Chest"
                )
            if bonus != PAIR and bonus not in content.kinds:
                raise ValueError(f"Quest {quest.id}: no cube kind {bonus!r}")
    dragon = kinds["dragon"]
    if any(content.table.sizes[k.size] > content.table.sizes[dragon.size] for k in kinds.values()):
        raise ValueError("the Dragon is the largest cube")


CONTENT = load()
