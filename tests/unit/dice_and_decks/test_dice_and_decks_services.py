"""The dice and decks services over an in-memory event log: seeds, commitments, outcomes derived
from the committed seed, request-id idempotency, reveal, and recovery from the event log."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

import grpc
import pytest

from services.decks.service import DecksService
from services.dice.service import MAX_DICE, MAX_SIDES, DiceService
from services.games.randomness import DerivedRandom, commitment, match_seed
from tabletop.v1 import decks_pb2, dice_pb2, envelope_pb2
from tests.unit.fakes import Aborted, context, memory_writer

SECRET = b"k" * 32
MATCH = "m-1"
CARDS = tuple(f"c{i}" for i in range(10))


def dice_service() -> tuple[DiceService, list[envelope_pb2.EventEnvelope]]:
    writer, event_log = memory_writer("dice")
    return DiceService(writer, SECRET), event_log.envelopes


def roll(count: int = 2, sides: int = 6, request_id: str = "r1") -> dice_pb2.RollRequest:
    return dice_pb2.RollRequest(
        match_id=MATCH, count=count, sides=sides, request_id=request_id, correlation_id="c"
    )


COMMIT = dice_pb2.CommitRequest(match_id=MATCH, correlation_id="c")
REVEAL = dice_pb2.RevealRequest(match_id=MATCH, correlation_id="c")


async def refused(call: Awaitable[object]) -> Aborted:
    with pytest.raises(Aborted) as aborted:
        await call
    return aborted.value


# -- dice -----------------------------------------------------------------------------


async def test_dice_commit_to_the_match_seed_once() -> None:
    dice, event_log = dice_service()
    first = await dice.Commit(COMMIT, context())
    again = await dice.Commit(COMMIT, context())
    assert first.commitment == again.commitment == commitment(match_seed(SECRET, f"dice:{MATCH}"))
    assert len(event_log) == 1


async def test_rolls_derive_from_the_committed_seed_in_order() -> None:
    dice, _ = dice_service()
    await dice.Commit(COMMIT, context())
    first = await dice.Roll(roll(2, 6, "r1"), context())
    second = await dice.Roll(roll(3, 20, "r2"), context())
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert tuple(first.values) == expected.roll(2, 6)
    assert tuple(second.values) == expected.roll(3, 20)


async def test_a_retried_roll_gets_the_first_values_and_appends_nothing() -> None:
    dice, event_log = dice_service()
    await dice.Commit(COMMIT, context())
    first = await dice.Roll(roll(request_id="r1"), context())
    again = await dice.Roll(roll(request_id="r1"), context())
    assert again == first
    assert len(event_log) == 2


async def test_dice_refuse_rolls_before_the_commitment_and_bad_dice() -> None:
    dice, _ = dice_service()
    assert (await refused(dice.Roll(roll(), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    await dice.Commit(COMMIT, context())
    for count, sides in ((0, 6), (MAX_DICE + 1, 6), (1, 1), (1, MAX_SIDES + 1)):
        bad = await refused(dice.Roll(roll(count, sides), context()))
        assert bad.code == grpc.StatusCode.INVALID_ARGUMENT


async def test_the_revealed_seed_matches_the_commitment_and_ends_every_roll() -> None:
    dice, _ = dice_service()
    committed = await dice.Commit(COMMIT, context())
    first = await dice.Roll(roll(request_id="r1"), context())
    revealed = await dice.Reveal(REVEAL, context())
    assert commitment(bytes.fromhex(revealed.seed)) == committed.commitment
    assert revealed.commitment == committed.commitment
    assert (await refused(dice.Roll(roll(request_id="r2"), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    # Nothing follows a reveal (the board reveals after the match's last chance node), so
    # the match's rolls leave memory: even a retry is refused.
    assert first.values
    assert (await refused(dice.Roll(roll(request_id="r1"), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )


async def test_a_failed_append_changes_nothing_and_the_retry_rolls_the_same() -> None:
    writer, event_log = memory_writer("dice")
    dice = DiceService(writer, SECRET)
    await dice.Commit(COMMIT, context())
    event_log.down = True
    assert (await refused(dice.Roll(roll(request_id="r1"), context()))).code == (
        grpc.StatusCode.UNAVAILABLE
    )
    event_log.down = False
    rolled = await dice.Roll(roll(request_id="r1"), context())
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    assert tuple(rolled.values) == expected.roll(2, 6)


async def test_dice_recovered_from_their_log_answer_retries_and_continue() -> None:
    writer, event_log = memory_writer("dice")
    dice = DiceService(writer, SECRET)
    await dice.Commit(COMMIT, context())
    first = await dice.Roll(roll(request_id="r1"), context())
    recovered = DiceService(memory_writer("dice")[0], SECRET)
    for envelope in event_log.envelopes:
        recovered.apply(envelope)
    assert (await recovered.Roll(roll(request_id="r1"), context())).values == first.values
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    expected.roll(2, 6)
    second = await recovered.Roll(roll(request_id="r2"), context())
    assert tuple(second.values) == expected.roll(2, 6)


async def test_dice_refuse_a_match_of_another_shard() -> None:
    dice = DiceService(memory_writer("dice", shard=0, shards=64)[0], SECRET)
    ids = [f"m-{i}" for i in range(64)]
    other = next(i for i in ids if not dice._writer.owns(i))
    request = dice_pb2.CommitRequest(match_id=other)
    assert (await refused(dice.Commit(request, context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )


# -- decks ----------------------------------------------------------------------------


def shuffle(request_id: str = "s1", cards: tuple[str, ...] = CARDS) -> decks_pb2.ShuffleRequest:
    return decks_pb2.ShuffleRequest(
        match_id=MATCH, deck="d", cards=cards, request_id=request_id, correlation_id="c"
    )


def draw(count: int, request_id: str) -> decks_pb2.DrawRequest:
    return decks_pb2.DrawRequest(
        match_id=MATCH, deck="d", count=count, request_id=request_id, correlation_id="c"
    )


async def committed_decks() -> tuple[DecksService, list[envelope_pb2.EventEnvelope]]:
    writer, event_log = memory_writer("decks")
    decks = DecksService(writer, SECRET)
    await decks.Commit(COMMIT, context())
    return decks, event_log.envelopes


async def test_draws_follow_the_order_derived_from_the_committed_seed() -> None:
    decks, _ = await committed_decks()
    shuffled = await decks.Shuffle(shuffle(), context())
    first = await decks.Draw(draw(3, "d1"), context())
    second = await decks.Draw(draw(2, "d2"), context())
    order = DerivedRandom(match_seed(SECRET, f"decks:{MATCH}"), MATCH).shuffled(CARDS)
    assert shuffled.size == len(CARDS)
    assert tuple(first.cards) == tuple(order[:3]) and first.remaining == 7
    assert tuple(second.cards) == tuple(order[3:5]) and second.remaining == 5


async def test_retried_shuffles_and_draws_get_their_first_reply() -> None:
    decks, event_log = await committed_decks()
    await decks.Shuffle(shuffle("s1"), context())
    first = await decks.Draw(draw(3, "d1"), context())
    appended = len(event_log)
    assert await decks.Draw(draw(3, "d1"), context()) == first
    await decks.Shuffle(shuffle("s1"), context())
    assert len(event_log) == appended
    assert (await decks.Draw(draw(1, "d2"), context())).remaining == 6


async def test_decks_refuse_a_draw_larger_than_the_pile_and_unnamed_decks() -> None:
    decks, event_log = await committed_decks()
    await decks.Shuffle(shuffle(), context())
    appended = len(event_log)
    too_many = await refused(decks.Draw(draw(11, "d1"), context()))
    assert too_many.code == grpc.StatusCode.FAILED_PRECONDITION
    unnamed = decks_pb2.ShuffleRequest(match_id=MATCH, cards=CARDS, request_id="s2")
    assert (await refused(decks.Shuffle(unnamed, context()))).code == (
        grpc.StatusCode.INVALID_ARGUMENT
    )
    assert len(event_log) == appended


async def test_decks_reveal_ends_every_draw() -> None:
    decks, _ = await committed_decks()
    await decks.Shuffle(shuffle(), context())
    first = await decks.Draw(draw(2, "d1"), context())
    revealed = await decks.Reveal(REVEAL, context())
    assert commitment(bytes.fromhex(revealed.seed)) == revealed.commitment
    assert (await refused(decks.Draw(draw(1, "d2"), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert first.cards
    assert (await refused(decks.Draw(draw(2, "d1"), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )


async def test_decks_recovered_from_their_log_hold_the_same_piles() -> None:
    decks, event_log = await committed_decks()
    await decks.Shuffle(shuffle(), context())
    await decks.Draw(draw(4, "d1"), context())
    recovered = DecksService(memory_writer("decks")[0], SECRET)
    for envelope in event_log:
        recovered.apply(envelope)
    after = await recovered.Draw(draw(2, "d2"), context())
    expected = await decks.Draw(draw(2, "d2"), context())
    assert after.cards == expected.cards and after.remaining == expected.remaining


# -- outcomes answered before they are durable (defer_append, Seal) --------------------

SEAL = dice_pb2.SealRequest(match_id=MATCH, correlation_id="c")
DEFERRED_COMMIT = dice_pb2.CommitRequest(match_id=MATCH, correlation_id="c", defer_append=True)


def deferred_roll(request_id: str, correlation_id: str = "c") -> dice_pb2.RollRequest:
    request = roll(request_id=request_id)
    request.correlation_id, request.defer_append = correlation_id, True
    return request


def dice_rolls(count: int) -> list[tuple[int, ...]]:
    expected = DerivedRandom(match_seed(SECRET, f"dice:{MATCH}"), MATCH)
    return [expected.roll(2, 6) for _ in range(count)]


async def test_deferred_outcomes_are_answered_at_once_and_appended_by_the_seal() -> None:
    writer, event_log = memory_writer("dice")
    dice = DiceService(writer, SECRET)
    committed = await dice.Commit(DEFERRED_COMMIT, context())
    first = await dice.Roll(deferred_roll("r1"), context())
    second = await dice.Roll(deferred_roll("r2"), context())
    assert committed.commitment == commitment(match_seed(SECRET, f"dice:{MATCH}"))
    assert [tuple(first.values), tuple(second.values)] == dice_rolls(2)
    assert (first.sequence, second.sequence) == (2, 3)
    assert event_log.envelopes == []  # nothing durable yet
    sealed = await dice.Seal(SEAL, context())
    assert sealed.sequence == 3
    assert event_log.appends == 1 and [e.sequence for e in event_log.envelopes] == [1, 2, 3]
    # the durable state answers as the draft did
    assert await dice.Roll(deferred_roll("r2"), context()) == second
    assert (await dice.Seal(SEAL, context())).sequence == 3 and event_log.appends == 1


async def test_a_retried_deferred_roll_gets_its_first_values() -> None:
    dice, event_log = dice_service()
    await dice.Commit(DEFERRED_COMMIT, context())
    first = await dice.Roll(deferred_roll("r1"), context())
    assert await dice.Roll(deferred_roll("r1"), context()) == first
    await dice.Seal(SEAL, context())
    assert len(event_log) == 2


async def test_a_failed_seal_drops_the_draft_and_the_same_requests_derive_the_same() -> None:
    writer, event_log = memory_writer("dice")
    dice = DiceService(writer, SECRET)
    await dice.Commit(COMMIT, context())
    first = await dice.Roll(deferred_roll("r1"), context())
    event_log.down = True
    assert (await refused(dice.Seal(SEAL, context()))).code == grpc.StatusCode.UNAVAILABLE
    event_log.down = False
    assert len(event_log.envelopes) == 1  # the commitment only
    again = await dice.Roll(deferred_roll("r1"), context())
    assert again == first
    await dice.Seal(SEAL, context())
    assert [e.sequence for e in event_log.envelopes] == [1, 2]


async def test_a_restart_forgets_the_draft_and_derives_the_same_outcomes() -> None:
    writer, event_log = memory_writer("dice")
    dice = DiceService(writer, SECRET)
    await dice.Commit(COMMIT, context())
    first = await dice.Roll(deferred_roll("r1"), context())
    restarted = DiceService(memory_writer("dice")[0], SECRET)
    for envelope in event_log.envelopes:
        restarted.apply(envelope)
    again = await restarted.Roll(deferred_roll("r1"), context())
    assert again.values == first.values


async def test_any_other_append_of_the_match_goes_after_what_waits_for_a_seal() -> None:
    dice, event_log = dice_service()
    await dice.Commit(DEFERRED_COMMIT, context())
    deferred = await dice.Roll(deferred_roll("r1"), context())
    durable = await dice.Roll(roll(request_id="r2"), context())  # without defer_append
    assert [tuple(deferred.values), tuple(durable.values)] == dice_rolls(2)
    assert [e.sequence for e in event_log] == [1, 2, 3]
    assert durable.sequence == 3


async def test_another_commands_first_deferred_roll_appends_the_leftovers_first() -> None:
    dice, event_log = dice_service()
    await dice.Commit(COMMIT, context())
    await dice.Roll(deferred_roll("a:0", correlation_id="a"), context())  # never sealed
    second = await dice.Roll(deferred_roll("b:0", correlation_id="b"), context())
    assert [e.correlation_id for e in event_log] == ["c", "a"]
    await dice.Seal(SEAL, context())
    assert [e.correlation_id for e in event_log] == ["c", "a", "b"]
    assert tuple(second.values) == dice_rolls(2)[1]


async def test_the_reveal_appends_what_waits_for_a_seal_before_the_seed() -> None:
    dice, event_log = dice_service()
    await dice.Commit(DEFERRED_COMMIT, context())
    await dice.Roll(deferred_roll("r1"), context())
    await dice.Reveal(REVEAL, context())
    assert [e.payload.type_url.rsplit(".", 1)[-1] for e in event_log] == [
        "DiceCommitted",
        "DiceRolled",
        "DiceSeedRevealed",
    ]


def deferred(request: decks_pb2.ShuffleRequest | decks_pb2.DrawRequest) -> Any:
    request.defer_append = True
    return request


async def test_deferred_shuffles_and_draws_are_one_append_and_hold_the_same_piles() -> None:
    writer, event_log = memory_writer("decks")
    decks = DecksService(writer, SECRET)
    await decks.Commit(DEFERRED_COMMIT, context())
    shuffled = await decks.Shuffle(deferred(shuffle("s1")), context())
    first = await decks.Draw(deferred(draw(3, "d1")), context())
    second = await decks.Draw(deferred(draw(2, "d2")), context())
    order = DerivedRandom(match_seed(SECRET, f"decks:{MATCH}"), MATCH).shuffled(CARDS)
    assert shuffled.size == len(CARDS)
    assert tuple(first.cards) == tuple(order[:3]) and first.remaining == 7
    assert tuple(second.cards) == tuple(order[3:5]) and second.remaining == 5
    assert event_log.envelopes == []
    assert (await decks.Seal(SEAL, context())).sequence == 4
    assert event_log.appends == 1 and len(event_log.envelopes) == 4
    # the durable piles are the draft's: a restart from the log draws on from card 5
    restarted = DecksService(memory_writer("decks")[0], SECRET)
    for envelope in event_log.envelopes:
        restarted.apply(envelope)
    after = await restarted.Draw(draw(1, "d3"), context())
    assert tuple(after.cards) == (order[5],) and after.remaining == 4
    assert await restarted.Draw(deferred(draw(3, "d1")), context()) == first


async def test_an_unsealed_draw_leaves_the_durable_piles_as_they_were() -> None:
    writer, event_log = memory_writer("decks")
    decks = DecksService(writer, SECRET)
    await decks.Commit(COMMIT, context())
    await decks.Shuffle(shuffle("s1"), context())
    drawn = await decks.Draw(deferred(draw(3, "d1")), context())
    event_log.down = True
    assert (await refused(decks.Seal(SEAL, context()))).code == grpc.StatusCode.UNAVAILABLE
    event_log.down = False
    # the draft is gone: the pile still holds all ten cards, and the retry draws the same
    assert (await refused(decks.Draw(draw(11, "d9"), context()))).code == (
        grpc.StatusCode.FAILED_PRECONDITION
    )
    assert await decks.Draw(deferred(draw(3, "d1")), context()) == drawn
    await decks.Reveal(REVEAL, context())
    assert [e.sequence for e in event_log.envelopes] == [1, 2, 3, 4]
