"""Bots playing through the cluster's gateway while a test breaks, upgrades or rescales
it (the fault suite's bots, tests/faults/bots.py), and what must hold afterwards."""

from __future__ import annotations

import json
import threading
import time
import urllib.parse
import urllib.request
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import Any

import grpc

from services.cli.session import Credential, signed_in
from tabletop.v1 import gateway_pb2, gateway_pb2_grpc
from tests.cluster.kube import Cluster
from tests.faults.bots import Bot, Record
from tests.faults.checks import check

BOTS = 3


class TimedRecord(Record):
    """Also when each match was last acknowledged, and its longest wait between two
    acknowledgements (a stall, as its players live it)."""

    def __init__(self) -> None:
        super().__init__()
        self.last_ack: dict[str, float] = {}
        self.longest_gap: dict[str, float] = {}

    def stalls(self, since: float) -> dict[str, float]:
        """Per match in play since ``since``: its longest gap, counting the one still open."""
        now = time.monotonic()
        with self.lock:
            return {
                m: round(
                    max(self.longest_gap.get(m, 0.0), now - t if m not in self.finished else 0.0), 2
                )
                for m, t in self.last_ack.items()
                if t >= since
            }


class TimedBot(Bot):
    def _acked(self, kind: str, match_id: str, correlation_id: str, version: int) -> None:
        super()._acked(kind, match_id, correlation_id, version)
        record = self._record
        assert isinstance(record, TimedRecord)
        now = time.monotonic()
        with record.lock:
            last = record.last_ack.get(match_id)
            if last is not None:
                record.longest_gap[match_id] = max(
                    record.longest_gap.get(match_id, 0.0), now - last
                )
            record.last_ack[match_id] = now


@contextmanager
def bots_playing(k8s: Cluster, count: int = BOTS) -> Iterator[tuple[TimedRecord, list[Bot]]]:
    record, stop = TimedRecord(), threading.Event()
    key = k8s.secret("token-key")
    bots: list[Bot] = [TimedBot(k8s.gateway, key, seed, stop, record) for seed in range(count)]
    for bot in bots:
        bot.start()
    try:
        yield record, bots
    finally:
        stop.set()
        for bot in bots:
            bot.join(timeout=180)


def probe(gateway: str, timeout: float = 300) -> float:
    """Seconds until a new match is created end to end and its view is served (retries keep
    the create's command id: the same match)."""
    start = time.monotonic()
    request = gateway_pb2.OpenMatchRequest(
        game="crashland", players=["probe"], command_id=uuid.uuid4().hex
    )
    match_id, version = "", 0
    with grpc.insecure_channel(gateway) as channel:
        # a new visitor each time: a probe leaves a lobby nobody joins, and one player may
        # keep only 5 waiting (the sixth probe measured that limit's 300 s, not the platform)
        stub = gateway_pb2_grpc.GatewayStub(signed_in(channel, gateway, Credential()))
        while time.monotonic() - start < timeout:
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
                    return time.monotonic() - start
            except grpc.RpcError:
                pass
            time.sleep(0.1)
    raise TimeoutError("the platform did not serve a new match again")


def findings(k8s: Cluster, record: Record, bots: list[Bot]) -> dict[str, Any]:
    """The fault suite's checks, on the cluster's own Kafka (read from this machine)."""
    found = check(k8s.kafka(), "", k8s.gateway, record.acked, k8s.secret("token-key"))
    return {
        "bot_failures": [repr(b.failure) for b in bots if b.failure],
        "acked_by_kind": dict(record.kinds),
        "retries": dict(record.retries),
        "refused": dict(record.refused),
        "projector_gaps_healed": projector_gaps(k8s),
        **asdict(found),
    }


def projector_gaps(k8s: Cluster) -> float | None:
    """Matches the projector found its table behind and folded again from the log in the
    last half hour (across restarts; a lost table write, reported: views still caught up,
    which the checks assert). None when Prometheus cannot say."""
    query = urllib.parse.urlencode({"query": "sum(increase(tabletop_projector_gaps_total[30m]))"})
    try:
        with urllib.request.urlopen(f"{k8s.prometheus}/api/v1/query?{query}", timeout=10) as r:
            result = json.loads(r.read())["data"]["result"]
    except (OSError, ValueError, KeyError):
        return None
    return round(float(result[0]["value"][1]), 1) if result else 0.0


def assert_nothing_lost(found: dict[str, Any]) -> None:
    assert found["bot_failures"] == []
    assert found["acked"] > 0 and found["finished"] > 0
    assert found["duplicates"] == []
    assert found["lost"] == []
    assert found["views_behind"] == []
    assert found["differences"] == []
    assert found["dead_lettered"] == {}
    assert found["unverified"] == {}
    assert found["unscored"] == []
