"""Dungeon Drop's sampler: every determinization shows the seat what the seat was shown
(other Quests and the box hidden), offers the same legal actions, holds a box of the real
one's size, and plays on to the end with the search's chance."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from services.games.dungeon_drop import GAME, bots
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.flow import BOX
from services.games.dungeon_drop.sampling import (
    MARGIN_SCALE,
    OUTLOOKS,
    Prospects,
    _ahead,
    evaluate,
    outlook_chance,
    prospects,
    sample,
    standing,
    win_chance,
)
from services.games.dungeon_drop.scoring import score
from services.games.dungeon_drop.state import DungeonDropState, Phase
from services.games.dungeon_drop.view import DungeonDropView
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
    rules' own scoring would rank their stashes now, a tie even, a larger lead worth more:
    at 2 seats by the standings alone; at more, where their outlooks are otherwise alike."""
    found = decisions("dungeon_drop", 3, 2)
    late = found[-1].state
    standings = {p: standing(late, p) for p in late.players}
    assert len(set(standings.values())) == 3
    alike = replace(
        prospects(late),
        room={p: 10.0 for p in late.players},
        turns_to_play={p: -1 for p in late.players},
    )
    values = {p: outlook_chance(OUTLOOKS[3], alike, p) for p in late.players}
    for a in late.players:
        for b in late.players:
            assert (values[a] > values[b]) == (standings[a] > standings[b])


def _seen(standings: list[float], rooms: list[float], to_play: list[int], left: int) -> Prospects:
    heroes = [f"player{i + 1}" for i in range(len(standings))]
    return Prospects(
        left,
        dict(zip(heroes, standings, strict=True)),
        dict(zip(heroes, rooms, strict=True)),
        dict(zip(heroes, to_play, strict=True)),
    )


@pytest.mark.parametrize("seats", [3, 4])
def test_the_outlook_is_a_chance_of_winning(seats: int) -> None:
    """The heroes' chances add up to one, and heroes alike in everything are even."""
    outlook = OUTLOOKS[seats]
    alike = _seen([12.0] * seats, [6.0] * seats, [-1] * seats, 2 * seats)
    assert outlook_chance(outlook, alike, "player1") == pytest.approx(1 / seats)
    mixed = _seen(
        [3.0, 11.0, -4.0, 7.5][:seats], [9.0, 0.0, 4.0, 2.0][:seats], [0, 1, 2, -1][:seats], 5
    )
    chances = [outlook_chance(outlook, mixed, f"player{i + 1}") for i in range(seats)]
    assert sum(chances) == pytest.approx(1.0)


@pytest.mark.parametrize("seats", [3, 4])
def test_a_room_on_the_table_counts_for_the_heroes_still_to_play(seats: int) -> None:
    """Given two heroes level in points, the one still to play this round, with a rich room
    on the table for it, is the likelier winner, and the sooner it plays the more it counts;
    a room for a hero who has played counts for nothing more."""
    outlook = OUTLOOKS[seats]

    def chance(to_play: int) -> float:
        rooms = [20.0] + [0.0] * (seats - 1)
        return outlook_chance(
            outlook, _seen([10.0] * seats, rooms, [to_play] + [-1] * (seats - 1), 6), "player1"
        )

    assert chance(0) > chance(1) > chance(seats - 1) > 1 / seats
    assert chance(-1) <= 1 / seats


@pytest.mark.parametrize("seats", [3, 4])
def test_a_lead_counts_for_more_as_the_match_runs_out(seats: int) -> None:
    """A 5-point lead with the whole match to play is worth less than the same lead at the
    last turn: the temperature falls with the turns left."""
    outlook = OUTLOOKS[seats]
    standings = [15.0] + [10.0] * (seats - 1)

    def chance(left: int) -> float:
        return outlook_chance(
            outlook, _seen(standings, [0.0] * seats, [-1] * seats, left), "player1"
        )

    assert chance(1) > chance(seats) > chance(3 * seats) > 1 / seats
    assert outlook.scale(1, seats) < outlook.scale(3 * seats, seats)


def test_prospects_read_the_turn_order_the_turns_left_and_each_heroes_best_room() -> None:
    """At each decision of a seeded 4-seat match: the active hero's turn is under way until
    it has looted, the others play as many turns on as they sit after it in this round's
    order (or have played); the hero-turns left fall by one a turn, to 0 once the last hero
    has looted; each hero's room is the best its own bot sees on the table."""
    found = decisions("dungeon_drop", 4, 5)
    lefts = []
    for decision in found:
        state = decision.state
        if state.phase not in (Phase.ACT, Phase.LOOT, Phase.TAKE):
            continue
        seen = prospects(state)
        looted = state.phase is Phase.TAKE
        for at, hero in enumerate(state.order):
            expected = (
                at - state.turn if at > state.turn else -1 if at < state.turn or looted else 0
            )
            assert seen.turns_to_play[hero] == expected
            best = bots.best_room(state.table, bots.seat(GAME.view(state, hero), hero), False)[0]
            assert seen.room[hero] == best
        assert seen.turns_left == (3 - state.round) * 4 + 4 - state.turn - looted
        lefts.append(seen.turns_left)
    assert lefts[0] == 12 and lefts[-1] <= 1  # 0 if the last hero took a cube
    assert lefts == sorted(lefts, reverse=True)


