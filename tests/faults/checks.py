"""What must hold after the faults: read from the log itself, not from any service."""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import cast

import grpc

from services.adapters.verify import verify_match
from services.common.envelope import is_a, unpack
from services.common.eventlog import read_stream
from services.common.kafka_access import KafkaAccess
from services.common.topics import STREAMS, event_topic
from services.projector import deadletters
from services.projector.rebuild import compare_with_live
from tabletop.v1 import envelope_pb2, gateway_pb2, gateway_pb2_grpc, platform_events_pb2

#: stream → match id → every envelope read back, duplicates included, in log order
Log = dict[str, dict[str, list[envelope_pb2.EventEnvelope]]]


def read_log(kafka: KafkaAccess, prefix: str) -> Log:
    async def read() -> Log:
        out: Log = {}
        for stream in STREAMS:
            by_match: dict[str, list[envelope_pb2.EventEnvelope]] = defaultdict(list)
            async for envelope in read_stream(kafka, [event_topic(stream, prefix)]):
                by_match[envelope.match_id].append(envelope)
            out[stream] = dict(by_match)
        return out

    return asyncio.run(read())


def duplicates(log: Log) -> list[str]:
    """Every (stream, match, sequence) held by more than one event id."""
    found = []
    for stream, matches in log.items():
        for match_id, envelopes in matches.items():
            ids: dict[int, set[str]] = defaultdict(set)
            for envelope in envelopes:
                ids[envelope.sequence].add(envelope.event_id)
            found += [f"{stream} {match_id} #{s}" for s, i in sorted(ids.items()) if len(i) > 1]
    return found


def first_copies(envelopes: list[envelope_pb2.EventEnvelope]) -> list[envelope_pb2.EventEnvelope]:
    held: dict[int, envelope_pb2.EventEnvelope] = {}
    for envelope in envelopes:
        held.setdefault(envelope.sequence, envelope)
    return [held[s] for s in sorted(held)]


def lost(log: Log, acked: list[tuple[str, str, int]]) -> list[str]:
    """Acknowledged commands whose events are not in board.events where the answer said."""
    missing = []
    for match_id, command_id, version in acked:
        board = first_copies(log["board"].get(match_id, []))
        if len(board) < version or board[version - 1].correlation_id != command_id:
            missing.append(f"{match_id} {command_id} v{version}")
    return missing


def finished_matches(log: Log) -> list[str]:
    return sorted(
        match_id
        for match_id, envelopes in log["board"].items()
        if any(is_a(e, platform_events_pb2.MatchEnded) for e in envelopes)
    )


def unscored(log: Log) -> list[str]:
    """Finished matches without a result on scoring.events. A lobby nobody joined in time
    is ended by its board unscored (``MatchEnded.expired``): the probes that create a match
    and only wait for its view leave such lobbies behind."""
    return [
        m
        for m in finished_matches(log)
        if not log["scoring"].get(m) and not _expired(log["board"][m])
    ]


def _expired(envelopes: list[envelope_pb2.EventEnvelope]) -> bool:
    return any(
        is_a(e, platform_events_pb2.MatchEnded)
        and cast(platform_events_pb2.MatchEnded, unpack(e, platform_events_pb2.MatchEnded)).expired
        for e in envelopes
    )


def unverified(log: Log) -> dict[str, list[str]]:
    problems = {}
    for match_id in finished_matches(log):
        envelopes = [e for stream in STREAMS for e in log[stream].get(match_id, [])]
        result = verify_match(envelopes)
        if not result.ok:
            problems[match_id] = result.problems
    return problems


def wait_for_reveals(
    kafka: KafkaAccess, prefix: str, timeout: float
) -> tuple[Log, dict[str, list[str]]]:
    """The log once every finished match verifies (the outbox reveals late seeds) and is
    scored (scoring follows board.events a little behind), or the problems left when
    ``timeout`` runs out."""
    deadline = time.monotonic() + timeout
    while True:
        log = read_log(kafka, prefix)
        problems = unverified(log)
        if (not problems and not unscored(log)) or time.monotonic() > deadline:
            return log, problems
        time.sleep(2)


