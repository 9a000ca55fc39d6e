"""Drillit!'s sampler: every determinization shows the seat what the seat was shown,
offers the same legal actions, holds a Path pile of the real one's size, and plays on to
the end with the search's chance."""

from __future__ import annotations

import pytest

from services.games.drillit.state import DrillitState
from tests.unit.bots.sampling_kit import check_sampler, decisions


def _piles(state: DrillitState) -> dict[str, int]:
    return {"paths": state.path_pile}


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("bot", ["greedy", "random"])
@pytest.mark.parametrize("seats", [2, 3])
def test_samples_show_the_same_view_and_legal_actions(seed: int, bot: str, seats: int) -> None:
    options = {"difficulty": "medium", "distance": "medium"}
    found = decisions("drillit", seats, seed, options, bot=bot)
    checked = check_sampler("drillit", found, every=3, play_out=1, pile_sizes=_piles)
    assert checked >= 5
