"""The fast paths give the answers of the plain ones they replace: the touching pairs of a
setup drop as an STRtree query with the ``dwithin`` predicate finds them, whether a
hero survives a room as the full loot result says, and a settled cube's coordinates rounded
to thousandths as Python's ``round`` rounds them."""

from __future__ import annotations

import dataclasses
import itertools
import math
import random

import shapely

from services.games.dungeon_drop.content import CONTENT, MONSTER
from services.games.dungeon_drop.loot import Looter, loot_result
from services.games.dungeon_drop.placement import Placement
from services.games.dungeon_drop.rooms import square
from services.games.dungeon_drop.spread import TouchingPair, touching_pairs
from services.games.dungeon_drop.state import DungeonDropState
from services.games.dungeon_drop.table import REAL_SIDES, drop, drop_reals, round3


def strtree_pairs(placements: list[Placement]) -> tuple[TouchingPair, ...]:
    """The pairs as the whole-table STRtree query finds them (what ``touching_pairs`` did)."""
    ordered = sorted(placements, key=lambda p: p.cube)
    squares = [square(p) for p in ordered]
    near = shapely.STRtree(squares).query(
        squares, predicate="dwithin", distance=CONTENT.table.touching_mm
    )
    pairs = sorted({(int(i), int(j)) for i, j in zip(*near, strict=True) if i < j})
    return tuple(TouchingPair(ordered[i].cube, ordered[j].cube) for i, j in pairs)


def test_touching_pairs_of_simulated_drops_are_the_strtree_query_s() -> None:
    cubes = CONTENT.setup_cubes(solo=False)
    touching = 0
    for seed in range(12):
        dice = random.Random(seed)
        values = [dice.randint(1, REAL_SIDES) for _ in range(drop_reals(len(cubes)))]
        placements = list(drop({}, cubes, values).placements)
        assert touching_pairs(placements) == strtree_pairs(placements)
        touching += len(strtree_pairs(placements))
    assert touching > 0  # the drops did put cubes together


def test_touching_pairs_at_the_edge_of_the_distance_are_the_strtree_query_s() -> None:
    """Two cubes side by side, turned or not, their gap stepped across ``touching_mm``."""
    d = CONTENT.table.touching_mm
    small, large = "gold01", next(c for c in CONTENT.cubes if CONTENT.kind(c).size == "large")
    for first, second in itertools.product((small, large), repeat=2):
        if first == second:
            continue
        span = (CONTENT.edge(first) + CONTENT.edge(second)) / 2.0
        for angle, gap in itertools.product(
            (0.0, 45.0, 30.0), (d - 1e-9, d, d + 1e-9, 0.0, -1.0, 2 * d)
        ):
            a = Placement(first, 300.0, 300.0, 0.0)
            b = Placement(second, 300.0 + span + gap, 300.0, angle)
            diagonal = Placement(
                second, 300.0 + (span + gap) / math.sqrt(2), 300.0 + (span + gap) / 2, angle
            )
            for pair in ([a, b], [a, diagonal], [b, a]):
                assert touching_pairs(pair) == strtree_pairs(pair)


def plain_loot_health(state: DungeonDropState, player: str, cubes: tuple[str, ...]) -> int:
    """The hero's Health after the room, as the loot rules read (loot.py's docstring)."""
    kinds = [CONTENT.kind(c) for c in cubes]
    healed = sum(k.heals for k in kinds)
    if state.ward and player == state.active:
        return state.health[player] + healed
    blows = sorted((k.damage for k in kinds if k.category == MONSTER), reverse=True)
    owned = sum(1 for c in state.stash.get(player, ()) if CONTENT.kind(c).shield)
    shields = owned - state.shields_used.get(player, 0) + sum(1 for k in kinds if k.shield)
    return state.health[player] + healed - sum(blows[min(shields, len(blows)) :])


def test_survives_says_what_the_loot_result_says() -> None:
    kinds = sorted(CONTENT.cubes)
    dice = random.Random(7)
    struck = 0
    for _ in range(3000):
        cubes = tuple(dice.sample(kinds, dice.randint(0, 9)))
        stash = tuple(dice.sample(kinds, dice.randint(0, 6)))
        owned = sum(1 for c in stash if CONTENT.kind(c).shield)
        state = dataclasses.replace(
            DungeonDropState(),
            players=("p1", "p2"),
            active=dice.choice(("p1", "p2")),
            ward=dice.random() < 0.2,
            health={"p1": dice.randint(0, 6)},
            stash={"p1": stash},
            shields_used={"p1": dice.randint(0, owned)},
        )
        looter = Looter.of(state, "p1")
        health = plain_loot_health(state, "p1", cubes)
        assert loot_result(state, "p1", cubes).health == health
        assert looter.survives(cubes) == (health >= 1)
        struck += health < state.health["p1"]
    assert struck > 100  # rooms whose monsters got past the shields


def test_round3_is_python_s_round_to_thousandths() -> None:
    rng = random.Random(3)
    values = [rng.uniform(0.0, 1_000.0) for _ in range(20_000)]
    values += [rng.uniform(0.0, 0.01) for _ in range(2_000)]
    # exact ties (k/16 thousandths: round half to even), thousandths and their neighbours
    values += [k / 16 for k in range(2_000)] + [k / 2_000 for k in range(2_000)]
    values += [math.nextafter(k / 2_000, 0.0) for k in range(1, 2_000)]
    values += [math.nextafter(k / 2_000, math.inf) for k in range(2_000)]
    values += [0.0, -0.0, 5e-324, 0.0005, 0.0015, 89.9995, 899.9995, 1e9, 1e12, -0.0004, -2.5]
    for value in values:
        expected = round(value, 3)
        got = round3(value)
        assert got == expected and math.copysign(1.0, got) == math.copysign(1.0, expected), value