def test_the_evaluation_grows_with_the_lead() -> None:
    late = decisions("dungeon_drop", 2, 2)[-1].state
    me, other = late.players
    lead = standing(late, me) - standing(late, other)
    assert lead != 0
    assert evaluate(late, me) == pytest.approx(_ahead(lead))
    assert evaluate(late, me) + evaluate(late, other) == pytest.approx(1.0)
    # a tie is even; a lead of MARGIN_SCALE points is 73%, twice that 88%
    for lead, value in ((0, 0.5), (MARGIN_SCALE, 0.731), (2 * MARGIN_SCALE, 0.881)):
        assert _ahead(lead) == pytest.approx(value, abs=1e-3)
        assert _ahead(-lead) == pytest.approx(1 - value, abs=1e-3)


def test_a_win_needs_the_leader_beaten() -> None:
    """At 4 seats, even with all three is worth more than far ahead of two and as far
    behind the third (only one hero wins; the mean of the pairwise chances said the
    opposite); the four heroes' chances add up to one."""
    assert win_chance([0, 0, 0]) == pytest.approx(0.25)
    split = [-2 * MARGIN_SCALE, 2 * MARGIN_SCALE, 2 * MARGIN_SCALE]
    assert win_chance(split) < win_chance([0, 0, 0])
    assert sum(_ahead(lead) for lead in split) / 3 > 0.5
    standings = [3.0, 11.0, -4.0, 7.5]
    chances = [
        win_chance([mine - other for j, other in enumerate(standings) if j != i])
        for i, mine in enumerate(standings)
    ]
    assert sum(chances) == pytest.approx(1.0)
    assert sorted(range(4), key=chances.__getitem__) == sorted(range(4), key=standings.__getitem__)


def test_a_paired_chest_not_rolled_yet_counts_its_die_mean() -> None:
    """Chests are rolled only when the match ends, so a stash's pairs are worth the die's
    mean until then (3.5 on the rulebook's 1-6) and their roll afterwards."""
    late = decisions("dungeon_drop", 2, 2)[-1].state
    me = late.players[0]
    key = next(c for c, name in CONTENT.cubes.items() if name == "key")
    chest = next(c for c, name in CONTENT.cubes.items() if name == "chest")
    unpaired = replace(late, stash={**late.stash, me: (key,)}, chests_rolled=False)
    paired = replace(late, stash={**late.stash, me: (key, chest)}, chests_rolled=False)
    assert standing(unpaired, me) == score(unpaired, me)
    assert standing(paired, me) == score(paired, me) + 3.5
    rolled = replace(paired, chests_rolled=True, chest_rolls={me: (2,)})
    assert standing(rolled, me) == score(rolled, me) == score(paired, me) + 2


def _dealt(view: DungeonDropView, player: str, other: str, draws: int) -> Counter[str]:
    rng = random.Random(7)
    dealt: Counter[str] = Counter()
    for _ in range(draws):
        quests = sample(view, player, (), rng).state.quests
        mine = next(s.quest for s in view.seats if s.player == player)
        assert quests[player] == mine
        assert len(set(quests.values())) == len(quests)  # one Quest card each
        assert mine not in [q for p, q in quests.items() if p != player]
        dealt[quests[other]] += 1
    return dealt


def test_a_hidden_quest_is_dealt_by_what_the_hero_took() -> None:
    """Heroes take what their Quest pays for: a hero holding all four Potions is dealt the
    Alchemist (4 points a Potion) far more often than a uniform deal's 1 in 9, and a hero
    with an empty stash is dealt every Quest the seat cannot see."""
    found = decisions("dungeon_drop", 4, 3)
    decision = next(d for d in found if d.state.round == 2)
    state, me = decision.state, decision.player
    other = next(p for p in state.players if p != me and state.quests[p] != "alchemist")
    if state.quests[me] == "alchemist":
        me, other = other, next(p for p in state.players if p not in (me, other))
    potions = tuple(c for c, name in CONTENT.cubes.items() if name == "potion")
    view = GAME.view(replace(state, stash={**state.stash, other: potions}), me)
    dealt = _dealt(view, me, other, 300)
    assert dealt["alchemist"] / 300 > 0.6
    empty = GAME.view(replace(state, stash={**state.stash, other: ()}), me)
    assert len(_dealt(empty, me, other, 300)) == len(CONTENT.quests) - 1
