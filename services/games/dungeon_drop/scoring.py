"""End-of-game scoring: cube points, Gems per Quest, Key-Chest pairs rolled, Quest
bonus, Teamwork meeples; ties go to the highest starting Initiative."""

from __future__ import annotations

from services.games.dungeon_drop.content import CONTENT, GEM_KINDS, PAIR
from services.games.dungeon_drop.state import DungeonDropState


def pairs(stash: tuple[str, ...]) -> int:
    """Keys paired with Chests; unpaired ones score nothing."""
    kinds = [CONTENT.cubes[c] for c in stash]
    return min(kinds.count("key"), sum(1 for c in stash if CONTENT.kind(c).die))


def breakdown(state: DungeonDropState, player: str) -> dict[str, int]:
    stash = state.stash.get(player, ())
    kinds = [CONTENT.cubes[c] for c in stash]
    gems, bonus = _quest_parts(stash, kinds, state.quests[player])
    return {
        "cubes": sum(CONTENT.kinds[k].points for k in kinds if k not in GEM_KINDS),
        "gems": gems,
        "chests": sum(state.chest_rolls.get(player, ())),
        "quest_bonus": bonus,
        "teamwork": state.teamwork.get(player, 0),
    }


def quest_points(stash: tuple[str, ...], quest: str) -> int:
    """What ``quest`` makes of a stash: its Gems and Crystals and its bonus."""
    gems, bonus = _quest_parts(stash, [CONTENT.cubes[c] for c in stash], quest)
    return gems + bonus


def _quest_parts(stash: tuple[str, ...], kinds: list[str], quest_id: str) -> tuple[int, int]:
    quest = CONTENT.quests[quest_id]
    gems = quest.gem * kinds.count("gem") + quest.crystal * kinds.count("crystal")
    counts = {PAIR: pairs(stash)}
    bonus = sum(points * counts.get(k, kinds.count(k)) for k, points in quest.bonus.items())
    return gems, bonus


def score(state: DungeonDropState, player: str) -> int:
    return sum(breakdown(state, player).values())


def initiative(state: DungeonDropState, player: str) -> int:
    return CONTENT.races[state.races[player]].initiative


def winner(state: DungeonDropState, scores: dict[str, int]) -> str:
    """Highest total; among tied heroes the highest starting Initiative."""
    return max(state.players, key=lambda p: (scores[p], initiative(state, p)))
