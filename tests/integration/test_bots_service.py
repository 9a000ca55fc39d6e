"""The bots service (services/bots/) plays every seat reserved for a bot, whoever created the
match, through the gateway's public API, with real processes and Kafka. Its replicas are
killed, restarted and run side by side while matches are played: every match still ends,
every bot action in board.events carries the one command id of its turn (so two replicas
acting at one version made one action), none is there twice, and nobody but the bots
service took a bot's seat. Its lag metric counts the actions."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TypeVar, cast

import grpc
import pytest
from google.protobuf.message import Message

from services.bots.replicas import command_id
from services.cli.client import GatewayClient
from services.cli.stack import ORDER, Stack, free_ports
from services.common.envelope import is_a, unpack
from services.common.kafka_access import KafkaAccess
from services.gateway.bot_seats import BOTS_HEADER
from tabletop.v1 import envelope_pb2, gateway_pb2, platform_events_pb2
from tests.faults.checks import duplicates, first_copies, read_log
from tests.integration.helpers import eventually, running

ROOT = Path(__file__).resolve().parents[2]

#: (game, seats, bot levels): every seat a bot's, so the matches play themselves
MATCHES = [
    ("crashland", ["solo"], {"solo": "easy"}),
    ("crashland", ["solo"], {"solo": "medium"}),
    ("drillit", ["ana", "bo"], {"ana": "easy", "bo": "easy"}),
    ("drillit", ["ana", "bo", "cy"], {"ana": "easy", "bo": "medium", "cy": "easy"}),
    ("imperial_miners", ["ann", "ben"], {"ann": "easy", "ben": "easy"}),
    ("crashland", ["solo"], {"solo": "easy"}),
]


class BotsReplica:
    """One bots process of the stack, replica ``index`` of ``count``, on ports of its own."""

    def __init__(self, stack: Stack, index: int, count: int, name: str) -> None:
        self.grpc_port, self.metrics_port = free_ports(2)
        env = {
            **stack.env("bots"),
            "TABLETOP_SHARD": str(index),
            "TABLETOP_BOTS_REPLICAS": str(count),
            "TABLETOP_BOTS_WORKERS": "1",
            "TABLETOP_GRPC_PORT": str(self.grpc_port),
            "TABLETOP_METRICS_PORT": str(self.metrics_port),
        }
        self.log = stack.run_dir / f"{name}.log"
        self.process = subprocess.Popen(
            [sys.executable, "-m", "services.common.serve", "bots"],
            env=env,
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            cwd=ROOT,
        )

    def metrics(self) -> str:
        url = f"http://127.0.0.1:{self.metrics_port}/metrics"
        with urllib.request.urlopen(url, timeout=5) as answer:
            return str(answer.read().decode())

    def kill(self) -> None:
        if self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.kill()


@pytest.fixture(scope="module")
def bare_stack(
    kafka_admin: KafkaAccess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """Every service but the bots service, which the tests start as they need it."""
    run_dir = tmp_path_factory.mktemp("bots-stack")
    stack = Stack.ephemeral(run_dir, topic_prefix=f"bt{uuid.uuid4().hex[:8]}.", partitions=3)
    stack.kafka = kafka_admin
    stack.extra_env = {
        "TABLETOP_GATEWAY_MAX_IN_FLIGHT": "0",
        "TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "0",
        "TABLETOP_QUOTA_CREATE_PER_S": "1000",
        "TABLETOP_QUOTA_CREATE_BURST": "1000",
        # one client creates every match, each waiting for the bots service a moment
        "TABLETOP_GATEWAY_MAX_OPEN_LOBBIES_PER_PLAYER": "0",
    }
    with running(stack, tuple(s for s in ORDER if s != "bots")):
        yield stack


def _progress(client: GatewayClient, match_ids: list[str]) -> dict[str, int]:
    """Each match's version as the spectator view shows it."""
    return {m: client.view(m, "", wait_ms=0).version for m in match_ids}


def _finished(client: GatewayClient, match_ids: list[str]) -> bool:
    return all(client.view(m, "", wait_ms=0).results for m in match_ids)


