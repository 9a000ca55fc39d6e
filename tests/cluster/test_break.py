"""Broken in the cluster: while bots play, every workload's pod is deleted in turn, first
gracefully and then forced (`--force --grace-period=0`), Kafka's included. Nothing
acknowledged is lost or duplicated, views converge, every finished match verifies; the time
until the new pod is ready and until the platform serves a new match is reported. And a pod
whose liveness probe fails is restarted by the kubelet."""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path
from typing import Any

from tests.cluster.kube import WORKLOADS, Cluster, get, kubectl, pods, wait_ready
from tests.cluster.load import assert_nothing_lost, bots_playing, findings, probe

#: how long bots play between two deletions
PLAY_S = 5.0


def delete_one(workload: str, forced: bool) -> dict[str, float]:
    # not one still terminating from the previous deletion (a Deployment's old pod drains
    # while its replacement already serves)
    before = [p for p in pods(workload) if not p["metadata"].get("deletionTimestamp")]
    victim = sorted(p["metadata"]["name"] for p in before)[0]
    old = frozenset(p["metadata"]["uid"] for p in before)
    start = time.monotonic()
    extra = ["--force", "--grace-period=0"] if forced else []
    kubectl("-n", "tabletop", "delete", "pod", victim, "--wait=false", *extra)
    ready_s = wait_ready(workload, len(before), timeout=300, old=old)
    return {"ready_s": round(ready_s, 1), "start": start}


def test_every_pod_deleted_while_bots_play_loses_nothing(k8s: Cluster, report: Any) -> None:
    recovery: dict[str, dict[str, float]] = {}
    with bots_playing(k8s) as (record, bots):
        time.sleep(PLAY_S)
        for workload in WORKLOADS:
            for forced in (False, True):
                deleted = delete_one(workload, forced)
                serving = time.monotonic() - deleted.pop("start") + probe(k8s.gateway)
                name = f"{workload} {'forced' if forced else 'graceful'}"
                recovery[name] = {**deleted, "serving_s": round(serving, 1)}
                print(f"{name}: {recovery[name]}", flush=True)
                time.sleep(PLAY_S)
    found = findings(k8s, record, bots)
    report.add("pod_deletion_recovery", recovery)
    report.add("pod_deletion_findings", {k: v for k, v in found.items() if k != "differences"})
    assert_nothing_lost(found)


def host_pids(pod: dict[str, Any]) -> list[int]:
    """The host PIDs of a pod's processes (its cgroup path names the pod's uid)."""
    uid = pod["metadata"]["uid"]
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cgroups = (proc / "cgroup").read_text()
        except OSError:
            continue
        if uid in cgroups or uid.replace("-", "_") in cgroups:
            found.append(int(proc.name))
    return found


def test_a_pod_whose_liveness_probe_fails_is_restarted(k8s: Cluster, report: Any) -> None:
    # scoring's process is frozen (SIGSTOP from the host): its gRPC health check stops
    # answering, the liveness probe fails three times and the kubelet restarts it.
    pod = pods("scoring")[0]
    name = pod["metadata"]["name"]
    restarts = pod["status"]["containerStatuses"][0]["restartCount"]
    frozen = [p for p in host_pids(pod) if b"tabletop" in Path(f"/proc/{p}/cmdline").read_bytes()]
    assert frozen, f"no process of {name} found on the host"
    start = time.monotonic()
    for pid in frozen:
        os.kill(pid, signal.SIGSTOP)
    try:
        deadline = start + 240
        while time.monotonic() < deadline:
            status = get("pod", name)["status"]["containerStatuses"][0]
            if status["restartCount"] > restarts and status.get("ready"):
                break
            time.sleep(1)
    finally:
        for pid in frozen:  # if it is still there (the kubelet kills it)
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    status = get("pod", name)["status"]["containerStatuses"][0]
    events = kubectl(
        "-n", "tabletop", "get", "events", "--field-selector", f"involvedObject.name={name}",
        "-o", "custom-columns=R:.reason,M:.message",
    )  # fmt: skip
    assert status["restartCount"] == restarts + 1, events
    assert "Liveness probe failed" in events or "Unhealthy" in events, events
    report.add(
        "liveness_restart",
        {"pod": name, "restarted_and_ready_s": round(time.monotonic() - start, 1),
         "last_state": status.get("lastState", {}).get("terminated", {}).get("reason", "")},
    )  # fmt: skip
    # and it serves again
    assert probe(k8s.gateway) < 120
    wait_ready("scoring", 1, timeout=120)
    assert any(p["metadata"]["name"] == name for p in pods("scoring"))
    assert os.environ.get("CLUSTER_REPORT") is None or Path(os.environ["CLUSTER_REPORT"]).exists()
