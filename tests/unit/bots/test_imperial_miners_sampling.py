"""Imperial Miners' sampler: every determinization shows the seat what the seat was shown
(other hands and secret choices hidden), offers the same legal actions, holds draw piles
of the real ones' sizes, and plays on to the end with the search's chance."""

from __future__ import annotations

import pytest

from services.games.imperial_miners.state import ImperialMinersState
from tests.unit.bots.sampling_kit import check_sampler, decisions


def _piles(state: ImperialMinersState) -> dict[str, int]:
    return dict(state.piles)


@pytest.mark.parametrize("seed", range(2))
@pytest.mark.parametrize("seats", [2, 4])
def test_samples_show_the_same_view_and_legal_actions(seed: int, seats: int) -> None:
    found = decisions("imperial_miners", seats, seed)
    checked = check_sampler("imperial_miners", found, every=4, play_out=1, pile_sizes=_piles)
    assert checked >= 5
