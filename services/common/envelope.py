"""Building and reading event envelopes (docs/DESIGN.md §2)."""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from google.protobuf import any_pb2, message
from google.protobuf.timestamp_pb2 import Timestamp

from tabletop.v1 import envelope_pb2


@dataclass(frozen=True)
class Cause:
    """Why events are being appended: the command (or event) and the client command."""

    causation_id: str
    correlation_id: str
    actor: str


def pack(payload: message.Message | any_pb2.Any) -> any_pb2.Any:
    if isinstance(payload, any_pb2.Any):
        return payload
    packed = any_pb2.Any()
    packed.Pack(payload)
    return packed


def make_envelope(
    *,
    match_id: str,
    stream: str,
    sequence: int,
    payload: message.Message | any_pb2.Any,
    cause: Cause,
    game: str = "",
    rules_version: str = "",
) -> envelope_pb2.EventEnvelope:
    packed = pack(payload)
    # Timestamp.GetCurrentTime goes through datetime in Python: five times the cost
    ns = time.time_ns()
    now = Timestamp(seconds=ns // 1_000_000_000, nanos=ns % 1_000_000_000)
    return envelope_pb2.EventEnvelope(
        event_id=str(uuid.uuid4()),
        match_id=match_id,
        stream=stream,
        sequence=sequence,
        event_type=packed.TypeName(),
        occurred_at=now,
        causation_id=cause.causation_id,
        correlation_id=cause.correlation_id,
        actor=cause.actor,
        rules_version=rules_version,
        game=game,
        payload=packed,
    )


def unpack(envelope: envelope_pb2.EventEnvelope, cls: type[message.Message]) -> message.Message:
    msg = cls()
    if not envelope.payload.Unpack(msg):
        raise TypeError(f"{envelope.event_type} is not {cls.DESCRIPTOR.full_name}")
    return msg


def is_a(envelope: envelope_pb2.EventEnvelope, cls: type[message.Message]) -> bool:
    return bool(envelope.payload.Is(cls.DESCRIPTOR))  # type: ignore[arg-type]
