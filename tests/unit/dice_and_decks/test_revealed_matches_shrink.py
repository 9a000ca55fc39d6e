"""Finished matches leave dice's and decks' memory: after the reveal only the commitment
is kept, and the stream writer holds none of the match's events."""

from __future__ import annotations

from typing import Any

from services.common.envelope import Cause, make_envelope
from services.decks.service import DecksService
from services.dice.service import DiceService
from tabletop.v1 import decks_pb2, dice_pb2, envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.fakes import context, memory_writer

CAUSE = Cause("c", "c", "test")
SECRET = b"k" * 32


def shuffle(match_id: str, request_id: str) -> decks_pb2.ShuffleRequest:
    cards = [f"c{i}" for i in range(10)]
    return decks_pb2.ShuffleRequest(
        match_id=match_id, deck="d", cards=cards, request_id=request_id, correlation_id="c"
    )


def draw(match_id: str, request_id: str) -> decks_pb2.DrawRequest:
    return decks_pb2.DrawRequest(
        match_id=match_id, deck="d", count=2, request_id=request_id, correlation_id="c"
    )


def roll(match_id: str, request_id: str) -> dice_pb2.RollRequest:
    return dice_pb2.RollRequest(
        match_id=match_id, count=3, sides=6, request_id=request_id, correlation_id="c"
    )


def envelopes(stream: str, *payloads: Any) -> list[envelope_pb2.EventEnvelope]:
    return [
        make_envelope(match_id="m", stream=stream, sequence=i + 1, payload=p, cause=CAUSE)
        for i, p in enumerate(payloads)
    ]


def test_dice_forget_the_rolls_of_a_revealed_match() -> None:
    writer, _ = memory_writer("dice")
    dice = DiceService(writer, secret=b"s")
    rolled = pe.DiceRolled(count=1, sides=6, values=[4], counter_to=1, request_id="r")
    for envelope in envelopes("dice", pe.DiceCommitted(commitment="x"), rolled):
        dice.apply(envelope)
    assert "r" in dice._matches["m"].replies
    dice.apply(envelopes("dice", pe.DiceSeedRevealed(seed="00"))[0])
    assert "m" not in dice._matches and dice._revealed == {"m": "x"}
    assert not writer.is_open("m")


def test_decks_forget_the_piles_of_a_revealed_match() -> None:
    writer, _ = memory_writer("decks")
    decks = DecksService(writer, secret=b"s")
    shuffled = pe.DeckShuffled(deck="d", cards=["a", "b", "c"], request_id="s")
    for envelope in envelopes("decks", pe.DecksCommitted(commitment="x"), shuffled):
        decks.apply(envelope)
    assert decks._matches["m"].piles.piles and decks._matches["m"].replies
    decks.apply(envelopes("decks", pe.DecksSeedRevealed(seed="00"))[0])
    assert "m" not in decks._matches and decks._revealed == {"m": "x"}
    assert not writer.is_open("m")


async def test_a_restart_replays_only_the_unrevealed_matches_shuffles_and_rolls() -> None:
    decks_writer, decks_log = memory_writer("decks")
    dice_writer, dice_log = memory_writer("dice")
    decks, dice = DecksService(decks_writer, SECRET), DiceService(dice_writer, SECRET)
    for match_id in ("done", "open"):
        commit = dice_pb2.CommitRequest(match_id=match_id, correlation_id="c")
        await decks.Commit(commit, context())
        await dice.Commit(commit, context())
        await decks.Shuffle(shuffle(match_id, "s1"), context())
        await decks.Draw(draw(match_id, "d1"), context())
        await dice.Roll(roll(match_id, "r1"), context())
    reveal = dice_pb2.RevealRequest(match_id="done", correlation_id="c")
    await decks.Reveal(reveal, context())
    await dice.Reveal(reveal, context())

    decks_again = DecksService(memory_writer("decks")[0], SECRET)
    dice_again = DiceService(memory_writer("dice")[0], SECRET)
    for service, log in ((decks_again, decks_log), (dice_again, dice_log)):
        service.begin_recovery()
        await service._writer.restore(log.records(), service.apply)
        service.end_recovery()
    assert "done" not in decks_again._matches and "done" in decks_again._revealed
    assert "done" not in dice_again._matches and "done" in dice_again._revealed
    # the open match continues exactly where it stood: retries and the next outcomes
    for name in ("d1", "d2"):
        assert await decks_again.Draw(draw("open", name), context()) == await decks.Draw(
            draw("open", name), context()
        )
    for name in ("r1", "r2"):
        assert await dice_again.Roll(roll("open", name), context()) == await dice.Roll(
            roll("open", name), context()
        )
    assert (await decks_again.Reveal(reveal, context())).seed == decks.seed("done").hex()
