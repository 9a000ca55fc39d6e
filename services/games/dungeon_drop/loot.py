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

from collections.abc import Iterable
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
    kinds = [CONTENT.kind(c) for c in cubes]
    health = state.health[player]
    healed = sum(k.heals for k in kinds)
    blows = sorted((k.damage for k in kinds if k.category == MONSTER), reverse=True)
    if state.ward and player == state.active:
        return LootResult(healed, 0, 0, health + healed)
    shields = shields_ready(state, player) + sum(1 for k in kinds if k.shield)
    spent = min(shields, len(blows))
    damage = sum(blows[spent:])
    return LootResult(healed, damage, spent, health + healed - damage)


def is_treasure(cube: str) -> bool:
    return CONTENT.kind(cube).category == TREASURE


def weight(state: DungeonDropState, player: str) -> int:
    """Treasure (non-monster) cubes in the stash."""
    return sum(1 for c in state.stash.get(player, ()) if is_treasure(c))
