"""Seeded Imperial Miners matches pinned to digests taken before the engine was made faster
(commit 88fc942): the same seed must give the same events, final state and actions. A
rule change that moves them says so and updates them."""

from __future__ import annotations

import pytest

from services.games.imperial_miners import GAME
from tests.unit.games.seeded_pins import pinned_playout

#: (seed, bot, seats, options) -> (events, actions, digest)
PINNED = {
    (0, "random", 2, ()): (254, 91, "4c1f92cbe793985b"),
    (1, "random", 3, ()): (319, 122, "18081f108d419030"),
    (2, "random", 4, ()): (428, 181, "a20549d481a87915"),
    (3, "random", 5, ()): (493, 211, "6acec836116c061f"),
    (4, "random", 1, ()): (148, 38, "f7a45aefde8cf3c0"),
    (5, "random", 2, (("first_game", "true"),)): (233, 83, "e2e01dd63ab72c98"),
    (6, "greedy", 2, ()): (260, 105, "ab2b1da670f9efc1"),
    (7, "greedy", 4, ()): (411, 178, "29cbaa1e2d0c820a"),
    (8, "greedy", 3, (("first_game", "true"),)): (338, 144, "4951fe006711a5d7"),
}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_seeded_match_gives_the_pinned_events_and_final_state(
    case: tuple[int, str, int, tuple[tuple[str, str], ...]],
) -> None:
    seed, bot, seats, options = case
    assert pinned_playout(GAME, seed, bot, seats, dict(options)) == PINNED[case]
