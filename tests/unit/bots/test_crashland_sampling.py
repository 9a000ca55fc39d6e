"""Crashland's sampler: every determinization shows the player what the player was shown,
offers the same legal actions, holds a draw pile of the real one's size, and plays on to
the end with the search's chance."""

from __future__ import annotations

import pytest

from services.games.crashland.rules import EVENT_DECK
from services.games.crashland.state import CrashlandState
from tests.unit.bots.sampling_kit import check_sampler, decisions


def _piles(state: CrashlandState) -> dict[str, int]:
    return {EVENT_DECK: state.draw_pile}


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("bot", ["greedy", "random"])
def test_samples_show_the_same_view_and_legal_actions(seed: int, bot: str) -> None:
    found = decisions("crashland", 1, seed, bot=bot)
    checked = check_sampler("crashland", found, every=2, play_out=1, pile_sizes=_piles)
    assert checked >= 5
