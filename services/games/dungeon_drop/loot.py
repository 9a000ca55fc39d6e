"""What looting a room does to a hero: potions heal, monsters strike, shields protect.

House reading (the rulebook defers to its cube table): each Magic Shield in the stash,
counting the ones collected in this very room, blocks one monster once, the strongest
first (a spent shield stays in the stash and still scores); potions collected heal
before the monsters strike (Health has no maximum: the Race's number is where a hero
starts); a Ward ability
makes monsters cost nothing this turn. A room whose monsters would take the hero's last
Health point is not allowed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from services.games.dungeon_drop.content import CONTENT, MONSTER, TREASURE
from services.games.dungeon_drop.state import DungeonDropState


@dataclass(frozen=True)
class LootResult:
    healed: int
    damage: int
    shields_spent: int
    health: int


def starting_health(state: DungeonDropState, player: str) -> int:
    return CONTENT.races[state.races[player]].health


def shields_ready(state: DungeonDropState, player: str) -> int:
    owned = sum(1 for c in state.stash.get(player, ()) if CONTENT.kind(c).shield)
    return owned - state.shields_used.get(player, 0)


def loot_result(state: DungeonDropState, player: str, cubes: Iterable[str]) -> LootResult:
    return Looter.of(state, player).result(cubes)


@dataclass(frozen=True)
class Looter:
    """A hero about to loot: what any room would do to them (the state read once, for
    the many rooms a Loot step weighs)."""

    health: int
    shields: int
    warded: bool

    @classmethod
    def of(cls, state: DungeonDropState, player: str) -> Looter:
        warded = bool(state.ward and player == state.active)
        return cls(state.health[player], shields_ready(state, player), warded)

    def result(self, cubes: Iterable[str]) -> LootResult:
        kinds = [CONTENT.kind(c) for c in cubes]
        healed = sum(k.heals for k in kinds)
        blows = sorted((k.damage for k in kinds if k.category == MONSTER), reverse=True)
        if self.warded:
            return LootResult(healed, 0, 0, self.health + healed)
        shields = self.shields + sum(1 for k in kinds if k.shield)
        spent = min(shields, len(blows))
        damage = sum(blows[spent:])
        return LootResult(healed, damage, spent, self.health + healed - damage)

    def survives(self, cubes: Sequence[str]) -> bool:
        """``result(cubes).health >= 1``, without building the result."""
        health = self.health
        blows: list[int] = []
        shields = self.shields
        for cube in cubes:
            heals, damage, shield = _LOOT[cube]
            health += heals
            if damage is not None:
                blows.append(damage)
            shields += shield
        if self.warded or shields >= len(blows):
            return health >= 1
        if shields < 0:  # (more shields used than owned: never in a match)
            return self.result(cubes).health >= 1
        blows.sort()  # the weakest ones strike: the strongest are shielded
        return health - sum(blows[: len(blows) - shields]) >= 1


#: per cube: what it heals, its blow (None: no monster), and 1 for a shield
_LOOT: dict[str, tuple[int, int | None, int]] = {
    cube: (k.heals, k.damage if k.category == MONSTER else None, 1 if k.shield else 0)
    for cube in CONTENT.cubes
    for k in (CONTENT.kind(cube),)
}


def is_treasure(cube: str) -> bool:
    return CONTENT.kind(cube).category == TREASURE


def weight(state: DungeonDropState, player: str) -> int:
    """Treasure (non-monster) cubes in the stash."""
    return sum(1 for c in state.stash.get(player, ()) if is_treasure(c))
