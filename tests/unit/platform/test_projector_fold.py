"""The projector's fold: views at command boundaries, seeds in any order, no double folds."""

from __future__ import annotations

import json
from typing import Any

import pytest

from services.adapters.game_adapter import messages_for
from services.adapters.projection import Projection
from services.common.envelope import Cause, make_envelope
from services.common.metrics import LOG_DUPLICATES
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance
from services.games.registry import get_game
from services.projector.app import (
    MAX_VIEW_BYTES,
    ProjectionFolder,
    TooLarge,
    check_sizes,
    dead_letter,
    decode_record,
    encode_record,
)
from tabletop.v1 import envelope_pb2, match_pb2
from tabletop.v1 import platform_events_pb2 as pe

CAUSE = Cause("c", "c", "board")


def board_batch() -> list[envelope_pb2.EventEnvelope]:
    """The events of a real Crashland CreateMatch, as the board appends them."""
    game = get_game("crashland")
    messages = messages_for("crashland")
    events = list(game.setup(["p"], {}))
    state = game.fold(events)
    chance = SeededChance("m", b"d" * 32, b"k" * 32)
    while isinstance(step := game.next_step(state), AwaitingChance):
        new = game.resolve(state, chance.resolve(step.request))
        state = game.fold(new, state)
        events.extend(new)
    payloads = [
        pe.MatchCreated(game="crashland", players=["p"]),
        *(messages.event_to_any(e) for e in events),
    ]
    batch = [
        make_envelope(
            match_id="m", stream="board", sequence=i + 1, payload=p, cause=CAUSE, game="crashland"
        )
        for i, p in enumerate(payloads)
    ]
    batch[-1].last_in_batch = True
    return batch


def test_a_view_is_published_only_when_the_command_is_whole() -> None:
    fold_record = ProjectionFolder().fold
    record = None
    published = []
    for envelope in board_batch():
        record, projection = fold_record(record, envelope)
        published.append(projection is not None)
    assert published[-1] and not any(published[:-1])
    assert record is not None and record["version"] == len(published)


def test_an_event_folded_twice_changes_nothing() -> None:
    batch = board_batch()
    fold_record = ProjectionFolder().fold
    record = None
    for envelope in batch:
        record, _ = fold_record(record, envelope)
    again, projection = fold_record(record, batch[-1])
    assert again == record and projection is None


def test_a_seed_revealed_before_the_match_is_read_is_kept() -> None:
    fold_record = ProjectionFolder().fold
    reveal = make_envelope(
        match_id="m", stream="dice", sequence=3, payload=pe.DiceSeedRevealed(seed="ab"), cause=CAUSE
    )
    record, _ = fold_record(None, reveal)
    for envelope in board_batch():
        record, projection = fold_record(record, envelope)
    assert projection is not None
    assert projection.view_for("p").provenance.dice_seed == "ab"


def test_the_cache_and_the_stored_record_fold_alike() -> None:
    batch = board_batch()
    cached, uncached = ProjectionFolder(), ProjectionFolder()
    a: dict[str, Any] | None = None
    b: dict[str, Any] | None = None
    for envelope in batch:
        a, _ = cached.fold(a, envelope)
        b, _ = uncached.fold(b, envelope)
        uncached.forget()  # every fold decodes the record, as after a rebalance
    assert a == b


def test_a_match_created_read_again_after_a_restart_keeps_the_revealed_seeds() -> None:
    batch = board_batch()
    fold_record = ProjectionFolder().fold
    record: dict[str, Any] | None = None
    for envelope in batch:
        record, _ = fold_record(record, envelope)
    reveal = make_envelope(
        match_id="m", stream="dice", sequence=3, payload=pe.DiceSeedRevealed(seed="ab"), cause=CAUSE
    )
    record, _ = fold_record(record, reveal)
    for envelope in batch:  # the board partition re-read from an older committed offset
        record, _ = ProjectionFolder().fold(record, envelope)
    assert record is not None
    assert record["dice_seed"] == "ab"
    assert record["version"] == len(batch)