def views_behind(gateway: str, log: Log, timeout: float) -> list[str]:
    """Matches whose live view has not reached the log's last board event in time, each
    with the version its view did reach and the log's last event (what a failure needs to
    be understood without the cluster). A view that is slow (a projector catching up after
    a restart) is asked again until ``timeout``; each match gets a few seconds even once a
    slow one has used the time up."""
    deadline = time.monotonic() + timeout
    behind = []
    with grpc.insecure_channel(gateway) as channel:
        stub = gateway_pb2_grpc.GatewayStub(channel)
        for match_id, envelopes in sorted(log["board"].items()):
            board = first_copies(envelopes)
            version = len(board)
            while True:
                wait_ms = max(5_000, int((deadline - time.monotonic()) * 1000))
                try:
                    view = stub.GetView(
                        gateway_pb2.GetViewRequest(
                            match_id=match_id, min_version=version, wait_ms=wait_ms
                        ),
                        timeout=wait_ms / 1000 + 5,
                    )
                except grpc.RpcError as error:
                    # the gateway waits 30 s at most per call: ask again while time is left
                    if time.monotonic() < deadline:
                        time.sleep(1)
                        continue
                    behind.append(
                        f"{match_id}: {error.code().name}, {_reached(stub, match_id)} < log "
                        f"v{version} (last {board[-1].event_type if board else 'none'})"
                    )
                    break
                if view.version < version:
                    behind.append(f"{match_id}: view v{view.version} < log v{version}")
                break
    return behind


def _reached(stub: gateway_pb2_grpc.GatewayStub, match_id: str) -> str:
    """The version a match's view has reached, said for a report."""
    try:
        view = stub.GetView(gateway_pb2.GetViewRequest(match_id=match_id), timeout=5)
    except grpc.RpcError as error:
        return f"view {error.code().name}"
    return f"view v{view.version}"


@dataclass
class Findings:
    events: int = 0
    matches: int = 0
    finished: int = 0
    acked: int = 0
    duplicates: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    unverified: dict[str, list[str]] = field(default_factory=dict)
    unscored: list[str] = field(default_factory=list)
    views_behind: list[str] = field(default_factory=list)
    differences: list[str] = field(default_factory=list)
    #: matches whose views stopped at an event the projector could not fold
    dead_lettered: dict[str, str] = field(default_factory=dict)


def check(
    kafka: KafkaAccess,
    prefix: str,
    gateway: str,
    acked: list[tuple[str, str, int]],
    token_key: bytes,
) -> Findings:
    log, problems = wait_for_reveals(kafka, prefix, timeout=90)
    behind = views_behind(gateway, log, timeout=120)  # first: compare skips moving views
    differences = asyncio.run(compare_with_live(kafka, prefix, gateway, token_key)).differences
    if differences:
        # a view of the same version may still be on its way (the seeds a match's outbox
        # reveals late come as a same-version update): only one that stays differs
        time.sleep(10)
        again = asyncio.run(compare_with_live(kafka, prefix, gateway, token_key)).differences
        differences = [d for d in differences if d in set(again)]
    stopped = asyncio.run(deadletters.read_outstanding(kafka, prefix))
    return Findings(
        events=sum(len(e) for matches in log.values() for e in matches.values()),
        matches=len(log["board"]),
        finished=len(finished_matches(log)),
        acked=len(acked),
        duplicates=duplicates(log),
        lost=lost(log, acked),
        unverified=problems,
        unscored=unscored(log),
        views_behind=behind,
        differences=differences,
        dead_lettered={m: f"{o.event_type} #{o.sequence}: {o.reason}" for m, o in stopped.items()},
    )
