"""A match's replay: its board events folded afresh, the view after each (ReplayMatch one
step a message, ReplayMatchBatches many; the views made by ``views.StepViews``), and the
bounds of a batch.

gRPC costs ~170 µs per message of a stream, more than a step's fold and view; batches pay it
once for many steps. Both RPCs send the same steps (tests/unit/gateway/test_replay.py).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

from services.adapters.folding import created, fold
from services.adapters.views import StepViews
from tabletop.v1 import envelope_pb2, gateway_pb2, match_pb2, talk_pb2

#: the talk shown with each step, by the step's event sequence (services/gateway/talk.py)
TalkBySteps = Mapping[int, Sequence[talk_pb2.TalkMessage]]

#: steps per ReplayStepBatch: unset (0) → the default, more → INVALID_ARGUMENT. A batch is
#: drawn without yielding the event loop (~0.1 ms a step): 64 keep other calls' waits short
#: and gRPC's per-message cost at ~3 µs a step
DEFAULT_BATCH_STEPS = 64
MAX_BATCH_STEPS = 1024
#: bytes of steps per ReplayStepBatch (one larger step goes alone): under gRPC's usual
#: 4 MiB receive limit with room for the framing
DEFAULT_BATCH_BYTES = 1024 * 1024
MAX_BATCH_BYTES = 3 * 1024 * 1024


def batch_bounds(request: gateway_pb2.ReplayMatchBatchesRequest) -> tuple[int, int]:
    """(steps, bytes) per batch; ValueError (its text for the client) past a limit."""
    if request.max_steps > MAX_BATCH_STEPS:
        raise ValueError(f"max_steps must be at most {MAX_BATCH_STEPS} (0: {DEFAULT_BATCH_STEPS})")
    if request.max_bytes > MAX_BATCH_BYTES:
        raise ValueError(f"max_bytes must be at most {MAX_BATCH_BYTES} (0: {DEFAULT_BATCH_BYTES})")
    return (
        request.max_steps or DEFAULT_BATCH_STEPS,
        request.max_bytes or DEFAULT_BATCH_BYTES,
    )


def describe(envelope: envelope_pb2.EventEnvelope) -> str:
    """A step's one-line caption: who did what ("ann: Moved")."""
    return f"{envelope.actor}: {envelope.event_type.rsplit('.', 1)[-1]}"


def views(
    events: Sequence[envelope_pb2.EventEnvelope], viewer: str
) -> Iterator[tuple[envelope_pb2.EventEnvelope, match_pb2.MatchView]]:
    """Each event (MatchCreated first) and the view after it. The view is one message
    refilled from step to step: copy it before the next one is drawn."""
    match = created(events[0])
    shown = StepViews(match, viewer)
    for index, envelope in enumerate(events):
        if index:
            fold(match, envelope)
        yield envelope, shown.view()


# -- the wire -----------------------------------------------------------------------------
# A step is written as bytes, field by field, as ReplayStep serializes (its fields in number
# order): building each step as a message copied the whole view into it (~13 µs for a
# Crashland view) and serialized it twice (its size, then gRPC), against one serialization
# of the kept view here. The bytes reach gRPC in a message that holds them as unknown
# fields (kept verbatim): its serializer, ReplayStep's or ReplayStepBatch's
# ``SerializeToString``, writes them out unchanged (tests/unit/gateway/test_replay.py
# checks it, and that the bytes parse to the steps drawn the plain way).