def test_a_second_event_id_at_a_folded_sequence_is_counted_as_a_duplicate() -> None:
    batch = board_batch()
    fold_record = ProjectionFolder().fold
    record: dict[str, Any] | None = None
    for envelope in batch:
        record, _ = fold_record(record, envelope)
    twin = envelope_pb2.EventEnvelope()
    twin.CopyFrom(batch[-1])
    twin.event_id = "another-id"
    before = LOG_DUPLICATES.labels("board")._value.get()
    again, projection = fold_record(record, batch[-1])  # the same event re-read: fine
    assert LOG_DUPLICATES.labels("board")._value.get() == before
    again, projection = fold_record(record, twin)
    assert LOG_DUPLICATES.labels("board")._value.get() == before + 1
    assert again == record and projection is None


def test_a_record_or_view_over_the_message_limit_is_refused_before_it_is_written() -> None:
    check_sizes(encode_record({"state": "x" * 100}), b"v" * 100)
    with pytest.raises(TooLarge):
        check_sizes(None, b"v" * (MAX_VIEW_BYTES + 1))
    with pytest.raises(TooLarge):
        check_sizes(encode_record({"players": ["n" * 60_000] * 20}), None)


def test_a_stored_record_reads_back_as_it_was_folded() -> None:
    record, _ = ProjectionFolder().fold_batch(None, board_batch())
    assert record is not None
    again = decode_record(encode_record(record))
    assert again == record
    assert Projection.from_record(again).view_for("p") == Projection.from_record(record).view_for(
        "p"
    )
    assert decode_record(None) is None
    # records written before the state was stored as a string hold its data
    legacy = {**record, "state": json.loads(record["state"])}
    assert Projection.from_record(legacy).match.state == Projection.from_record(record).match.state


def test_a_dead_letter_names_the_event_and_the_reason_but_not_its_payload() -> None:
    envelope = board_batch()[0]
    letter = json.loads(dead_letter(envelope, "fold_error", ValueError("x" * 5000)))
    assert letter["match_id"] == "m" and letter["sequence"] == 1
    assert letter["event_id"] == envelope.event_id and letter["reason"] == "fold_error"
    assert "payload" not in letter and len(letter["error"]) <= 1000


def two_commands() -> list[envelope_pb2.EventEnvelope]:
    """A real batch cut in two commands: the first ends at the fourth event."""
    batch = board_batch()
    batch[3].last_in_batch = True
    return batch


def updates_one_by_one(
    envelopes: list[envelope_pb2.EventEnvelope],
) -> list[match_pb2.ViewUpdate]:
    fold_record = ProjectionFolder().fold
    record: dict[str, Any] | None = None
    published = []
    for envelope in envelopes:
        record, projection = fold_record(record, envelope)
        if projection is not None:
            published.append(projection.update())
    return published


def test_a_batch_publishes_its_last_whole_command_as_one_by_one_would() -> None:
    batch = two_commands()
    record, update = ProjectionFolder().fold_batch(None, batch)
    assert update is not None
    assert match_pb2.ViewUpdate.FromString(update) == updates_one_by_one(batch)[-1]
    one_by_one: dict[str, Any] | None = None
    for envelope in batch:
        one_by_one, _ = ProjectionFolder().fold(one_by_one, envelope)
    assert record == one_by_one


def test_a_batch_ending_mid_command_publishes_the_command_before() -> None:
    batch = two_commands()[:6]
    record, update = ProjectionFolder().fold_batch(None, batch)
    assert update is not None
    shown = match_pb2.ViewUpdate.FromString(update)
    assert shown == updates_one_by_one(batch)[-1]
    assert shown.summary.version == 4 and record is not None and record["version"] == 6


def test_a_batch_of_events_already_folded_publishes_nothing() -> None:
    batch = two_commands()
    record, _ = ProjectionFolder().fold_batch(None, batch)
    again, update = ProjectionFolder().fold_batch(record, batch)
    assert update is None and again == record


def test_folding_without_storing_keeps_the_same_projection() -> None:
    """What the rebuild does: stub records per event, the folder's projection at the end."""
    stored, unstored = ProjectionFolder(), ProjectionFolder()
    record: dict[str, Any] | None = None
    stub: dict[str, Any] | None = None
    for envelope in board_batch():
        record, _ = stored.fold(record, envelope)
        stub, _ = unstored.fold(stub, envelope, stored=False)
    assert record is not None
    assert unstored.projection("m").to_record() == Projection.from_record(record).to_record()
