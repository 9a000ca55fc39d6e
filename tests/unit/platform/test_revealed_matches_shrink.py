"""Finished matches leave dice's and decks' memory: after the reveal only the commitment
and the revealed flag are kept, and the stream writer holds none of the match's events."""

from __future__ import annotations

from typing import Any

from services.common.envelope import Cause, make_envelope
from services.decks.service import DecksService
from services.dice.service import DiceService
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe
from tests.unit.platform.fakes import memory_writer

CAUSE = Cause("c", "c", "test")


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
    assert "r" in dice._matches["m"].rolls
    dice.apply(envelopes("dice", pe.DiceSeedRevealed(seed="00"))[0])
    match = dice._matches["m"]
    assert match.revealed and match.commitment == "x" and match.rolls == {}
    assert not writer.is_open("m")


def test_decks_forget_the_piles_of_a_revealed_match() -> None:
    writer, _ = memory_writer("decks")
    decks = DecksService(writer, secret=b"s")
    shuffled = pe.DeckShuffled(deck="d", cards=["a", "b", "c"], request_id="s")
    for envelope in envelopes("decks", pe.DecksCommitted(commitment="x"), shuffled):
        decks.apply(envelope)
    assert decks._matches["m"].piles.piles and decks._matches["m"].replies
    decks.apply(envelopes("decks", pe.DecksSeedRevealed(seed="00"))[0])
    match = decks._matches["m"]
    assert match.revealed and match.commitment == "x"
    assert not match.piles.piles and not match.replies
    assert not writer.is_open("m")
