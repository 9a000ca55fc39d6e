"""How an append's envelopes become Kafka record values and back (services.common.eventlog)."""

from __future__ import annotations

import pytest

from services.common.envelope import Cause, make_envelope
from services.common.eventlog import (
    BATCH_HEADERS,
    RecordTooLarge,
    encode_append,
    envelopes_of,
)
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe


def command(events: int, name_bytes: int = 10) -> list[envelope_pb2.EventEnvelope]:
    return [
        make_envelope(
            match_id="m",
            stream="board",
            sequence=i + 1,
            payload=pe.SeatJoined(seat="s", display_name="n" * name_bytes),
            cause=Cause("c", "c", "ann"),
        )
        for i in range(events)
    ]


def read_back(values: list[bytes]) -> list[envelope_pb2.EventEnvelope]:
    return [e for value in values for e in envelopes_of(value, BATCH_HEADERS)]


def test_a_command_is_one_record_that_reads_back_in_order() -> None:
    envelopes = command(5)
    values = encode_append(envelopes)
    assert len(values) == 1
    assert read_back(values) == envelopes


def test_a_command_past_the_record_limit_takes_a_few_records_each_within_it() -> None:
    envelopes = command(12, name_bytes=300)
    limit = 1_500
    values = encode_append(envelopes, limit)
    assert len(values) > 1
    assert all(len(value) <= limit for value in values)
    assert read_back(values) == envelopes


def test_an_event_larger_than_a_record_is_refused() -> None:
    with pytest.raises(RecordTooLarge, match="exceeds"):
        encode_append(command(3, name_bytes=2_000), 1_500)


def test_a_record_without_the_header_is_one_envelope() -> None:
    (envelope,) = command(1)
    assert envelopes_of(envelope.SerializeToString(), None) == [envelope]
    assert envelopes_of(envelope.SerializeToString(), [("other", b"x")]) == [envelope]
