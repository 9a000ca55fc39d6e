"""Played in the cluster, as a user does it: bots play every game through the gateway's
NodePort, `tabletop verify` and `tabletop replay --verify` pass for each match, the web page
loads, and the in-cluster Prometheus scrapes every service and evaluates the alert rules."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from typing import Any

from services.games.registry import all_games
from tests.cluster.kube import Cluster, control_plane_memory, pod_memory

SERVICES = ("gateway", "dice", "decks", "board", "scoring", "projector", "bots")


def tabletop(k8s: Cluster, *args: str, home: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "services.cli.main", "--gateway", k8s.gateway, *args, "--json"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        env={**os.environ, "HOME": home},
    )
    assert done.returncode == 0, (
        f"tabletop {' '.join(args)}: {done.stdout[-800:]} {done.stderr[-800:]}"
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_bots_play_every_game_and_each_match_verifies(
    k8s: Cluster, tmp_path: Any, report: Any
) -> None:
    played = {}
    for seed, game in enumerate(sorted(all_games())):
        start = time.monotonic()
        result = tabletop(
            k8s, "play", game, "--bot", "random", "--seed", str(seed), home=str(tmp_path)
        )
        match_id = result["match_id"]
        verified = tabletop(k8s, "verify", match_id, home=str(tmp_path))
        assert verified["ok"], verified["problems"]
        replayed = tabletop(k8s, "replay", match_id, "--verify", home=str(tmp_path))
        assert replayed["equal"], replayed
        played[game] = {
            "events": result["events"],
            "actions": result["actions"],
            "outcome": result["outcome"],
            "seconds": round(time.monotonic() - start, 1),
        }
    report.add("played", played)
    assert set(played) == set(all_games())


def test_the_web_page_loads_through_the_gateway(k8s: Cluster) -> None:
    with urllib.request.urlopen(k8s.web, timeout=10) as response:
        page = response.read().decode()
        assert response.status == 200
    assert "<html" in page.lower()
    # and the script it names is served too
    script = page.split('src="', 1)[1].split('"', 1)[0]
    with urllib.request.urlopen(k8s.web + script.lstrip("/"), timeout=10) as response:
        assert response.status == 200 and len(response.read()) > 1000


def prometheus(k8s: Cluster, path: str) -> Any:
    with urllib.request.urlopen(f"{k8s.prometheus}/api/v1/{path}", timeout=10) as response:
        body = json.loads(response.read())
    assert body["status"] == "success", body
    return body["data"]


def test_prometheus_scrapes_every_service_and_evaluates_the_rules(
    k8s: Cluster, report: Any
) -> None:
    # Targets appear once the operator has written the config and the reloader applied it;
    # rules once the first evaluation ran (15 s intervals).
    deadline = time.monotonic() + 180
    while True:
        targets = prometheus(k8s, "targets?state=active")["activeTargets"]
        up = {t["labels"].get("job"): t["health"] for t in targets}
        groups = prometheus(k8s, "rules")["groups"]
        rules = [r for g in groups for r in g["rules"]]
        evaluated = [r for r in rules if r.get("lastEvaluation", "").startswith("20")]
        if (
            all(up.get(s) == "up" for s in SERVICES) and rules and len(evaluated) == len(rules)
        ) or time.monotonic() > deadline:
            break
        time.sleep(3)
    assert {s: up.get(s) for s in SERVICES} == {s: "up" for s in SERVICES}
    assert rules, "the PrometheusRule was not loaded"
    assert [r["name"] for r in rules if r["health"] != "ok"] == []
    assert len(evaluated) == len(rules)
    alerts = [r for r in rules if r["type"] == "alerting"]
    firing = sorted(r["name"] for r in alerts if r["state"] == "firing")
    report.add(
        "prometheus",
        {"targets_up": sorted(s for s in up if up[s] == "up"), "rules": len(rules),
         "alerts": len(alerts), "firing": firing},
    )  # fmt: skip
    # the rules see the services' own series: one of them, queried
    result = prometheus(k8s, "query?query=sum(up{namespace=%22tabletop%22})")["result"]
    assert float(result[0]["value"][1]) >= len(SERVICES)


def test_the_platform_memory_in_the_cluster(k8s: Cluster, report: Any) -> None:
    pods = pod_memory()
    control = control_plane_memory()
    mib = 1024 * 1024
    report.add(
        "memory_mib",
        {
            "tabletop_pods": {p: round(b / mib) for p, b in sorted(pods["tabletop"].items())},
            "tabletop_total": round(sum(pods["tabletop"].values()) / mib),
            "monitoring_total": round(sum(pods.get("monitoring", {}).values()) / mib),
            "kube_system_total": round(sum(pods.get("kube-system", {}).values()) / mib),
            "control_plane": {n: round(b / mib) for n, b in control.items()},
            "control_plane_total": round(sum(control.values()) / mib),
        },
    )
    # every service runs well inside its memory limit (the small overlay's 512Mi)
    for name, used in pods["tabletop"].items():
        if not name.startswith("kafka"):
            assert used < 512 * mib, name
    assert set(control) >= {"kube-apiserver", "etcd", "kubelet", "containerd"}
