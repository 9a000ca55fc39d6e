"""Scoring's result folding and the gateway's view selection, without Kafka or a network."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence

import grpc
import pytest

from services.adapters import views
from services.adapters.folding import created as created_match
from services.adapters.game_adapter import messages_for
from services.common.config import Config
from services.common.envelope import Cause, is_a, make_envelope, unpack
from services.common.eventlog import LogRecord
from services.games.playout import Playout, play, random_policy
from services.games.registry import get_game
from services.gateway.auth import Role, Tokens
from services.gateway.service import GatewayService
from services.gateway.viewstore import ViewStore
from services.scoring.service import ScoringService
from tabletop.v1 import (
    envelope_pb2,
    gateway_pb2,
    match_pb2,
    platform_events_pb2,
    scoring_pb2,
)
from tests.unit.fakes import Aborted, Served, context, memory_writer

# -- scoring --------------------------------------------------------------------------


def board_envelopes(seed: int, match_id: str) -> tuple[Playout, list[envelope_pb2.EventEnvelope]]:
    """A seeded crashland playout as the board would have logged it."""
    game = get_game("crashland")
    playout = play(game, ["ann"], {}, {"ann": random_policy(seed)}, seed, match_id)
    outcome = playout.outcome
    payloads = [
        platform_events_pb2.MatchCreated(game="crashland", players=["ann"]),
        *(messages_for("crashland").event_to_any(e) for e in playout.events),
        platform_events_pb2.MatchEnded(
            results=outcome.results, reason=outcome.reason, scores=outcome.scores
        ),
    ]
    cause = Cause("c", "c", "board")
    return playout, [
        make_envelope(match_id=match_id, stream="board", sequence=i + 1, payload=p, cause=cause)
        for i, p in enumerate(payloads)
    ]


def scored_events(
    event_log: list[envelope_pb2.EventEnvelope],
) -> list[platform_events_pb2.MatchScored]:
    scored = []
    for envelope in event_log:
        assert is_a(envelope, platform_events_pb2.MatchScored)
        event = unpack(envelope, platform_events_pb2.MatchScored)
        assert isinstance(event, platform_events_pb2.MatchScored)
        scored.append(event)
    return scored


def fetched(envelopes: list[envelope_pb2.EventEnvelope]) -> list[LogRecord]:
    """``envelopes`` as one fetch of board.events (one partition, offsets from 0)."""
    return [LogRecord(0, offset, envelope) for offset, envelope in enumerate(envelopes)]


async def test_scoring_records_a_finished_match_once_with_its_statistics() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    playout, envelopes = board_envelopes(3, "m-1")
    await scoring.on_board_records(fetched(envelopes))
    await scoring.on_board_records(fetched(envelopes))  # redelivered after a rebalance
    [scored] = scored_events(event_log.envelopes)
    assert scored.game == "crashland"
    assert dict(scored.results) == playout.outcome.results
    assert scored.reason == playout.outcome.reason
    assert scored.board_events == len(envelopes)
    assert dict(scored.statistics) == get_game("crashland").statistics(playout.state)


async def test_an_unfinished_match_is_not_scored() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    _, envelopes = board_envelopes(3, "m-1")
    await scoring.on_board_records(fetched(envelopes[:-1]))
    assert event_log.envelopes == []
    assert scoring.position == {0: len(envelopes) - 1}


async def test_a_lobby_its_board_closed_is_not_scored() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    cause = Cause("c", "c", "board")
    payloads = [
        platform_events_pb2.MatchCreated(game="drillit", players=["ann", "bob"]),
        platform_events_pb2.SeatJoined(seat="ann", display_name="Ann", join_id="j", by="free"),
        platform_events_pb2.MatchEnded(reason="never started", expired=True),
    ]
    envelopes = [
        make_envelope(match_id="m-1", stream="board", sequence=i + 1, payload=p, cause=cause)
        for i, p in enumerate(payloads)
    ]
    await scoring.on_board_records(fetched(envelopes))
    assert event_log.envelopes == []  # nobody played: no result for anyone
    assert scoring.position == {0: len(envelopes)}


async def test_the_matches_one_fetch_ends_are_scored_together() -> None:
    """Their results are appended at once, so the log commits them in one transaction
    (scored one after another, each paid a transaction of its own)."""
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    appending, most = 0, 0
    plain_append = event_log.append

    async def append(envelopes: Sequence[envelope_pb2.EventEnvelope]) -> dict[int, int]:
        nonlocal appending, most
        appending += 1
        most = max(most, appending)
        await asyncio.sleep(0)  # as a transaction is waited for
        appending -= 1
        return await plain_append(envelopes)

    event_log.append = append  # type: ignore[method-assign]
    ends = [board_envelopes(seed, f"m-{seed}")[1] for seed in range(3)]
    await scoring.on_board_records(fetched([e for envelopes in ends for e in envelopes]))
    assert most == 3
    assert sorted(e.match_id for e in event_log.envelopes) == ["m-0", "m-1", "m-2"]


async def test_a_match_that_cannot_be_folded_does_not_stop_the_others() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    _, envelopes = board_envelopes(3, "m-1")
    unknown = make_envelope(
        match_id="m-0",
        stream="board",
        sequence=1,
        payload=platform_events_pb2.MatchCreated(game="no-such-game", players=["ann"]),
        cause=Cause("c", "c", "board"),
    )
    await scoring.on_board_records(fetched([unknown, *envelopes]))
    assert [e.match_id for e in event_log.envelopes] == ["m-1"]
    assert scoring.position == {0: len(envelopes) + 1}


async def test_standings_fold_every_scored_match_and_survive_recovery() -> None:
    writer, event_log = memory_writer("scoring")
    scoring = ScoringService(writer)
    outcomes = []
    for seed in range(4):
        playout, envelopes = board_envelopes(seed, f"m-{seed}")
        outcomes.append(playout.outcome.results["ann"])
        await scoring.on_board_records(fetched(envelopes))
    request = scoring_pb2.GetStandingsRequest(game="crashland")
    standings = await scoring.GetStandings(request, context())
    assert standings.matches == 4
    assert standings.matches_won == outcomes.count("won")
    [ann] = standings.players
    assert (ann.played, ann.won, ann.lost) == (4, outcomes.count("won"), outcomes.count("lost"))
    recovered = ScoringService(memory_writer("scoring")[0])
    for envelope in event_log.envelopes:
        recovered.apply(envelope)
    assert await recovered.GetStandings(request, context()) == standings


# -- gateway views --------------------------------------------------------------------


def update(
    version: int, status: match_pb2.MatchStatus.ValueType = match_pb2.MATCH_STATUS_ACTIVE
) -> match_pb2.ViewUpdate:
    """A new Drillit match's update as the projector publishes it (the gateway renders)."""
    created = make_envelope(
        match_id="m-1",
        stream="board",
        sequence=1,
        payload=platform_events_pb2.MatchCreated(game="drillit", players=["ann", "bob"]),
        cause=Cause("c", "c", "board"),
    )
    published = views.update(created_match(created))
    published.summary.version = version
    published.summary.status = status
    return published


