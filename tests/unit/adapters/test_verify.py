"""Verifying a log's randomness catches every kind of tampering."""

from __future__ import annotations

from services.adapters.verify import verify_match
from services.common.envelope import Cause, make_envelope
from services.games.randomness import DerivedRandom, commitment
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe

SEED = b"s" * 32
MATCH = "m-1"
CAUSE = Cause("c", "c", "test")


def envelope(stream: str, sequence: int, payload: object) -> envelope_pb2.EventEnvelope:
    return make_envelope(
        match_id=MATCH,
        stream=stream,
        sequence=sequence,
        payload=payload,  # type: ignore[arg-type]
        cause=CAUSE,
    )


def honest_log() -> list[envelope_pb2.EventEnvelope]:
    dice = DerivedRandom(SEED, MATCH)
    values = dice.roll(2, 6)
    decks = DerivedRandom(SEED, MATCH)
    cards = ("a", "b", "c", "d")
    order = decks.shuffled(cards)
    return [
        envelope(
            "board",
            1,
            pe.MatchCreated(
                game="g", dice_commitment=commitment(SEED), decks_commitment=commitment(SEED)
            ),
        ),
        envelope("dice", 1, pe.DiceCommitted(commitment=commitment(SEED))),
        envelope(
            "dice",
            2,
            pe.DiceRolled(count=2, sides=6, values=values, counter_from=0, counter_to=dice.counter),
        ),
        envelope("dice", 3, pe.DiceSeedRevealed(seed=SEED.hex())),
        envelope("decks", 1, pe.DecksCommitted(commitment=commitment(SEED))),
        envelope(
            "decks",
            2,
            pe.DeckShuffled(deck="d", cards=cards, counter_from=0, counter_to=decks.counter),
        ),
        envelope("decks", 3, pe.CardsDrawn(deck="d", cards=order[:2])),
        envelope("decks", 4, pe.DecksSeedRevealed(seed=SEED.hex())),
    ]


def test_an_honest_log_verifies() -> None:
    result = verify_match(honest_log())
    assert result.ok, result.problems
    assert result.checked == 5


def test_a_changed_die_is_caught() -> None:
    log = honest_log()
    rolled = pe.DiceRolled()
    log[2].payload.Unpack(rolled)
    rolled.values[0] = rolled.values[0] % 6 + 1
    log[2].payload.Pack(rolled)
    assert not verify_match(log).ok


def test_a_card_drawn_out_of_order_is_caught() -> None:
    log = honest_log()
    drawn = pe.CardsDrawn()
    log[6].payload.Unpack(drawn)
    drawn.cards.reverse()
    log[6].payload.Pack(drawn)
    assert any("derived order" in p for p in verify_match(log).problems)


def test_a_seed_that_does_not_match_its_commitment_is_caught() -> None:
    log = honest_log()
    log[3].payload.Pack(pe.DiceSeedRevealed(seed=(b"x" * 32).hex()))
    assert any("commitment" in p for p in verify_match(log).problems)


def test_a_roll_left_off_the_record_shows_as_a_counter_gap() -> None:
    log = honest_log()
    rolled = pe.DiceRolled()
    log[2].payload.Unpack(rolled)
    rng = DerivedRandom(SEED, MATCH, counter=5)
    rolled.values[:] = rng.roll(2, 6)
    rolled.counter_from, rolled.counter_to = 5, rng.counter
    log[2].payload.Pack(rolled)
    assert any("counter jumps" in p for p in verify_match(log).problems)


def test_an_unrevealed_seed_cannot_be_verified() -> None:
    log = [e for e in honest_log() if e.event_type != "tabletop.v1.DiceSeedRevealed"]
    assert any("never revealed" in p for p in verify_match(log).problems)


def test_sequence_gaps_are_caught() -> None:
    log = honest_log()
    log[5].sequence = 7
    assert any("gaps" in p for p in verify_match(log).problems)


def decks_only_log() -> list[envelope_pb2.EventEnvelope]:
    """A game that draws cards and rolls no dice commits no dice seed (Crashland)."""
    log = [e for e in honest_log() if e.stream != "dice"]
    log[0].payload.Pack(pe.MatchCreated(game="g", decks_commitment=commitment(SEED)))
    return log


def test_a_match_that_committed_no_dice_seed_verifies_without_dice() -> None:
    result = verify_match(decks_only_log())
    assert result.ok, result.problems
    assert result.checked == 3  # the decks seed, its shuffle and its draw


def test_dice_events_of_a_match_that_committed_no_dice_seed_are_caught() -> None:
    rolled = envelope("dice", 1, pe.DiceRolled(count=1, sides=6, values=[3], counter_to=1))
    problems = verify_match([*decks_only_log(), rolled]).problems
    assert problems == [
        "dice: the match committed no dice seed, yet 1 dice event(s) are in its log"
    ]
