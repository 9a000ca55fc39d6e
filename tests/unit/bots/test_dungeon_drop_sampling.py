"""Dungeon Drop's sampler: every determinization shows the seat what the seat was shown
(other Quests and the box hidden), offers the same legal actions, holds a box of the real
one's size, and plays on to the end with the search's chance."""

from __future__ import annotations

import pytest

from services.games.dungeon_drop.flow import BOX
from services.games.dungeon_drop.sampling import MARGIN_SCALE, _ahead, evaluate
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
    """``evaluate`` (what search takes for a playout it stops early) ranks the heroes as the
    rules' own scoring ranks their stashes now, a tie even, a larger lead worth more."""
    found = decisions("dungeon_drop", 3, 2)
    late = found[-1].state
    scores = {p: score(late, p) for p in late.players}
    values = {p: evaluate(late, p) for p in late.players}
    for a in late.players:
        for b in late.players:
            assert (values[a] > values[b]) == (scores[a] > scores[b])
    assert sum(values.values()) == pytest.approx(1.5)  # 3 seats: each pair shares 1


def test_the_evaluation_grows_with_the_lead() -> None:
    late = decisions("dungeon_drop", 2, 2)[-1].state
    me, other = late.players
    assert score(late, me) != score(late, other)
    assert evaluate(late, me) == pytest.approx(_ahead(score(late, me) - score(late, other)))
    assert evaluate(late, me) + evaluate(late, other) == pytest.approx(1.0)
    # a tie is even; a lead of MARGIN_SCALE points is 73%, twice that 88%
    for lead, value in ((0, 0.5), (MARGIN_SCALE, 0.731), (2 * MARGIN_SCALE, 0.881)):
        assert _ahead(lead) == pytest.approx(value, abs=1e-3)
        assert _ahead(-lead) == pytest.approx(1 - value, abs=1e-3)
