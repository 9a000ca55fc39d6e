"""Restarts from a snapshot plus the tail of the log (real Kafka, real processes): the
services answer exactly as before, including for what was appended after the snapshot
and for an append whose outcome was unknown when the snapshot was taken."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from services.common.envelope import Cause
from services.common.eventlog import LogUnavailable, create_topics
from services.common.kafka_access import KafkaAccess
from services.common.ledger import StreamWriter
from services.common.snapshots import KafkaSnapshotStore, pack
from services.common.topics import TopicSpec
from tabletop.v1 import (
    board_pb2,
    board_pb2_grpc,
    decks_pb2_grpc,
    dice_pb2,
    envelope_pb2,
    envelope_pb2_grpc,
    scoring_pb2,
    scoring_pb2_grpc,
)
from tabletop.v1 import platform_events_pb2 as pe
from tests.integration.helpers import (
    delete_topics,
    open_match,
    play_bot_match,
    running,
    scratch,
)
from tests.integration.test_exactly_once import FlakyLog

SERVICES = ("dice", "decks", "scoring", "board")


def listed(stack: Stack, service: str, match_id: str) -> list[str]:
    source = envelope_pb2_grpc.EventSourceStub(stack.peer_channel(service))
    request = envelope_pb2.ListEventsRequest(match_id=match_id)
    return [e.event_id for e in source.ListEvents(request, timeout=30)]


def answers(stack: Stack, finished: str, active: str) -> dict[str, object]:
    """What the services answer about a finished and an active match."""
    # Crashland (``finished``) commits a decks seed only; Drillit (``active``) both.
    decks = decks_pb2_grpc.DecksStub(stack.peer_channel("decks"))
    reveal = dice_pb2.RevealRequest(match_id=finished, correlation_id="test")
    scoring = scoring_pb2_grpc.ScoringStub(stack.peer_channel("scoring"))
    return {
        "listed": {s: listed(stack, s, finished) for s in ("board", "decks")},
        "active": listed(stack, "board", active),
        "active chance": {s: listed(stack, s, active) for s in ("dice", "decks")},
        "reveal": decks.Reveal(reveal, timeout=30),
        "standings": scoring.GetStandings(
            scoring_pb2.GetStandingsRequest(game="crashland"), timeout=30
        ),
    }


def scored(stack: Stack, count: int) -> scoring_pb2.GetStandingsReply:
    scoring = scoring_pb2_grpc.ScoringStub(stack.peer_channel("scoring"))
    deadline = time.monotonic() + 60
    while True:
        reply: scoring_pb2.GetStandingsReply = scoring.GetStandings(
            scoring_pb2.GetStandingsRequest(game="crashland"), timeout=30
        )
        if reply.matches >= count or time.monotonic() > deadline:
            return reply
        time.sleep(0.2)


def restart(stack: Stack, kill: bool) -> None:
    for service in SERVICES:
        pid = stack.pid(service)
        if kill and pid is not None:
            os.kill(pid, signal.SIGKILL)  # no snapshot at the stop: the tail has the rest
            while stack.pid(service) is not None:
                time.sleep(0.05)
        stack.stop(service, timeout=60)
    for service in SERVICES:
        stack.start(service)
        stack.wait_healthy(service)


def log_of(stack: Stack, service: str) -> str:
    return (stack.run_dir / f"{service}.log").read_text()


@pytest.fixture
def own_stack(kafka_admin: KafkaAccess, tmp_path: Path) -> Iterator[Stack]:
    """A stack of its own: restarting services under the shared stack left other tests'
    bot seats failing with UNAVAILABLE afterwards (a finding in the stop's note)."""
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=f"snap{uuid.uuid4().hex[:8]}.")
    stack.kafka = kafka_admin
    with running(stack):
        yield stack


