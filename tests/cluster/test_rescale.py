"""Rescaled in the cluster: board shards 1 → 3 → 1 (with dice and decks, co-sharded) while
bots play, through deploy/k8s/reshard.sh. After each step every match in play has exactly
one owner (one board shard knows it, the others answer NOT_FOUND); matches created before
the change finish and verify; the longest a match waited between two acknowledgements is
reported."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

import grpc

from tabletop.v1 import board_pb2, board_pb2_grpc
from tests.cluster.kube import (
    KUBECONFIG,
    KUBECTL,
    ROOT,
    Cluster,
    current_tag,
    pod_ip,
    pods,
    write_overlay,
)
from tests.cluster.load import assert_nothing_lost, bots_playing, findings


def owners(k8s: Cluster, match_ids: set[str]) -> dict[str, list[str]]:
    """Match → the board pods that hold it."""
    token = (("x-tabletop-peer", k8s.secret("peer-token").decode()),)
    held: dict[str, list[str]] = {m: [] for m in match_ids}
    for pod in sorted(p["metadata"]["name"] for p in pods("board")):
        with grpc.insecure_channel(f"{pod_ip(pod)}:50053") as channel:
            board = board_pb2_grpc.BoardStub(channel)
            for match_id in match_ids:
                request = board_pb2.GetLegalActionsRequest(match_id=match_id, player="")
                try:
                    board.GetLegalActions(request, metadata=token, timeout=10, wait_for_ready=True)
                except grpc.RpcError as error:
                    if error.code() == grpc.StatusCode.NOT_FOUND:
                        continue
                    raise
                held[match_id].append(pod)
    return held


def reshard(shards: int, tag: str) -> float:
    overlay = write_overlay(tag, shards, name=f"shards-{shards}")
    start = time.monotonic()
    subprocess.run(
        [str(ROOT / "deploy/k8s/reshard.sh"), str(overlay), "tabletop"],
        check=True,
        timeout=900,
        env={**os.environ, "KUBECTL": f"{KUBECTL} --kubeconfig {KUBECONFIG}"},
    )
    return time.monotonic() - start


def test_board_shards_rescale_1_3_1_while_matches_are_in_play(k8s: Cluster, report: Any) -> None:
    tag = current_tag()
    assert len(pods("board")) == 1
    steps: dict[str, Any] = {}
    with bots_playing(k8s) as (record, bots):
        time.sleep(10)
        with record.lock:
            before = {m for m in record.last_ack if m not in record.finished}
        assert before, "no match in play before the rescale"
        for shards in (3, 1):
            start = time.monotonic()
            took = reshard(shards, tag)
            assert len(pods("board")) == shards
            time.sleep(5)
            with record.lock:
                playing = {m for m in record.last_ack if m not in record.finished}
            held = owners(k8s, playing)
            steps[f"to_{shards}"] = {
                "reshard_s": round(took, 1),
                "max_stall_s": max(record.stalls(since=start).values(), default=0.0),
                "matches_in_play": len(playing),
                "owners": sorted({len(v) for v in held.values()}),
            }
            assert {m: len(v) for m, v in held.items()} == {m: 1 for m in held}, held
            time.sleep(10)
        # matches that were in play before the first change are played to their end
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not (before & record.finished):
            time.sleep(2)
    found = findings(k8s, record, bots)
    finished_before = sorted(before & record.finished)
    report.add(
        "rescale",
        {**steps, "created_before_and_finished": len(finished_before),
         **{k: v for k, v in found.items() if k != "differences"}},
    )  # fmt: skip
    assert finished_before, "no match created before the rescale finished"
    assert_nothing_lost(found)
