"""The greedy bot: decides from its own seat's view only.

It values cubes by its own Quest (others' Quests are unknown to it), forms the room
worth the most after monster damage, and tries a handful of flicks and pillar moves,
simulating each one without noise on the table it sees (the real flick then gets the
dice's noise), keeping the move that most improves its best room.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cache
from typing import Any

from services.games.contract import ActionTemplate, ViewPolicy, concrete
from services.games.dungeon_drop import actions as act
from services.games.dungeon_drop.content import CONTENT, MONSTER, PAIR
from services.games.dungeon_drop.placement import Physics, Placement
from services.games.dungeon_drop.rooms import is_pillar, open_rooms, room_cubes, triangle
from services.games.dungeon_drop.table import FLICK_REALS, FULL, REAL_SIDES, flick
from services.games.dungeon_drop.view import DungeonDropView, SeatView

#: a die value that maps to the middle of the noise range: the flick the finger intends
_NO_NOISE = (REAL_SIDES + 1) // 2
HEALTH_COST = 2.5  # what one Health point is worth to the bot
FLICK_CUBES = 4
FLICK_ROOMS = 4


def table_of(view: DungeonDropView) -> dict[str, Placement]:
    return {c.cube: Placement(c.cube, c.x, c.y, c.angle) for c in view.table}


def seat(view: DungeonDropView, player: str) -> SeatView:
    return next(s for s in view.seats if s.player == player)


def cube_value(cube: str, me: SeatView | None) -> float:
    return _cube_values(me.quest if me is not None else None)[cube]


@cache
def _cube_values(quest_id: str | None) -> Mapping[str, float]:
    """Every cube's value to a hero of this Quest (None: not known): search's playouts ask
    for them hundreds of thousands of times a decision."""
    return {cube: _cube_value(cube, quest_id) for cube in CONTENT.cubes}


def _cube_value(cube: str, quest_id: str | None) -> float:
    kind = CONTENT.kind(cube)
    name = CONTENT.cubes[cube]
    value = float(kind.points)
    quest = CONTENT.quests[quest_id] if quest_id else None
    if name == "gem":
        value += quest.gem if quest else 1.5
    if name == "crystal":
        value += quest.crystal if quest else 3.0
    if name in ("key", "chest"):  # half of a pair: the Chest's expected roll and any bonus
        value += (3.5 + (quest.bonus.get(PAIR, 0) if quest else 0)) / 2
    if kind.heals:
        value += HEALTH_COST * kind.heals
    if quest:
        value += quest.bonus.get(name, 0)
    return value


#: per cube: a monster's blow, a Shield, the Health it heals
_DAMAGE = {c: CONTENT.kind(c).damage for c in CONTENT.cubes if CONTENT.kind(c).category == MONSTER}
_SHIELDS = frozenset(c for c in CONTENT.cubes if CONTENT.kind(c).shield)
_HEALS = {c: CONTENT.kind(c).heals for c in CONTENT.cubes}


def room_value(cubes: tuple[str, ...], me: SeatView | None, ward: bool) -> float:
    """Loot value minus the Health the monsters would take; -inf if it would kill."""
    values = _cube_values(me.quest if me is not None else None)
    value = sum(values[c] for c in cubes)
    if me is None or ward:
        return value
    blows = sorted((_DAMAGE[c] for c in cubes if c in _DAMAGE), reverse=True)
    shields = me.shields_ready + sum(1 for c in cubes if c in _SHIELDS)
    damage = sum(blows[shields:])
    heal = sum(_HEALS[c] for c in cubes)
    if me.health + heal - damage < 1:
        return -math.inf
    return value - HEALTH_COST * damage


Rooms = tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]


def best_room(
    table: Mapping[str, Placement], me: SeatView | None, ward: bool, rooms: Rooms | None = None
) -> tuple[float, tuple[str, ...]]:
    """The open room worth most (``rooms``: the table's open rooms, if already known)."""
    best: tuple[float, tuple[str, ...]] = (0.0, ())
    for trio, cubes in open_rooms(table) if rooms is None else rooms:
        value = room_value(cubes, me, ward)
        if value > best[0]:
            best = (value, trio)
    return best


def top_rooms(
    table: Mapping[str, Placement], me: SeatView | None, ward: bool, count: int
) -> list[tuple[float, tuple[str, ...]]]:
    scored = [(room_value(cubes, me, ward), trio) for trio, cubes in open_rooms(table)]
    return sorted((r for r in scored if r[0] > 0), reverse=True)[:count]


def rooms_value(
    table: Mapping[str, Placement], rooms: list[tuple[str, ...]], me: SeatView, ward: bool
) -> float:
    """The best of these rooms on ``table`` (a quick look: only rooms known to be good)."""
    best = 0.0
    for trio in rooms:
        if not all(p in table for p in trio):
            continue
        cubes = room_cubes(table, trio)
        if not any(is_pillar(c) for c in cubes):
            best = max(best, room_value(cubes, me, ward))
    return best


def _flick_choice(view: DungeonDropView, me: SeatView, physics: Physics) -> Any:
    table = table_of(view)
    rooms = top_rooms(table, me, view.ward, FLICK_ROOMS)
    if not rooms:
        return act.EndAbility()
    now = rooms[0][0]
    trios = [trio for _, trio in rooms]
    inside = {c for trio in trios[:1] for c in room_cubes(table, trio)}
    treasures = sorted(
        (c for c in table if c not in inside and not is_pillar(c)),
        key=lambda c: -cube_value(c, me),
    )[:FLICK_CUBES]
    candidates: list[act.Flick] = []
    for cube in treasures:
        at = table[cube]
        for trio in trios[:2]:
            room = triangle(table, trio).centroid
            heading = math.degrees(math.atan2(room.y - at.y, room.x - at.x)) % 360.0
            distance = math.hypot(room.x - at.x, room.y - at.y)
            for push in (0.8, 1.0):
                strength = min(1.0, push * (0.02 + distance / 500.0))
                candidates.append(act.Flick(cube, heading, strength))
    best: tuple[float, Any] = (now + 0.5, act.EndAbility())
    for candidate in candidates:
        settled = flick(
            table,
            candidate.cube,
            candidate.direction,
            candidate.strength,
            (_NO_NOISE,) * FLICK_REALS,
            physics,
        )
        after = {p.cube: p for p in settled.placements}
        value = rooms_value(after, trios, me, view.ward)
        if value > best[0]:
            best = (value, candidate)
    return best[1]


def _pillar_choice(view: DungeonDropView, me: SeatView) -> Any:
    table = table_of(view)
    now, trio = best_room(table, me, view.ward)
    best: tuple[float, Any] = (now + 0.5, act.EndAbility())
    targets = sorted((c for c in table if not is_pillar(c)), key=lambda c: -cube_value(c, me))[:4]
    rooms = [trio] if trio else []
    for target in targets:
        at = table[target]
        for room in rooms:
            centre = triangle(table, room).centroid
            dx, dy = at.x - centre.x, at.y - centre.y
            norm = math.hypot(dx, dy) or 1.0
            x = min(CONTENT.table.width, max(0.0, at.x + 20.0 * dx / norm))
            y = min(CONTENT.table.height, max(0.0, at.y + 20.0 * dy / norm))
            for corner in room:
                moved = dict(table)
                moved[corner] = Placement(corner, x, y, table[corner].angle)
                cubes = room_cubes(moved, room)
                if any(is_pillar(c) for c in cubes):
                    continue
                value = room_value(cubes, me, view.ward)
                if value > best[0]:
                    best = (value, act.MovePillar(corner, x, y))
    return best[1]


def _act_choice(view: DungeonDropView, me: SeatView, rng: random.Random) -> Any:
    table = table_of(view)
    rooms = open_rooms(table)
    now, _ = best_room(table, me, False, rooms)

    def gain(primitive: str, amount: int) -> float:
        """What the ability adds to the turn: a better room within reach, or a guess."""
        if primitive == "heal":  # the best room with ``amount`` more Health
            stronger = replace(me, health=me.health + amount)
            return best_room(table, stronger, False, rooms)[0] - now + 0.2 * amount
        if primitive == "ward":
            return best_room(table, me, True, rooms)[0] - now
        if primitive == "extra_drop":
            return 1.0 * amount if view.box_left else 0.0
        return {"take_outside": 3.0, "flick": 1.5, "move_pillar": 2.0}[primitive] * amount

    wanted: dict[str, float] = {}
    for source, ability in (
        ("race", CONTENT.races[me.race].ability),
        ("class", CONTENT.classes[me.hero_class].ability),
    ):
        wanted[source] = gain(ability.primitive, ability.amount) + rng.random() * 0.1
    source = max(wanted, key=lambda s: wanted[s])
    return act.UseAbility(source) if wanted[source] > 0.5 else act.SkipAbility()


def _meeple_choice(view: DungeonDropView) -> Any:
    """Teamwork: stand where the active hero's best-looking room is."""
    table = table_of(view)
    _, trio = best_room(table, None, True)
    if not trio:
        return act.PlaceMeeple(CONTENT.table.width / 2, CONTENT.table.height / 2)
    centre = triangle(table, trio).centroid
    return act.PlaceMeeple(float(centre.x), float(centre.y))


def greedy_view_policy(seed: int, physics: Physics = FULL) -> ViewPolicy:
    """``physics``: how its trial flicks are simulated (ROLLOUT in search's playouts)."""
    rng = random.Random(seed)

    def choose(view: DungeonDropView, player: str, legal: Sequence[Any]) -> Any:
        me = seat(view, player)
        first = legal[0]
        example = first.example if isinstance(first, ActionTemplate) else first
        if isinstance(example, act.UseAbility):
            return _act_choice(view, me, rng)
        if isinstance(example, act.Flick):
            return _flick_choice(view, me, physics)
        if isinstance(example, act.MovePillar):
            return _pillar_choice(view, me)
        if isinstance(example, act.PlaceMeeple):
            return _meeple_choice(view)
        if isinstance(example, act.LootRoom | act.LeaveEmptyHanded):
            table = table_of(view)
            # the legal rooms are open ones: their cubes come with the open rooms, in one
            # pass over the table rather than one per room
            ward = view.ward
            collects = dict(open_rooms(table))
            scored = [
                (room_value(collects.get(a.pillars) or room_cubes(table, a.pillars), me, ward), a)
                for a in legal
                if isinstance(a, act.LootRoom)
            ]
            value, action = max(scored, key=lambda s: s[0], default=(0.0, act.LeaveEmptyHanded()))
            return action if value > 0 else act.LeaveEmptyHanded()
        if isinstance(example, act.TakeCube | act.SkipTake):
            takes = [a for a in legal if isinstance(a, act.TakeCube)]
            if not takes:
                return act.SkipTake()
            return max(takes, key=lambda a: cube_value(a.cube, me))
        return concrete(legal[rng.randrange(len(legal))], rng)

    return choose
