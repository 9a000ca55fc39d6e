"""The state Dungeon Drop hands the command handler with a decision or chance outcome is
exactly the fold of its events, with exactly the state's fields (tests/unit/games/folds.py)."""

from __future__ import annotations

from services.games.dungeon_drop import GAME, DungeonDrop
from services.games.dungeon_drop.state import FIELDS
from tests.unit.games.folds import checked_matches


def test_the_handed_over_state_is_the_fold_of_the_events_on_every_step() -> None:
    matches = [
        (seed, 1 + seed % 4, {"variant": "teamwork"} if seed % 4 == 3 else {}) for seed in range(8)
    ]
    assert checked_matches(DungeonDrop(), GAME, FIELDS, matches) > 200
