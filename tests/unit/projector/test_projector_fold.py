"""The projector's fold: views at command boundaries, seeds in any order, no double folds,
records that read back (binary, and the JSON records written before)."""

from __future__ import annotations

import json
import struct
from typing import Any

import pytest

from services.adapters.game_adapter import messages_for
from services.adapters.views import view
from services.common.envelope import Cause, make_envelope
from services.common.metrics import LOG_DUPLICATES
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance
from services.games.match import Match
from services.games.registry import get_game
from services.projector.folder import (
    CHANGED,
    MAX_VIEW_BYTES,
    UNCHANGED,
    WHOLE,
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


def dice_reveal(seed: str = "ab") -> envelope_pb2.EventEnvelope:
    return make_envelope(
        match_id="m", stream="dice", sequence=3, payload=pe.DiceSeedRevealed(seed=seed), cause=CAUSE
    )


def folded(envelopes: list[envelope_pb2.EventEnvelope]) -> ProjectionFolder:
    """A folder that folded match "m" event by event, as the careful path does."""
    folder = ProjectionFolder()
    for envelope in envelopes:
        folder.fold(envelope)
    return folder


def record_of(envelopes: list[envelope_pb2.EventEnvelope]) -> bytes:
    return folded(envelopes).record("m")


def test_a_view_is_published_only_when_the_command_is_whole() -> None:
    folder = ProjectionFolder()
    done = [folder.fold(envelope) for envelope in board_batch()]
    assert done[-1] == WHOLE and set(done[:-1]) == {CHANGED}
    assert folder.match("m").version == len(done)


def test_an_event_folded_twice_changes_nothing() -> None:
    batch = board_batch()
    folder = folded(batch)
    record = folder.record("m")
    assert folder.fold(batch[-1]) == UNCHANGED
    assert folder.record("m") == record


def test_a_seed_revealed_before_the_match_is_read_is_kept() -> None:
    folder = folded([dice_reveal(), *board_batch()])
    assert view(folder.match("m"), "p").provenance.dice_seed == "ab"


def test_a_seed_revealed_before_the_match_is_read_is_stored_until_it_is() -> None:
    # Given only the reveal folded (a rebuild reads dice.events before board.events)
    pending = record_of([dice_reveal()])
    assert decode_record(pending) == (None, {"dice_seed": "ab"}, {})
    # When its record is read back and the board events are folded into it
    folder = ProjectionFolder()
    folder.load("m", pending)
    for envelope in board_batch():
        folder.fold(envelope)
    # Then the match shows the seed
    assert folder.match("m").dice_seed == "ab"


def test_folding_from_the_stored_record_every_time_gives_the_same_record() -> None:
    # Given one folder that keeps the match and one that reads the record before each event
    batch = board_batch()
    kept = ProjectionFolder()
    stored: bytes | None = None
    for envelope in batch:
        fresh = ProjectionFolder()  # as after a restart or a rebalance
        fresh.load("m", stored)
        fresh.fold(envelope)
        stored = fresh.record("m")
        kept.fold(envelope)
    # Then both hold the same record
    assert stored == kept.record("m")


def test_a_match_is_read_again_when_the_table_holds_another_record() -> None:
    # Given a folder that folded a match and stored its record
    folder = ProjectionFolder()
    mine, _ = folder.fold_batch("m", None, [board_batch()])
    assert mine is not None
    held = folder.match("m")
    folder.load("m", mine)
    assert folder.match("m") is held  # what it wrote: kept
    # When the table holds another record of the match (another worker folded it)
    other = record_of([*board_batch(), dice_reveal("cd")])
    folder.load("m", other)
    # Then the folder folds from that record
    assert folder.match("m") is not held and folder.match("m").dice_seed == "cd"


def test_a_match_created_read_again_after_a_restart_keeps_the_revealed_seeds() -> None:
    batch = board_batch()
    stored = record_of([*batch, dice_reveal()])
    folder = ProjectionFolder()  # restarted
    folder.load("m", stored)
    for envelope in batch:  # the board partition re-read from an older committed offset
        assert folder.fold(envelope) == UNCHANGED
    assert folder.match("m").dice_seed == "ab"
    assert folder.match("m").version == len(batch)


def test_a_second_event_id_at_a_folded_sequence_is_counted_as_a_duplicate() -> None:
    batch = board_batch()
    folder = ProjectionFolder()
    folder.load("m", record_of(batch))  # the ids survive the record
    twin = envelope_pb2.EventEnvelope()
    twin.CopyFrom(batch[-1])
    twin.event_id = "another-id"
    before = LOG_DUPLICATES.labels("board")._value.get()
    assert folder.fold(batch[-1]) == UNCHANGED  # the same event re-read
    assert LOG_DUPLICATES.labels("board")._value.get() == before
    assert folder.fold(twin) == UNCHANGED
    assert LOG_DUPLICATES.labels("board")._value.get() == before + 1


def test_a_record_or_view_over_the_message_limit_is_refused_before_it_is_written() -> None:
    check_sizes(b"r" * 100, b"v" * 100)
    with pytest.raises(TooLarge):
        check_sizes(None, b"v" * (MAX_VIEW_BYTES + 1))
    with pytest.raises(TooLarge):
        check_sizes(b"r" * (MAX_VIEW_BYTES + 1), None)


def same(one: Match | None, other: Match | None) -> None:
    """Two matches hold the same facts and show the same views."""
    assert one is not None and other is not None
    assert encode_record(one, {}, {}) == encode_record(other, {}, {})
    for viewer in (*one.players, ""):
        assert view(one, viewer) == view(other, viewer)


def test_a_stored_record_reads_back_as_it_was_folded() -> None:
    envelopes = [*board_batch(), dice_reveal()]
    folder = folded(envelopes)
    match, seeds, recent = decode_record(folder.record("m"))
    same(match, folder.match("m"))
    assert seeds == {}
    assert recent == {e.sequence: e.event_id for e in envelopes if e.stream == "board"}
    assert decode_record(None) == (None, {}, {})


def legacy_record(folder: ProjectionFolder) -> dict[str, Any]:
    """The match's record as JSON, as records were written before they were binary."""
    stored = folder.record("m")
    (length,) = struct.unpack_from(">I", stored, 1)
    facts = json.loads(stored[5 : 5 + length])
    recent = facts.pop("recent")
    first = facts["version"] - len(recent) + 1
    ids = {str(first + i): event_id for i, event_id in enumerate(recent)}
    return {**facts, "state": stored[5 + length :].decode(), "recent_ids": ids}


def test_a_json_record_written_before_records_were_binary_still_reads() -> None:
    folder = folded([*board_batch(), dice_reveal()])
    legacy = legacy_record(folder)
    # the state as a string (updates carry it), and before that as data
    for state in (legacy["state"], json.loads(legacy["state"])):
        match, _, recent = decode_record(json.dumps({**legacy, "state": state}).encode())
        same(match, folder.match("m"))
        assert recent == decode_record(folder.record("m"))[2]
    assert decode_record(json.dumps({"dice_seed": "ab"}).encode()) == (
        None,
        {"dice_seed": "ab"},
        {},
    )


def test_a_binary_record_is_smaller_than_the_json_one() -> None:
    folder = folded(board_batch())
    assert len(folder.record("m")) < len(json.dumps(legacy_record(folder)).encode())


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
    folder = ProjectionFolder()
    published = []
    for envelope in envelopes:
        if folder.fold(envelope) == WHOLE:
            published.append(match_pb2.ViewUpdate.FromString(folder.update("m")))
    return published


def test_a_batch_publishes_its_last_whole_command_as_one_by_one_would() -> None:
    batch = two_commands()
    record, update = ProjectionFolder().fold_batch("m", None, [batch])
    assert update is not None
    assert match_pb2.ViewUpdate.FromString(update) == updates_one_by_one(batch)[-1]
    assert record == record_of(batch)


def test_a_batch_ending_mid_command_publishes_the_command_before() -> None:
    batch = two_commands()[:6]
    record, update = ProjectionFolder().fold_batch("m", None, [batch])
    assert update is not None
    shown = match_pb2.ViewUpdate.FromString(update)
    assert shown == updates_one_by_one(batch)[-1]
    assert shown.summary.version == 4
    match, _, _ = decode_record(record)
    assert match is not None and match.version == 6


def test_a_batch_of_events_already_folded_publishes_and_stores_nothing() -> None:
    batch = two_commands()
    record, _ = ProjectionFolder().fold_batch("m", None, [batch])
    again, update = ProjectionFolder().fold_batch("m", record, [batch])
    assert update is None and again is None


def test_a_seed_revealed_after_the_match_ended_publishes_it() -> None:
    record, _ = ProjectionFolder().fold_batch("m", None, [board_batch()])
    again, update = ProjectionFolder().fold_batch("m", record, [[dice_reveal()]])
    assert again is not None and update is not None
    assert match_pb2.ViewUpdate.FromString(update).provenance.dice_seed == "ab"


def test_folding_without_storing_keeps_the_same_match() -> None:
    """What the rebuild does: fold into the folder's matches, encode nothing."""
    folder = ProjectionFolder()
    for envelope in board_batch():
        folder.fold(envelope)
    stored, _ = ProjectionFolder().fold_batch("m", None, [board_batch()])
    same(folder.matches()["m"], decode_record(stored)[0])


def test_a_batch_of_several_appends_publishes_as_one_by_one_would() -> None:
    # Given a command's record and the first events of the next one's (legacy records of
    # single envelopes can end a batch mid-command)
    batch = two_commands()
    appends = [batch[:4], batch[4:5], batch[5:6]]
    # When the batch is folded
    record, update = ProjectionFolder().fold_batch("m", None, appends)
    # Then the first command is shown and the record holds all six events
    assert update is not None
    assert match_pb2.ViewUpdate.FromString(update) == updates_one_by_one(batch[:6])[-1]
    assert record == record_of(batch[:6])


def test_a_record_reads_as_the_event_log_reads_it() -> None:
    from services.common.eventlog import BATCH_HEADERS, encode_append, envelopes_of
    from services.projector.folder import appended

    batch = board_batch()
    (value,) = encode_append(batch)
    assert list(appended(value, BATCH_HEADERS)) == envelopes_of(value, BATCH_HEADERS)
    assert list(appended(value, dict(BATCH_HEADERS))) == batch
    single = batch[0].SerializeToString()
    assert list(appended(single, None)) == envelopes_of(single, None) == [batch[0]]
