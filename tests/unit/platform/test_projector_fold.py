"""The projector's fold: views at command boundaries, seeds in any order, no double folds,
records that read back (binary, and the JSON records written before)."""

from __future__ import annotations

import json

import pytest

from services.adapters.game_adapter import messages_for
from services.adapters.projection import Projection
from services.common.envelope import Cause, make_envelope
from services.common.metrics import LOG_DUPLICATES
from services.games.chance import SeededChance
from services.games.contract import AwaitingChance
from services.games.registry import get_game
from services.projector.folder import (
    CHANGED,
    MAX_VIEW_BYTES,
    UNCHANGED,
    WHOLE,
    MatchFold,
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


def folded(envelopes: list[envelope_pb2.EventEnvelope]) -> MatchFold:
    """A match folded event by event, as the careful path does."""
    folder = ProjectionFolder()
    fold = folder.match("m")
    for envelope in envelopes:
        folder.fold(fold, envelope)
    return fold


def test_a_view_is_published_only_when_the_command_is_whole() -> None:
    folder = ProjectionFolder()
    fold = folder.match("m")
    done = [folder.fold(fold, envelope) for envelope in board_batch()]
    assert done[-1] == WHOLE and set(done[:-1]) == {CHANGED}
    assert fold.projection is not None and fold.projection.match.version == len(done)


def test_an_event_folded_twice_changes_nothing() -> None:
    batch = board_batch()
    fold = folded(batch)
    record = encode_record(fold)
    assert ProjectionFolder().fold(fold, batch[-1]) == UNCHANGED
    assert encode_record(fold) == record


def test_a_seed_revealed_before_the_match_is_read_is_kept() -> None:
    fold = folded([dice_reveal(), *board_batch()])
    assert fold.projection is not None
    assert fold.projection.view_for("p").provenance.dice_seed == "ab"


def test_a_seed_revealed_before_the_match_is_read_is_stored_until_it_is() -> None:
    # Given only the reveal folded (a rebuild reads dice.events before board.events)
    pending = folded([dice_reveal()])
    # When its record is read back and the board events are folded into it
    fold = decode_record(encode_record(pending))
    folder = ProjectionFolder()
    for envelope in board_batch():
        folder.fold(fold, envelope)
    # Then the match shows the seed
    assert fold.projection is not None and fold.projection.dice_seed == "ab"


def test_folding_from_the_stored_record_every_time_gives_the_same_record() -> None:
    # Given one folder that keeps the match and one that reads the record before each event
    batch = board_batch()
    kept = ProjectionFolder()
    stored: bytes | None = None
    for envelope in batch:
        fresh = ProjectionFolder()  # as after a restart or a rebalance
        fold = fresh.match("m", stored)
        fresh.fold(fold, envelope)
        stored = encode_record(fold)
        kept.fold(kept.match("m"), envelope)
    # Then both hold the same record
    assert stored == encode_record(kept.match("m"))


def test_a_match_is_read_again_when_the_table_holds_another_record() -> None:
    # Given a folder that folded a match and stored its record
    folder = ProjectionFolder()
    mine, _ = folder.fold_batch("m", None, [board_batch()])
    assert mine is not None
    assert folder.match("m", mine) is folder.match("m", mine)  # what it wrote: kept
    # When the table holds another record of the match (another worker folded it)
    other = encode_record(folded([*board_batch(), dice_reveal("cd")]))
    # Then the folder folds from that record
    fold = folder.match("m", other)
    assert fold.projection is not None and fold.projection.dice_seed == "cd"


def test_a_match_created_read_again_after_a_restart_keeps_the_revealed_seeds() -> None:
    batch = board_batch()
    stored = encode_record(folded([*batch, dice_reveal()]))
    folder = ProjectionFolder()  # restarted
    fold = folder.match("m", stored)
    for envelope in batch:  # the board partition re-read from an older committed offset
        assert folder.fold(fold, envelope) == UNCHANGED
    assert fold.projection is not None
    assert fold.projection.dice_seed == "ab"
    assert fold.projection.match.version == len(batch)


def test_a_second_event_id_at_a_folded_sequence_is_counted_as_a_duplicate() -> None:
    batch = board_batch()
    fold = decode_record(encode_record(folded(batch)))  # the ids survive the record
    twin = envelope_pb2.EventEnvelope()
    twin.CopyFrom(batch[-1])
    twin.event_id = "another-id"
    before = LOG_DUPLICATES.labels("board")._value.get()
    assert ProjectionFolder().fold(fold, batch[-1]) == UNCHANGED  # the same event re-read
    assert LOG_DUPLICATES.labels("board")._value.get() == before
    assert ProjectionFolder().fold(fold, twin) == UNCHANGED
    assert LOG_DUPLICATES.labels("board")._value.get() == before + 1


def test_a_record_or_view_over_the_message_limit_is_refused_before_it_is_written() -> None:
    check_sizes(b"r" * 100, b"v" * 100)
    with pytest.raises(TooLarge):
        check_sizes(None, b"v" * (MAX_VIEW_BYTES + 1))
    with pytest.raises(TooLarge):
        check_sizes(b"r" * (MAX_VIEW_BYTES + 1), None)


def test_a_stored_record_reads_back_as_it_was_folded() -> None:
    fold = folded([*board_batch(), dice_reveal()])
    again = decode_record(encode_record(fold))
    assert again.projection is not None and fold.projection is not None
    assert again.projection.to_record() == fold.projection.to_record()
    assert again.recent == fold.recent
    assert again.projection.view_for("p") == fold.projection.view_for("p")
    assert decode_record(None) == MatchFold()


def test_a_json_record_written_before_records_were_binary_still_reads() -> None:
    fold = folded([*board_batch(), dice_reveal()])
    assert fold.projection is not None
    ids = {str(sequence): event_id for sequence, event_id in fold.recent.items()}
    legacy = {**fold.projection.to_record(), "recent_ids": ids}
    # the state as a string (updates carry it), and before that as data
    for state in (legacy["state"], json.loads(legacy["state"])):
        again = decode_record(json.dumps({**legacy, "state": state}).encode())
        assert again.projection is not None
        assert again.projection.to_record() == fold.projection.to_record()
        assert again.recent == fold.recent
    pending = decode_record(json.dumps({"dice_seed": "ab"}).encode())
    assert pending.projection is None and pending.seeds == {"dice_seed": "ab"}


def test_a_binary_record_is_smaller_than_the_json_one() -> None:
    fold = folded(board_batch())
    assert fold.projection is not None
    ids = {str(sequence): event_id for sequence, event_id in fold.recent.items()}
    legacy = json.dumps({**fold.projection.to_record(), "recent_ids": ids}).encode()
    assert len(encode_record(fold)) < len(legacy)


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
    fold = folder.match("m")
    published = []
    for envelope in envelopes:
        if folder.fold(fold, envelope) == WHOLE:
            assert fold.projection is not None
            published.append(fold.projection.update())
    return published


def test_a_batch_publishes_its_last_whole_command_as_one_by_one_would() -> None:
    batch = two_commands()
    record, update = ProjectionFolder().fold_batch("m", None, [batch])
    assert update is not None
    assert match_pb2.ViewUpdate.FromString(update) == updates_one_by_one(batch)[-1]
    assert record == encode_record(folded(batch))


def test_a_batch_ending_mid_command_publishes_the_command_before() -> None:
    batch = two_commands()[:6]
    record, update = ProjectionFolder().fold_batch("m", None, [batch])
    assert update is not None
    shown = match_pb2.ViewUpdate.FromString(update)
    assert shown == updates_one_by_one(batch)[-1]
    assert shown.summary.version == 4
    fold = decode_record(record)
    assert fold.projection is not None and fold.projection.match.version == 6


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


def test_folding_without_storing_keeps_the_same_projection() -> None:
    """What the rebuild does: fold into the folder's matches, encode nothing."""
    folder = ProjectionFolder()
    for envelope in board_batch():
        folder.fold(folder.match(envelope.match_id), envelope)
    stored, _ = ProjectionFolder().fold_batch("m", None, [board_batch()])
    again = decode_record(stored)
    assert again.projection is not None
    assert folder.projections()["m"].to_record() == again.projection.to_record()
    assert isinstance(folder.projection("m"), Projection)


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
    assert record == encode_record(folded(batch[:6]))


def test_a_record_reads_as_the_event_log_reads_it() -> None:
    from services.common.eventlog import BATCH_HEADERS, encode_append, envelopes_of
    from services.projector.folder import appended

    batch = board_batch()
    (value,) = encode_append(batch)
    assert list(appended(value, BATCH_HEADERS)) == envelopes_of(value, BATCH_HEADERS)
    assert list(appended(value, dict(BATCH_HEADERS))) == batch
    single = batch[0].SerializeToString()
    assert list(appended(single, None)) == envelopes_of(single, None) == [batch[0]]
