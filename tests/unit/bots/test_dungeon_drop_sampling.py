"""Dungeon Drop's sampler: every determinization shows the seat what the seat was shown
(other Quests and the box hidden), offers the same legal actions, holds a box of the real
one's size, and plays on to the end with the search's chance."""

from __future__ import annotations

import pytest

from services.games.dungeon_drop.flow import BOX
from services.games.dungeon_drop.sampling import evaluate
from services.games.dungeon_drop.scoring import score
from services.games.dungeon_drop.state import DungeonDropState
from tests.unit.bots.sampling_kit import check_sampler, decisions


def _piles(state: DungeonDropState) -> dict[str, int]:
    return {BOX: state.box_left}


@pytest.mark.parametrize("seats", [2, 4])
def test_samples_show_the_same_view_and_legal_actions(seats: int) -> None:
    found = decisions("dungeon_drop", seats, 0)
    checked = check_sampler(
        "dungeon_drop", found, samples=1, every=2, play_out=1, pile_sizes=_piles
    )
    assert checked >= 5


def test_the_evaluation_ranks_the_stashes_as_the_final_scoring_would() -> None:
    """``evaluate`` (what search takes for a playout it stops early) is the share of the
    other heroes the stash outscores now, by the rules' own scoring."""
    found = decisions("dungeon_drop", 3, 2)
    late = found[-1].state
    scores = {p: score(late, p) for p in late.players}
    for player in late.players:
        beaten = sum(
            1.0 if scores[player] > s else 0.5 if scores[player] == s else 0.0
            for p, s in scores.items()
            if p != player
        )
        assert evaluate(late, player) == beaten / 2
    assert sum(evaluate(late, p) for p in late.players) == 1.5  # 3 seats, 3 pairs