def test_bots_survive_kills_restarts_and_overlapping_replicas(bare_stack: Stack) -> None:
    stack = bare_stack
    client = GatewayClient(stack.addr("gateway"))
    replicas = [BotsReplica(stack, 0, 2, "bots-a"), BotsReplica(stack, 1, 2, "bots-b")]
    overlap: BotsReplica | None = None
    try:
        match_ids = [
            client.create(game, seats, {}, bots=seats, bot_levels=levels, private=i == 0)
            for i, (game, seats, levels) in enumerate(MATCHES)
        ]
        # they play: every match moves on
        eventually(lambda: all(v > 3 for v in _progress(client, match_ids).values()) or None, 90)
        # replica a killed mid-match, and started again: it finds its seats through the gateway
        at_kill = _progress(client, match_ids)
        replicas[0].kill()
        time.sleep(2)
        replicas[0] = BotsReplica(stack, 0, 2, "bots-a")
        # a third replica that thinks it plays everything, beside the two: two act for every
        # seat of a's and b's matches at once until it is killed
        overlap = BotsReplica(stack, 0, 1, "bots-c")
        time.sleep(15)
        overlap.kill()
        eventually(lambda: _finished(client, match_ids) or None, 300)
        metrics = [r.metrics() for r in replicas]
        print("versions when replica a was killed:", at_kill)
        print("at the end:", _progress(client, match_ids))
    finally:
        for replica in [*replicas, *([overlap] if overlap else [])]:
            replica.stop()
        client.close()
    log = read_log(stack.kafka_as("bench"), stack.topic_prefix)
    assert duplicates(log) == []
    for match_id, (_, seats, _levels) in zip(match_ids, MATCHES, strict=True):
        batches = _batches(first_copies(log["board"][match_id]))
        ended = [_payload(e, platform_events_pb2.MatchEnded) for b in batches for e in b]
        assert [e.expired for e in ended if e is not None] == [False]  # over, played
        joins = [_payload(b[0], platform_events_pb2.SeatJoined) for b in batches]
        by = [j.by for j in joins if j is not None]
        assert by and set(by) == {"bots"}  # nobody else took a bot's seat
        actions = [b for b in batches if b[0].correlation_id.startswith("bot-")]
        ids = [b[0].correlation_id for b in actions]
        assert len(ids) == len(set(ids))  # no command twice
        for batch in actions:  # each one the turn's one command id
            before = batch[0].sequence - 1
            assert batch[0].correlation_id in {command_id(match_id, s, before) for s in seats}
        # nothing but the create, the bots' joins and their actions
        assert len(batches) == 1 + len(by) + len(actions)
    for text in metrics:
        print(*[ln for ln in text.splitlines() if ln.startswith("tabletop_bots_")], sep="\n")
    lag_counts = [
        float(line.split()[-1])
        for text in metrics
        for line in text.splitlines()
        if line.startswith("tabletop_bots_lag_seconds_count")
    ]
    assert sum(lag_counts) > 0


Envelope = envelope_pb2.EventEnvelope
P = TypeVar("P", bound=Message)


def _payload(envelope: Envelope, kind: type[P]) -> P | None:
    return cast(P, unpack(envelope, kind)) if is_a(envelope, kind) else None


def _batches(board: list[Envelope]) -> list[list[Envelope]]:
    """The events of each command, as the board appended them."""
    out: list[list[Envelope]] = [[]]
    for envelope in board:
        out[-1].append(envelope)
        if envelope.last_in_batch:
            out.append([])
    return [b for b in out if b]


def test_only_the_bots_credential_takes_a_bot_seat_and_it_takes_no_other(
    bare_stack: Stack,
) -> None:
    stack = bare_stack
    client = GatewayClient(stack.addr("gateway"))
    try:
        stub = client.stub
        match_id = client.create(
            "drillit", ["me", "bot"], {}, bots=["bot"], bot_levels={"bot": "hard"}, seat="me"
        )
        credential = stack.secrets()["TABLETOP_BOTS_TOKEN"]
        bots = ((BOTS_HEADER, credential),)
        creator = client.auth(match_id)
        for metadata in (creator, ()):
            with pytest.raises(grpc.RpcError) as refused:
                stub.JoinMatch(
                    gateway_pb2.JoinMatchRequest(match_id=match_id, seat="bot"), metadata=metadata
                )
            assert refused.value.code() == grpc.StatusCode.PERMISSION_DENIED
            assert "reserved for a bot" in (refused.value.details() or "")
        with pytest.raises(grpc.RpcError) as wrong:
            stub.JoinMatch(
                gateway_pb2.JoinMatchRequest(match_id=match_id, seat="bot"),
                metadata=((BOTS_HEADER, "x" * 64),),
            )
        assert wrong.value.code() == grpc.StatusCode.UNAUTHENTICATED
        with pytest.raises(grpc.RpcError) as other:
            stub.JoinMatch(
                gateway_pb2.JoinMatchRequest(match_id=match_id, seat="me"), metadata=bots
            )
        assert other.value.code() == grpc.StatusCode.PERMISSION_DENIED
        joined = stub.JoinMatch(
            gateway_pb2.JoinMatchRequest(match_id=match_id, seat="bot"), metadata=bots
        )
        assert joined.seat == "bot" and joined.token
        # a private match with a bot seat is listed to the bots service, to nobody else
        hidden = client.create(
            "crashland", ["solo"], {}, bots=["solo"], bot_levels={"solo": "easy"}, private=True
        )

        def listed(metadata: tuple[tuple[str, str], ...]) -> set[str]:
            # the bare stub: no player's session (its creator's would list it as theirs)
            request = gateway_pb2.ListMatchesRequest()
            return {m.match_id for m in client.bare.ListMatches(request, metadata=metadata).matches}

        plain = client.create("crashland", ["solo"], {})
        assert eventually(lambda: (hidden in listed(bots) and plain in listed(())) or None)
        assert hidden not in listed(())
        assert hidden not in listed(creator)  # another match's creator
        # the bots service pages through matches with bot seats only
        assert plain not in listed(bots) and match_id in listed(bots)
    finally:
        client.close()
