"""Loading the content pack (content/imperial_miners.yaml): the only I/O of the engine.

Card designs carry ``copies``; each copy becomes one Mine card with its own id
(``I-01`` … ``IV-14``), so the decks hold exactly the printed 36/43/43/14 cards.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from services.games.house import HouseChoice, house_choices

_PACK = Path(__file__).parent / "content" / "imperial_miners.yaml"

ROMAN = {1: "I", 2: "II", 3: "III", 4: "IV"}
GAINS = ("coins", "vp", "advance", "draw_1", "draw_2", "draw_3", "draw_4", "machinery")
DOES = (*GAINS, "cave_in", "clear_cave_in")
#: counts that need the card an effect sits on (not usable by Events or Progress rewards)
CARD_COUNTS = ("machinery", "adjacent")
COUNTS = ("factions", "carts", "mine_machinery", "cave_ins", *CARD_COUNTS)


@dataclass(frozen=True)
class Atom:
    """One step of an effect: ``n`` of ``do`` (times ``per`` if given, at most ``cap``)."""

    do: str
    n: int
    per: str | None = None
    cap: int | None = None

    @property
    def text(self) -> str:
        out = self.do if self.do in ("cave_in",) else f"{self.do} {self.n}"
        if self.per:
            out += f" per {self.per}"
        if self.cap is not None:
            out += f" max {self.cap}"
        return out


Effect = tuple[Atom, ...]


def effect_text(effect: Effect) -> str:
    # the content's effects are few and live as long as the process: each one's text is
    # kept by its identity (the effect held with it, so its id cannot pass to another)
    known = _TEXTS.get(id(effect))
    if known is not None and known[0] is effect:
        return known[1]
    text = ", ".join(a.text for a in effect)
    if len(_TEXTS) < _TEXTS_KEPT:
        _TEXTS[id(effect)] = (effect, text)
    return text


_TEXTS: dict[int, tuple[Effect, str]] = {}
_TEXTS_KEPT = 1024


@dataclass(frozen=True)
class MineCard:
    id: str
    name: str
    level: int
    factions: tuple[str, ...]
    cost: int
    #: the faction whose other cards in the Mine lower the cost by 1 each (Scots)
    discount: str | None
    cart_left: bool
    cart_right: bool
    effects: tuple[Effect, ...]


@dataclass(frozen=True)
class ProgressSide:
    spaces: tuple[Effect, ...]
    final: Effect


@dataclass(frozen=True)
class EventCard:
    id: str
    name: str
    kind: str  # immediate | this_round | end_of_round
    effect: Effect = ()
    discount_level: int = 0
    discount: int = 0
    on_place_level: int = 0  # 0: any level
    on_place: Effect = ()
    on_surface: Effect = ()


@dataclass(frozen=True)
class Content:
    rules_version: str
    rounds: int
    min_players: int
    max_players: int
    level_2_cost: int
    deal: dict[int, int]
    keep: int
    first_game_deal: dict[int, int]
    machinery_cap: int
    cart_vp: int
    event_deck: int
    factions: tuple[str, ...]
    surface: tuple[Effect, ...]
    cards: dict[str, MineCard]
    #: board number → {"a": side, "b": side}
    boards: tuple[dict[str, ProgressSide], ...]
    events: dict[str, EventCard]
    solo_bands: dict[str, int]
    solo_win_from: str
    house_choices: tuple[HouseChoice, ...]

    def deck(self, level: int) -> tuple[str, ...]:
        return tuple(c.id for c in self.cards.values() if c.level == level)


def parse_atom(text: str) -> Atom:
    words = str(text).split()
    do = words[0]
    if do not in DOES:
        raise ValueError(f"unknown effect {do!r} in {text!r}")
    rest = words[1:]
    n = 1
    if rest and rest[0].isdigit():
        n, rest = int(rest[0]), rest[1:]
    per: str | None = None
    cap: int | None = None
    while rest:
        key, value, rest = rest[0], rest[1], rest[2:]
        if key == "per":
            if value not in COUNTS and not value.startswith("faction:"):
                raise ValueError(f"unknown count {value!r} in {text!r}")
            per = value
        elif key == "max":
            cap = int(value)
        else:
            raise ValueError(f"cannot read {text!r}")
    return Atom(do, n, per, cap)


def parse_effect(raw: list[Any]) -> Effect:
    return tuple(parse_atom(a) for a in raw)


def _cards(raw: list[dict[str, Any]], level_2_cost: int) -> dict[str, MineCard]:
    cards: dict[str, MineCard] = {}
    numbers = dict.fromkeys(ROMAN, 0)
    for design in raw:
        level = int(design["level"])
        cost = level_2_cost if level == 2 else int(design.get("cost", 0))
        carts = str(design.get("carts", ""))
        effects = tuple(parse_effect(e) for e in design["effects"])
        for _ in range(int(design["copies"])):
            numbers[level] += 1
            card_id = f"{ROMAN[level]}-{numbers[level]:02d}"
            cards[card_id] = MineCard(
                card_id,
                design["name"],
                level,
                tuple(design["factions"]),
                cost,
                design.get("discount"),
                "L" in carts,
                "R" in carts,
                effects,
            )
    return cards


def _event(raw: dict[str, Any]) -> EventCard:
    discount = raw.get("discount", {})
    on_place = raw.get("on_place", {})
    return EventCard(
        raw["id"],
        raw["name"],
        raw["kind"],
        parse_effect(raw.get("effect", [])),
        int(discount.get("level", 0)),
        int(discount.get("n", 0)),
        int(on_place.get("level", 0)),
        parse_effect(on_place.get("effect", [])),
        parse_effect(raw.get("on_surface", [])),
    )


def _side(raw: dict[str, Any]) -> ProgressSide:
    return ProgressSide(tuple(parse_effect(s) for s in raw["spaces"]), parse_effect(raw["final"]))


@functools.cache
def load(path: Path = _PACK) -> Content:
    raw = yaml.safe_load(path.read_text())
    book = raw["rulebook"]
    content = Content(
        rules_version=str(raw["rules_version"]),
        rounds=book["rounds"],
        min_players=book["players"]["min"],
        max_players=book["players"]["max"],
        level_2_cost=book["level_2_cost"],
        deal={int(k): int(v) for k, v in book["deal"].items()},
        keep=book["keep"],
        first_game_deal={int(k): int(v) for k, v in book["first_game_deal"].items()},
        machinery_cap=book["machinery_per_card"],
        cart_vp=book["cart_vp"],
        event_deck=book["event_deck"],
        factions=tuple(raw["factions"]),
        surface=tuple(parse_effect(e) for e in raw["surface"]["effects"]),
        cards=_cards(raw["mine_cards"]["designs"], book["level_2_cost"]),
        boards=tuple(
            {side: _side(spec) for side, spec in board.items()}
            for board in raw["progress_boards"]["boards"]
        ),
        events={e["id"]: _event(e) for e in raw["event_cards"]["cards"]},
        solo_bands=dict(raw["solo_bands"]["bands"]),
        solo_win_from=raw["solo_bands"]["win_from"],
        house_choices=house_choices(raw["house_choices"]),
    )
    _check(content, book)
    return content


def _check(content: Content, book: dict[str, Any]) -> None:
    """Keep every number the rulebook prints; keep house effects inside the language."""
    for level, count in book["mine_cards"].items():
        if len(content.deck(int(level))) != count:
            raise ValueError(f"the rulebook has {count} Level {ROMAN[int(level)]} cards")
    low, high = book["level_3_cost"]["min"], book["level_3_cost"]["max"]
    for card in content.cards.values():
        if card.level == 3 and not low <= card.cost <= high:
            raise ValueError(f"{card.id}: Level III costs {low} to {high} coins")
        if card.level in (1, 4) and card.cost != 0:
            raise ValueError(f"{card.id}: Level I and IV cards are free")
        if not 1 <= len(card.effects) <= 2:
            raise ValueError(f"{card.id}: a Mine card has 1 or 2 effects")
        for faction in card.factions:
            if faction not in content.factions:
                raise ValueError(f"{card.id}: unknown faction {faction!r}")
    if len({c.name for c in content.cards.values() if c.level == 4}) != 1:
        raise ValueError("all Level IV cards have identical effects")
    if len(content.boards) != book["progress_boards"]:
        raise ValueError("the rulebook has 3 double-sided Progress boards")
    if len(content.events) != book["event_cards"]:
        raise ValueError("the rulebook has 18 Event cards")
    if len(content.surface) != 3:
        raise ValueError("the Surface board has 3 effects")
    cardless = [e.effect + e.on_place + e.on_surface for e in content.events.values()]
    cardless += [s for b in content.boards for side in b.values() for s in (*side.spaces,)]
    cardless += [side.final for b in content.boards for side in b.values()]
    for effect in cardless:
        for atom in effect:
            if atom.do in ("machinery", "cave_in") or atom.per in CARD_COUNTS:
                raise ValueError(f"{atom.text!r} needs a card; Events and boards have none")
    for board in content.boards:
        for side in board.values():
            if any(a.do == "advance" for s in (*side.spaces, side.final) for a in s):
                raise ValueError("a Progress reward may not advance again")


CONTENT = load()
