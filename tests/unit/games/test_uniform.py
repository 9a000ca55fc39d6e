"""``below`` draws what ``random.Random.randrange`` draws from the same state: seeded
playouts and searches keep their numbers (and their recorded results) with it."""

from __future__ import annotations

import random

import pytest

from services.games.uniform import below


@pytest.mark.parametrize("n", [1, 2, 3, 6, 7, 8, 9, 100, 2**40 + 3])
def test_it_draws_randranges_numbers_and_leaves_the_same_state(n: int) -> None:
    ours, theirs = random.Random(n), random.Random(n)
    draw = below(ours)
    assert [draw(n) for _ in range(200)] == [theirs.randrange(n) for _ in range(200)]
    assert ours.getstate() == theirs.getstate()


def test_dice_from_it_are_randints() -> None:
    ours, theirs = random.Random(5), random.Random(5)
    draw = below(ours)
    assert [draw(6) + 1 for _ in range(300)] == [theirs.randint(1, 6) for _ in range(300)]


def test_an_empty_choice_is_refused() -> None:
    with pytest.raises(ValueError, match="nothing to draw from"):
        below(random.Random(1))(0)
