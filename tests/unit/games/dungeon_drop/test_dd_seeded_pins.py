"""Seeded Dungeon Drop matches pinned to digests taken before the engine was made faster
(commit 88fc942): the same seed must give the same events (every drop and flick's
simulated placements), final state and actions. A rule or physics change that moves them
says so and updates them."""

from __future__ import annotations

import pytest

from services.games.dungeon_drop import GAME
from tests.unit.games.seeded_pins import pinned_playout

#: (seed, bot, seats, options) -> (events, actions, digest)
PINNED = {
    (0, "random", 1, ()): (36, 7, "be9358333b51521e"),
    (1, "random", 2, ()): (59, 17, "9cbd5c2fe5702317"),
    (2, "random", 3, (("variant", "teamwork"),)): (97, 40, "b51449826896b863"),
    (3, "random", 4, ()): (97, 31, "12696de546c72ca2"),
    (4, "greedy", 2, ()): (55, 16, "8df00a97b61a1f43"),
    (5, "greedy", 4, (("variant", "teamwork"),)): (140, 70, "90d3aae691ba6c95"),
    (6, "greedy", 1, ()): (35, 8, "17ed1697588674e6"),
}


@pytest.mark.parametrize("case", sorted(PINNED))
def test_a_seeded_match_gives_the_pinned_events_and_final_state(
    case: tuple[int, str, int, tuple[tuple[str, str], ...]],
) -> None:
    seed, bot, seats, options = case
    assert pinned_playout(GAME, seed, bot, seats, dict(options)) == PINNED[case]
