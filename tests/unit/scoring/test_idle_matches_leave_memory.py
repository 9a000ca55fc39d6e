"""Scoring holds a match in play decoded only while its events come: one without an
event for ``idle_held_s`` (a fake clock), or the least recently folded past
``matches_held``, is kept as its compressed board events and folded again at its next
event. It is scored exactly as a match never let go of, after a restart from a snapshot
taken while it was let go of too."""

from __future__ import annotations

from services.common.holding import Holding
from services.common.snapshots import Snapshot, pack
from services.scoring.service import ScoringService
from tabletop.v1 import scoring_pb2
from tests.unit.fakes import MemoryEventLog, context, memory_writer
from tests.unit.gateway.test_scoring_and_gateway import board_envelopes, fetched, scored_events

IDLE_S = 60.0


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scoring(clock: Clock, matches_held: int = 0) -> ScoringService:
    return ScoringService(memory_writer("scoring")[0], Holding(IDLE_S, matches_held, clock))


def restarted(service: ScoringService, clock: Clock) -> ScoringService:
    snapshot = Snapshot("s", 0, pack(service.snapshot()))
    again = scoring(clock)
    again._writer = service._writer  # the same scoring.events
    again.restore(snapshot)
    return again


async def scored(evicting: bool) -> tuple[list[bytes], scoring_pb2.GetStandingsReply]:
    """Two crashland matches, their events interleaved one fetch each; evicting, every
    match is let go of before each fetch; a restart halfway."""
    clock = Clock()
    service = scoring(clock)
    matches = [board_envelopes(seed, f"m-{seed}")[1] for seed in (3, 4)]
    records = [
        record
        for pair in zip(*(fetched(envelopes) for envelopes in matches), strict=False)
        for record in pair
    ]
    records += [
        r for envelopes in matches for r in fetched(envelopes)[len(min(matches, key=len)) :]
    ]
    for i, record in enumerate(records):
        clock.now += IDLE_S + 1
        if evicting:
            held = len(service._playing)
            assert service.evict_idle() == held
            assert not service._playing and not service._followed
        if i == len(records) // 2:
            service = restarted(service, clock)
        await service.on_board_records([record])
        await service.on_board_records([record])  # redelivered: folded once
    event_log = service._writer._event_log
    assert isinstance(event_log, MemoryEventLog)
    results = [e.SerializeToString(deterministic=True) for e in scored_events(event_log.envelopes)]
    request = scoring_pb2.GetStandingsRequest(game="crashland")
    return results, await service.GetStandings(request, context())


async def test_a_match_let_go_of_is_scored_as_one_never_let_go_of() -> None:
    kept, kept_standings = await scored(evicting=False)
    evicted, evicted_standings = await scored(evicting=True)
    assert len(kept) == 2 and evicted == kept
    assert evicted_standings == kept_standings and kept_standings.matches == 2


async def test_past_matches_held_the_least_recently_folded_go_first() -> None:
    clock = Clock()
    service = scoring(clock, matches_held=1)
    first, second = (board_envelopes(seed, f"m-{seed}")[1] for seed in (3, 4))
    await service.on_board_records(fetched(first[:3]))
    clock.now += 1
    await service.on_board_records(fetched(second[:3]))
    assert service.evict_idle() == 1
    assert list(service._playing) == ["m-4"] and list(service._let_go) == ["m-3"]
    # its next event folds it again, and the other one goes at the next look
    await service.on_board_records([fetched(first)[3]])
    assert service.evict_idle() == 1 and list(service._playing) == ["m-3"]
