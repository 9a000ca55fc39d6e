"""Fault injection: bots play while each process, and the Kafka broker, is SIGKILLed and
restarted. Afterwards: no acknowledged action lost, none duplicated (one event id per
(match, stream, sequence)), views converge (rebuild-compare: 0 differences), every
finished match verifies and is scored, no process died on its own; recovery times are
reported.

Runs against a private broker (tests/faults/kafka.py), never the shared one. ``make
faults`` runs it (2–3 minutes); it is not part of ``make test``.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import grpc
import pytest

from services.cli.session import Credential, signed_in
from services.cli.stack import ORDER, Stack
from services.common.kafka_acls import BENCH
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc
from tests.faults.bots import Bot, Record
from tests.faults.checks import check
from tests.faults.kafka import PrivateKafka

pytestmark = pytest.mark.faults

TARGETS = ("board", "dice", "decks", "scoring", "projector", "gateway", "kafka")
BOTS = 3
#: how long bots play before the first kill and between recoveries
PLAY_S = 6.0
#: how long a killed process stays down (a supervisor's restart delay)
DOWN_S = 1.0


@pytest.fixture
def private_stack(tmp_path: Path) -> Iterator[tuple[Stack, PrivateKafka]]:
    kafka = PrivateKafka.create(tmp_path / "kafka")
    kafka.start()
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix="faults.", partitions=3)
    stack.kafka = kafka.admin
    # Every bot and probe calls from one address: quotas out of the way (they are per
    # client, not a budget); the bots still wait out a RESOURCE_EXHAUSTED if one comes.
    stack.extra_env = {
        "TABLETOP_QUOTA_CREATE_PER_S": "100000",
        "TABLETOP_QUOTA_CREATE_BURST": "100000",
        "TABLETOP_QUOTA_ACTIONS_PER_S": "1000000",
        "TABLETOP_QUOTA_ACTIONS_BURST": "1000000",
        "TABLETOP_QUOTA_SIGNUP_PER_S": "100000",
        "TABLETOP_QUOTA_SIGNUP_BURST": "100000",
        "TABLETOP_GATEWAY_MAX_OPEN_MATCHES_PER_PLAYER": "0",
        # a snapshot every few seconds: each killed service restarts from a snapshot taken
        # while the bots played, plus the tail (and some kills land mid-snapshot)
        "TABLETOP_SNAPSHOT_EVERY_SECONDS": "3",
    }
    try:
        stack.up()
        yield stack, kafka
    except BaseException:
        for log in sorted((tmp_path / "run").glob("*.log")):
            print(f"==== {log.name}\n{log.read_text()[-3000:]}")
        raise
    finally:
        stack.down()
        kafka.stop()
        if keep := os.environ.get("FAULTS_LOGS"):  # pytest prunes old tmp dirs
            shutil.rmtree(keep, ignore_errors=True)
            shutil.copytree(tmp_path / "run", keep, ignore=shutil.ignore_patterns("*.pid"))


def probe(stack: Stack, deadline: float) -> float:
    """Time at which a new (public) match is created end to end and its spectator view is
    served. Retries keep the create's command id, so they are the same match."""
    request = gateway_pb2.OpenMatchRequest(
        game="crashland", players=["probe"], command_id=uuid.uuid4().hex
    )
    match_id, version = "", 0
    with grpc.insecure_channel(stack.addr("gateway")) as channel:
        signed = signed_in(channel, stack.addr("gateway"), Credential())
        stub = gateway_pb2_grpc.GatewayStub(signed)
        while time.monotonic() < deadline:
            try:
                if not match_id:
                    opened = stub.CreateMatch(request, timeout=5)
                    match_id, version = opened.match_id, opened.version
                view = stub.GetView(
                    gateway_pb2.GetViewRequest(
                        match_id=match_id, min_version=version, wait_ms=1000
                    ),
                    timeout=5,
                )
                if view.version >= version:
                    return time.monotonic()
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    raise TimeoutError("the platform did not serve a new match again")


def kill_and_restart(stack: Stack, kafka: PrivateKafka, target: str) -> dict[str, float]:
    start = time.monotonic()
    if target == "kafka":
        kafka.kill()
        time.sleep(DOWN_S)
        kafka.start()
    else:
        pid = stack.pid(target)
        assert pid is not None, f"{target} is not running before its kill"
        os.kill(pid, signal.SIGKILL)
        while stack.pid(target) is not None:
            time.sleep(0.02)
        time.sleep(DOWN_S)
        stack.start(target)
        stack.wait_healthy(target, timeout=120)
    healthy = time.monotonic()
    served = probe(stack, deadline=time.monotonic() + 180)
    return {"healthy_s": round(healthy - start, 1), "serving_s": round(served - start, 1)}


def test_bots_lose_and_duplicate_nothing_while_every_process_and_the_broker_die(
    private_stack: tuple[Stack, PrivateKafka],
) -> None:
    stack, kafka = private_stack
    began = time.monotonic()
    record, stop = Record(), threading.Event()
    key = stack.secrets()["TABLETOP_TOKEN_KEY"].encode()
    bots = [Bot(stack.addr("gateway"), key, seed, stop, record) for seed in range(BOTS)]
    for bot in bots:
        bot.start()
    time.sleep(PLAY_S)
    recovery = {}
    for target in TARGETS:
        recovery[target] = kill_and_restart(stack, kafka, target)
        print(f"{target}: {recovery[target]}", flush=True)
        time.sleep(PLAY_S)
    stop.set()
    for bot in bots:
        bot.join(timeout=120)
    played = time.monotonic() - began
    dead = [s for s in ORDER if stack.pid(s) is None]
    findings = check(
        stack.kafka_as(BENCH),
        stack.topic_prefix,
        stack.addr("gateway"),
        record.acked,
        key,
    )
    report = {
        "recovery": recovery,
        "played_s": round(played, 1),
        "suite_s": round(time.monotonic() - began, 1),
        "acked_by_kind": dict(record.kinds),
        "retries": dict(record.retries),
        "refused": dict(record.refused),
        "dead_processes": dead,
        **{k: v for k, v in asdict(findings).items()},
    }
    print(json.dumps(report, indent=1))
    if path := os.environ.get("FAULTS_REPORT"):
        Path(path).write_text(json.dumps(report, indent=1) + "\n")
    assert [bot.failure for bot in bots if bot.failure] == []
    assert dead == []
    # identity survives every restart: tokens are stateless, joins are board events
    assert {"UNAUTHENTICATED", "PERMISSION_DENIED"}.isdisjoint(record.refused)
    assert findings.acked > 0 and findings.finished > 0
    assert findings.duplicates == []
    assert findings.lost == []
    assert findings.views_behind == []
    assert findings.differences == []
    assert findings.dead_lettered == {}
    assert findings.unverified == {}
    assert findings.unscored == []