def test_services_restart_from_a_snapshot_and_the_tail_and_answer_as_before(
    own_stack: Stack,
) -> None:
    stack = own_stack
    client = GatewayClient(stack.addr("gateway"))
    board = board_pb2_grpc.BoardStub(stack.peer_channel("board"))
    before = scored(stack, 0).matches
    finished, _ = play_bot_match(client, "crashland", ["ann"], seed=int(uuid.uuid4().int % 1000))
    active = open_match(client, "drillit", ["a", "b"])

    sent: dict[str, board_pb2.SubmitActionRequest] = {}

    def act(command_id: str) -> board_pb2.SubmitActionReply:
        legal = client.legal(active, "a")
        mover = legal.next.players[0]
        legal = client.legal(active, mover)
        request = board_pb2.SubmitActionRequest(
            match_id=active, player=mover, action=legal.actions[0].action, command_id=command_id
        )
        sent[command_id] = request
        acknowledged: board_pb2.AcknowledgedAction = board.SubmitCommand(request, timeout=30)
        return acknowledged.reply

    first = act("before-the-snapshot")
    scored(stack, before + 1)
    expected = answers(stack, finished, active)

    restart(stack, kill=False)  # a clean stop writes each service's snapshot
    for service in SERVICES:
        assert "snapshot_written" in log_of(stack, service), service
    assert answers(stack, finished, active) == expected

    after = act("after-the-snapshot")  # appended after the snapshot, before the restart
    assert after.version > first.version
    expected = answers(stack, finished, active)
    restart(stack, kill=True)
    for service in SERVICES:
        assert log_of(stack, service).count("snapshot_restored") >= 2, service
    assert answers(stack, finished, active) == expected
    # retried commands get their first answers, from before and after the snapshot
    for command_id, reply in (("before-the-snapshot", first), ("after-the-snapshot", after)):
        again = board.SubmitCommand(sent[command_id], timeout=30).reply
        assert again.duplicate
        assert again.version == reply.version
    assert listed(stack, "board", active) == expected["active"]
    # a match played after the restart is scored on top of the restored standings
    play_bot_match(client, "crashland", ["ann"], seed=1)
    assert scored(stack, before + 2).matches == before + 2


def test_an_unsettled_append_across_a_snapshot_is_settled_by_the_restart(
    kafka: KafkaAccess,
) -> None:
    async def run() -> tuple[int, list[str], int]:
        topic = scratch(kafka, f"test-snap-{uuid.uuid4().hex[:8]}")
        compacted = {"cleanup.policy": "compact"}
        topics = [TopicSpec(topic, 3), TopicSpec(f"{topic}.snapshots", 3, compacted)]
        await create_topics(kafka, topics)
        log = FlakyLog(kafka, topic, transactional_id=f"{topic}-w")
        await log.start()
        writer = StreamWriter("scoring", log, kafka)
        await writer.recover(lambda e: None)
        cause = Cause("x1", "x1", "test")
        log.lose, log.unreadable = 1, 1  # committed, the answer lost, the read-back failed
        with contextlib.suppress(LogUnavailable):
            await writer.append("x", [pe.MatchEnded(reason="x")], cause)
        await writer.append("y", [pe.MatchEnded(reason="y")], Cause("y1", "y1", "test"))
        unknown = writer.version("x")
        store = KafkaSnapshotStore(kafka, f"{topic}.snapshots", "scoring")
        await store.start()
        await store.save(pack(writer.snapshot()))
        await store.stop()
        await log.stop()

        # the restart: a new producer (fencing the old one), the snapshot, the tail
        log = FlakyLog(kafka, topic, transactional_id=f"{topic}-w")
        await log.start()
        restarted = StreamWriter("scoring", log, kafka)
        store = KafkaSnapshotStore(kafka, f"{topic}.snapshots", "scoring")
        snapshot = await store.load()
        assert snapshot is not None
        applied: list[str] = []
        await restarted.recover(lambda e: applied.append(f"{e.match_id}:{e.sequence}"), snapshot)
        [following] = await restarted.append("x", [pe.MatchEnded(reason="next")], cause)
        await log.stop()
        await delete_topics(kafka, [t.name for t in topics])
        return unknown, applied, int(following.sequence)

    unknown, applied, following = asyncio.run(run())
    assert unknown == 0  # the old writer did not know x's event committed
    # y from the snapshot (an open match), x read back from the tail, each once
    assert applied == ["y:1", "x:1"]
    assert following == 2
