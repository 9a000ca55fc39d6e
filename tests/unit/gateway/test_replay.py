"""ReplayMatchBatches sends ReplayMatch's steps, byte for byte, in bounded batches; both
equal steps drawn the plain way (a fresh view per step); bad bounds are refused at the edge."""

from __future__ import annotations

import copy
import dataclasses
import itertools
from collections.abc import Sequence

import grpc
import pytest
from google.protobuf import wrappers_pb2

from services.adapters.folding import created, fold
from services.adapters.views import view
from services.gateway import replay
from services.gateway.replay import batch_bounds, replay_steps, step_batches
from tabletop.v1 import envelope_pb2, gateway_pb2
from tests.unit.adapters.test_step_views import GAMES, board_events, players
from tests.unit.fakes import Aborted, context
from tests.unit.gateway.test_scoring_and_gateway import gateway


def plain_steps(
    events: Sequence[envelope_pb2.EventEnvelope], viewer: str, payloads: bool
) -> list[gateway_pb2.ReplayStep]:
    """What ReplayMatch sent before views were kept from step to step, each view drawn from
    a copy of the state (which shares nothing an engine's view finds by identity)."""
    match = created(events[0])
    steps = []
    for number, envelope in enumerate(events, start=1):
        if number > 1:
            fold(match, envelope)
        step = gateway_pb2.ReplayStep(
            step=number,
            event=envelope,
            view=view(dataclasses.replace(match, state=copy.deepcopy(match.state)), viewer),
            description=f"{envelope.actor}: {envelope.event_type.rsplit('.', 1)[-1]}",
        )
        if not payloads:
            step.event.ClearField("payload")
        steps.append(step)
    return steps


def wire(steps: Sequence[gateway_pb2.ReplayStep]) -> list[bytes]:
    return [s.SerializeToString(deterministic=True) for s in steps]


def sent_steps(
    events: Sequence[envelope_pb2.EventEnvelope], viewer: str, payloads: bool
) -> list[gateway_pb2.ReplayStep]:
    """ReplayMatch's messages as gRPC writes them (its serializer) and a client reads them."""
    serialize = gateway_pb2.ReplayStep.SerializeToString
    return [
        gateway_pb2.ReplayStep.FromString(serialize(m))
        for m in replay_steps(events, viewer, payloads)
    ]


def sent_batches(
    events: Sequence[envelope_pb2.EventEnvelope],
    viewer: str,
    payloads: bool,
    max_steps: int,
    max_bytes: int,
) -> list[gateway_pb2.ReplayStepBatch]:
    """ReplayMatchBatches' messages as gRPC writes them and a client reads them."""
    serialize = gateway_pb2.ReplayStepBatch.SerializeToString
    return [
        gateway_pb2.ReplayStepBatch.FromString(serialize(m))
        for m in step_batches(events, viewer, payloads, max_steps, max_bytes)
    ]


@pytest.mark.parametrize("game", GAMES)
def test_batched_steps_are_replay_match_steps_for_every_game(game: str) -> None:
    events = board_events(game, seed=4)
    for viewer, payloads in (("", True), (players(game)[0], True), ("", False)):
        expected = plain_steps(events, viewer, payloads)
        one_by_one = sent_steps(events, viewer, payloads)
        assert one_by_one == expected, (viewer, payloads)
        assert wire(one_by_one) == wire(expected)
        for max_steps, max_bytes in ((64, 1 << 20), (1, 1 << 20), (7, 1 << 20), (1024, 2000)):
            batches = sent_batches(events, viewer, payloads, max_steps, max_bytes)
            batched = [s for b in batches for s in b.steps]
            assert wire(batched) == wire(expected), (viewer, payloads, max_steps, max_bytes)
            for batch in batches:
                assert 1 <= len(batch.steps) <= max_steps
                assert len(batch.steps) == 1 or batch.ByteSize() <= max_bytes