def _raw_class() -> Any:
    """A message type without fields, in a pool of its own: whatever it parses is unknown
    to it and serialized again byte for byte."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="tabletop/replay_wire.proto", package="tabletop.replay_wire", syntax="proto3"
    )
    proto.message_type.add(name="Raw")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("tabletop.replay_wire.Raw"))


_RAW = _raw_class()


def wire(raw: bytes) -> Any:
    """A message that serializes, by any message type's ``SerializeToString``, to ``raw``
    (the bytes of a whole message: a ReplayStep, a ReplayStepBatch)."""
    return _RAW.FromString(raw)


def _varint(value: int) -> bytes:
    if value < 0x80:
        return _SMALL[value]
    if value < 0x4000:  # most lengths here (events, views, steps): two bytes, no loop
        return bytes((value & 0x7F | 0x80, value >> 7))
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


_SMALL = [bytes((i,)) for i in range(0x80)]

#: the keys of ReplayStep's fields (number << 3 | wire type): step (varint), event, view,
#: description and talk (length-delimited); and of ReplayStepBatch.steps
_STEP, _EVENT, _VIEW, _DESCRIPTION, _TALK, _STEPS = (
    b"\x08",
    b"\x12",
    b"\x1a",
    b"\x22",
    b"\x2a",
    b"\x0a",
)


class _Steps:
    """Each step's bytes as ``ReplayStep(step, event, view, description)`` serializes."""

    def __init__(self, payloads: bool, talk: TalkBySteps | None = None) -> None:
        self._payloads = payloads
        self._talk = talk or {}
        self._descriptions: dict[tuple[str, str], bytes] = {}
        self._hidden = envelope_pb2.EventEnvelope()

    def step(
        self, number: int, envelope: envelope_pb2.EventEnvelope, view: match_pb2.MatchView
    ) -> bytes:
        if self._payloads:
            event = envelope.SerializeToString()
        else:  # hidden information stays hidden while the match is in play
            hidden = self._hidden
            hidden.CopyFrom(envelope)
            hidden.ClearField("payload")
            event = hidden.SerializeToString()
        shown = view.SerializeToString()
        key = (envelope.actor, envelope.event_type)
        description = self._descriptions.get(key)
        if description is None:
            text = describe(envelope).encode()
            description = _DESCRIPTION + _varint(len(text)) + text if text else b""
            self._descriptions[key] = description
        talk = b"".join(
            _TALK + _varint(len(said)) + said
            for said in (m.SerializeToString() for m in self._talk.get(envelope.sequence, ()))
        )
        return b"".join(
            (
                _STEP,
                _varint(number),
                _EVENT,
                _varint(len(event)),
                event,
                _VIEW,
                _varint(len(shown)),
                shown,
                description,
                talk,
            )
        )


def replay_steps(
    events: Sequence[envelope_pb2.EventEnvelope],
    viewer: str,
    payloads: bool,
    talk: TalkBySteps | None = None,
) -> Iterator[Any]:
    """ReplayMatch's messages (as ``wire`` messages): one ReplayStep each, numbered from 1."""
    steps = _Steps(payloads, talk)
    for number, (envelope, view) in enumerate(views(events, viewer), start=1):
        yield wire(steps.step(number, envelope, view))


def step_batches(
    events: Sequence[envelope_pb2.EventEnvelope],
    viewer: str,
    payloads: bool,
    max_steps: int,
    max_bytes: int,
    talk: TalkBySteps | None = None,
) -> Iterator[Any]:
    """ReplayMatchBatches' messages (as ``wire`` messages): ``replay_steps``' steps, in
    order, at most ``max_steps`` to a ReplayStepBatch and, but for a step larger than that
    alone, at most ``max_bytes`` of steps."""
    steps = _Steps(payloads, talk)
    batch: list[bytes] = []
    size = 0
    for number, (envelope, view) in enumerate(views(events, viewer), start=1):
        step = steps.step(number, envelope, view)
        framed = _STEPS + _varint(len(step)) + step  # as it stands in the batch
        if size + len(framed) > max_bytes and batch:
            yield wire(b"".join(batch))
            batch, size = [], 0
        batch.append(framed)
        size += len(framed)
        if len(batch) >= max_steps:
            yield wire(b"".join(batch))
            batch, size = [], 0
    if batch:
        yield wire(b"".join(batch))