def gateway_config() -> Config:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("TABLETOP_DEV_STACK", "1")
        return Config.from_env("gateway")


CONFIG = gateway_config()
TOKENS = Tokens(CONFIG.token_key, CONFIG.token_ttl_seconds)


def seat_token(seat: str, match_id: str = "m-1") -> str:
    return TOKENS.issue(match_id, Role.SEAT, f"client-{seat}", seat=seat)[0]


async def gateway(*updates: match_pb2.ViewUpdate) -> Served:
    views = ViewStore()
    for u in updates:
        await views.put(u)
    # a channel is connected lazily: this one is never used
    return Served(GatewayService([], grpc.aio.insecure_channel("127.0.0.1:9"), views, CONFIG))


async def refused(call: Awaitable[object]) -> grpc.StatusCode:
    with pytest.raises(Aborted) as aborted:
        await call
    return aborted.value.code


async def test_each_seat_token_sees_its_seat_and_no_token_sees_the_spectator_view() -> None:
    service = await gateway(update(3))
    request = gateway_pb2.GetViewRequest(match_id="m-1")
    for seat in ("ann", "bob"):
        assert (await service.GetView(request, context(seat_token(seat)))).viewer == seat
    assert (await service.GetView(request, context())).viewer == ""


async def test_another_seat_another_match_and_an_unknown_match_are_refused() -> None:
    service = await gateway(update(3))
    bobs = gateway_pb2.GetViewRequest(match_id="m-1", viewer="bob")
    assert await refused(service.GetView(bobs, context(seat_token("ann")))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    elsewhere = gateway_pb2.GetViewRequest(match_id="m-1")
    assert await refused(service.GetView(elsewhere, context(seat_token("ann", "m-2")))) == (
        grpc.StatusCode.PERMISSION_DENIED
    )
    unknown = gateway_pb2.GetViewRequest(match_id="m-2")
    assert await refused(service.GetView(unknown, context())) == grpc.StatusCode.UNAUTHENTICATED


async def test_a_stateless_update_is_being_rebuilt_and_a_broken_one_is_refused_plainly() -> None:
    request = gateway_pb2.GetViewRequest(match_id="m-1")
    older = update(3)
    older.ClearField("state")  # what a projector from before gateway rendering published
    service = await gateway(older)
    with pytest.raises(Aborted) as aborted:
        await service.GetView(request, context())
    assert aborted.value.code == grpc.StatusCode.UNAVAILABLE
    assert "rebuilt" in aborted.value.details
    broken = update(4)
    broken.state = b"\x00 not a state"
    service = await gateway(broken)
    with pytest.raises(Aborted) as aborted:
        await service.GetView(request, context())
    assert aborted.value.code == grpc.StatusCode.INTERNAL
    assert "could not be drawn" in aborted.value.details
    assert "Error" not in aborted.value.details and "<class" not in aborted.value.details


async def test_a_view_waits_for_its_version_or_says_it_is_not_there_yet() -> None:
    service = await gateway(update(3), update(5), update(4))  # a late, older update is ignored
    reached = gateway_pb2.GetViewRequest(match_id="m-1", min_version=5)
    assert (await service.GetView(reached, context(seat_token("ann")))).version == 5
    ahead = gateway_pb2.GetViewRequest(match_id="m-1", min_version=6, wait_ms=1)
    assert await refused(service.GetView(ahead, context(seat_token("ann")))) == (
        grpc.StatusCode.DEADLINE_EXCEEDED
    )


async def test_matches_are_listed_by_game_and_status() -> None:
    service = await gateway(update(9, match_pb2.MATCH_STATUS_FINISHED))
    listed = await service.ListMatches(gateway_pb2.ListMatchesRequest(), context())
    assert [s.match_id for s in listed.matches] == ["m-1"]
    for request in (
        gateway_pb2.ListMatchesRequest(game="crashland"),
        gateway_pb2.ListMatchesRequest(status=match_pb2.MATCH_STATUS_ACTIVE),
    ):
        assert not (await service.ListMatches(request, context())).matches