def test_the_bytes_written_are_the_bytes_a_step_message_serializes_to() -> None:
    """gRPC serializes what the replay yields with the RPC's message type: the bytes are
    written out as they are, and equal a plain step's own serialization."""
    events = board_events("crashland", seed=2)
    for sent, plain in zip(
        replay_steps(events, "", True), plain_steps(events, "", True), strict=True
    ):
        raw = sent.SerializeToString()
        assert gateway_pb2.ReplayStep.SerializeToString(sent) == raw
        assert gateway_pb2.ReplayStepBatch.SerializeToString(sent) == raw
        assert raw == plain.SerializeToString()
    batch = next(step_batches(events, "", True, 64, 1 << 20))
    steps = gateway_pb2.ReplayStepBatch(steps=plain_steps(events, "", True)[:64])
    assert gateway_pb2.ReplayStepBatch.SerializeToString(batch) == steps.SerializeToString()
    assert replay.wire(b"").SerializeToString() == b""


def test_lengths_are_written_as_protobuf_writes_varints() -> None:
    """Each width's bounds (one byte, the two-byte shortcut, the loop past it), against
    protobuf's own writing of a varint field (its key, then the value)."""
    bounds = (1, 0x7F, 0x80, 0x3FFF, 0x4000, 0x1FFFFF, 0x200000, 3 * 1024 * 1024, 1 << 40)
    for value in [*bounds, *range(1, 0x4100, 7)]:
        written = wrappers_pb2.UInt64Value(value=value).SerializeToString()
        assert b"\x08" + replay._varint(value) == written, value
    assert replay._varint(0) == b"\x00"  # (proto3 writes no field for 0)


def test_batches_are_cut_by_steps_and_by_bytes() -> None:
    events = board_events("crashland", seed=1)
    by_steps = sent_batches(events, "", True, 10, 1 << 20)
    assert [len(b.steps) for b in by_steps[:-1]] == [10] * (len(by_steps) - 1)
    assert sum(len(b.steps) for b in by_steps) == len(events)
    bound = 3 * max(s.ByteSize() for s in sent_steps(events, "", True))
    by_bytes = sent_batches(events, "", True, 1024, bound)
    assert len(by_bytes) > 2 and sum(len(b.steps) for b in by_bytes) == len(events)
    for batch, after in itertools.pairwise(by_bytes):
        assert batch.ByteSize() <= bound
        fuller = gateway_pb2.ReplayStepBatch(steps=[*batch.steps, after.steps[0]])
        assert fuller.ByteSize() > bound  # cut only where the next step would not fit
    tiny = sent_batches(events, "", True, 1024, 10)  # every step alone, none dropped
    assert [len(b.steps) for b in tiny] == [1] * len(events)


def test_bounds_default_and_limits() -> None:
    request = gateway_pb2.ReplayMatchBatchesRequest
    assert batch_bounds(request()) == (replay.DEFAULT_BATCH_STEPS, replay.DEFAULT_BATCH_BYTES)
    most = request(max_steps=replay.MAX_BATCH_STEPS, max_bytes=replay.MAX_BATCH_BYTES)
    assert batch_bounds(most) == (replay.MAX_BATCH_STEPS, replay.MAX_BATCH_BYTES)
    for bad in (
        request(max_steps=replay.MAX_BATCH_STEPS + 1),
        request(max_bytes=replay.MAX_BATCH_BYTES + 1),
    ):
        with pytest.raises(ValueError):
            batch_bounds(bad)


@pytest.mark.parametrize(
    ("max_steps", "max_bytes"), [(replay.MAX_BATCH_STEPS + 1, 0), (0, 2**32 - 1)]
)
async def test_the_gateway_refuses_bounds_past_their_limits(max_steps: int, max_bytes: int) -> None:
    service = await gateway()
    request = gateway_pb2.ReplayMatchBatchesRequest(
        match_id="m-1", max_steps=max_steps, max_bytes=max_bytes
    )
    with pytest.raises(Aborted) as aborted:
        async for _ in service.ReplayMatchBatches(request, context()):
            pass
    assert aborted.value.code == grpc.StatusCode.INVALID_ARGUMENT
    assert "at most" in aborted.value.details and "<class" not in aborted.value.details
