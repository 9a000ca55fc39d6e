"""The projector holds a match decoded beside its table record only while it is folded:
past ``idle_s`` without a fold, or past ``max_held`` matches, it is evicted and decoded
from its record at its next fold, which then stores and publishes exactly what a folder
that never evicted it would (a fake clock)."""

from __future__ import annotations

from services.projector.folder import ProjectionFolder
from tabletop.v1 import envelope_pb2
from tests.unit.projector.test_projector_fold import dice_reveal, two_commands

IDLE_S = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def renamed(
    envelopes: list[envelope_pb2.EventEnvelope], match_id: str
) -> list[envelope_pb2.EventEnvelope]:
    copies = []
    for envelope in envelopes:
        copy = envelope_pb2.EventEnvelope()
        copy.CopyFrom(envelope)
        copy.match_id = match_id
        copies.append(copy)
    return copies


def halves() -> tuple[list[envelope_pb2.EventEnvelope], list[envelope_pb2.EventEnvelope]]:
    batch = two_commands()
    return batch[:4], [*batch[4:], dice_reveal()]


def never_evicting(
    first: list[envelope_pb2.EventEnvelope], second: list[envelope_pb2.EventEnvelope]
) -> tuple[bytes | None, bytes | None]:
    """The second half's record and update from a folder that held the match throughout."""
    folder = ProjectionFolder()
    stored, _ = folder.fold_batch("m", None, [first])
    return folder.fold_batch("m", stored, [second])


def test_a_match_not_folded_for_its_idle_time_is_evicted_and_folds_on_from_its_record() -> None:
    clock = Clock()
    folder = ProjectionFolder(idle_s=IDLE_S, clock=clock)
    first, second = halves()
    stored, _ = folder.fold_batch("m", None, [first])
    clock.now += IDLE_S - 1
    stored_n, _ = folder.fold_batch("n", None, [renamed(first, "n")])
    assert set(folder.matches()) == {"m", "n"}
    clock.now += 2
    folder.fold_batch("n", stored_n, [renamed(second, "n")])  # folding n evicts m
    assert set(folder.matches()) == {"n"} and folder.held() == 1
    assert folder.fold_batch("m", stored, [second]) == never_evicting(first, second)
    assert set(folder.matches()) == {"m", "n"}


def test_past_the_bound_the_least_recently_folded_match_is_evicted() -> None:
    folder = ProjectionFolder(max_held=1)
    first, second = halves()
    stored, _ = folder.fold_batch("m", None, [first])
    folder.fold_batch("n", None, [renamed(first, "n")])
    assert set(folder.matches()) == {"n"}
    assert folder.fold_batch("m", stored, [second]) == never_evicting(first, second)
    assert set(folder.matches()) == {"m"}


def test_an_unbounded_folder_keeps_every_match_as_a_rebuild_needs() -> None:
    folder = ProjectionFolder()
    first, _ = halves()
    for match_id in ("a", "b", "c"):
        folder.fold_batch(match_id, None, [renamed(first, match_id)])
    assert set(folder.matches()) == {"a", "b", "c"}
