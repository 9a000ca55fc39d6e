"""Verifiable randomness: determinism, unbiased mapping, commitments (docs/DESIGN.md §4)."""

from __future__ import annotations

import hashlib
import hmac
from collections import Counter

import pytest

from services.games.randomness import DerivedRandom, commitment, match_seed

SEED = bytes(range(32))


def test_a_commitment_is_the_sha256_of_the_seed() -> None:
    assert commitment(SEED) == hashlib.sha256(SEED).hexdigest()


def test_outcomes_derive_from_hmac_of_match_id_and_counter() -> None:
    rng = DerivedRandom(SEED, "m1")
    block = int.from_bytes(hmac.new(SEED, b"m1:0", hashlib.sha256).digest()[:8], "big")
    assert rng.below(1 << 32) == block % (1 << 32)
    assert rng.counter == 1


@pytest.mark.parametrize("seed", [SEED, b"", b"short", bytes(range(64)), bytes(range(200))])
def test_every_block_is_the_hmac_sha256_of_match_id_and_counter(seed: bytes) -> None:
    rng = DerivedRandom(seed, "match-7", counter=95)
    for counter in range(95, 230):
        message = f"match-7:{counter}".encode()
        expected = int.from_bytes(hmac.new(seed, message, hashlib.sha256).digest()[:8], "big")
        assert rng.below(1 << 64) == expected


def test_the_same_seed_match_and_counter_give_the_same_outcomes() -> None:
    a, b = DerivedRandom(SEED, "m1"), DerivedRandom(SEED, "m1")
    assert a.roll(20, 6) == b.roll(20, 6)
    assert DerivedRandom(SEED, "m2").roll(20, 6) != DerivedRandom(SEED, "m1").roll(20, 6)


def test_a_roll_resumes_from_its_recorded_counter() -> None:
    whole = DerivedRandom(SEED, "m")
    first, second = whole.roll(3, 6), whole.roll(3, 6)
    resumed = DerivedRandom(SEED, "m", counter=3)
    assert resumed.roll(3, 6) == second and first != ()


def test_dice_faces_are_uniform_within_chi_square_bounds() -> None:
    counts = Counter(DerivedRandom(SEED, "uniform").roll(60_000, 6))
    chi2 = sum((c - 10_000) ** 2 / 10_000 for c in counts.values())
    assert set(counts) == {1, 2, 3, 4, 5, 6}
    assert chi2 < 20.5  # p = 0.001 for 5 degrees of freedom


def test_rejection_sampling_skips_blocks_in_the_biased_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = DerivedRandom(SEED, "m")
    blocks = iter([(1 << 64) - 1, 7])  # the first lies past the last whole multiple of 6
    monkeypatch.setattr(rng, "_block", lambda: next(blocks))
    assert rng.below(6) == 7 % 6


def test_a_shuffle_is_a_permutation_and_depends_on_the_seed() -> None:
    cards = [f"c{i}" for i in range(30)]
    shuffled = DerivedRandom(SEED, "m").shuffled(cards)
    assert sorted(shuffled) == sorted(cards) and shuffled != cards
    assert DerivedRandom(b"other", "m").shuffled(cards) != shuffled


def test_match_seeds_differ_per_match_and_hide_the_master_secret() -> None:
    assert match_seed(b"secret", "a") != match_seed(b"secret", "b")
    assert b"secret" not in match_seed(b"secret", "a")


def test_below_refuses_an_empty_range() -> None:
    with pytest.raises(ValueError):
        DerivedRandom(SEED, "m").below(0)


@pytest.mark.parametrize("sides", [2, 5, 6, 1_000_000, (1 << 63) + 1])
def test_a_roll_of_many_dice_is_each_die_drawn_in_turn(sides: int) -> None:
    one_by_one = DerivedRandom(SEED, "m")
    expected = tuple(1 + one_by_one.below(sides) for _ in range(250))
    rolled = DerivedRandom(SEED, "m")
    assert rolled.roll(250, sides) == expected and rolled.counter == one_by_one.counter


def test_a_roll_of_many_dice_skips_blocks_in_the_biased_tail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rng = DerivedRandom(SEED, "m")
    blocks = iter([(1 << 64) - 1, 7, (1 << 64) - 2, 8])  # the 1st and 3rd past the tail
    monkeypatch.setattr(rng, "_block", lambda: next(blocks))
    assert rng.roll(2, 6) == (1 + 7 % 6, 1 + 8 % 6)


def test_a_roll_of_no_dice_is_empty_and_of_no_sides_refused() -> None:
    assert DerivedRandom(SEED, "m").roll(0, 6) == ()
    with pytest.raises(ValueError):
        DerivedRandom(SEED, "m").roll(2, 0)
