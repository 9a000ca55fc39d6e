"""A real Prometheus scrapes every process of a real stack while a match is played."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from services.cli.client import GatewayClient
from services.cli.stack import ORDER, Stack, free_port
from tests.integration.helpers import play_bot_match

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy/prometheus/prometheus.sh"


def need(tool: str) -> str:
    found = shutil.which(tool)
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{tool} is not installed (make tools installs it)")
        pytest.skip(f"{tool} not installed; run make tools")
    return found


@pytest.fixture(scope="module")
def prometheus(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    need("prometheus")
    port = free_port()
    env = {
        **os.environ,
        "PROMETHEUS_PORT": str(port),
        "PROMETHEUS_HOME": str(tmp_path_factory.mktemp("prometheus")),
        "PROMETHEUS_SCRAPE_INTERVAL": "1s",
        "PROMETHEUS_TARGETS": ",".join(f"{s}={stack.metrics_addr(s)}" for s in ORDER),
    }
    subprocess.run([str(SCRIPT), "start"], env=env, check=True, timeout=120)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        subprocess.run([str(SCRIPT), "stop"], env=env, check=False, timeout=60)


def query(base: str, promql: str) -> list[dict[str, Any]]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=10) as response:
        body = json.load(response)
    assert body["status"] == "success"
    result: list[dict[str, Any]] = body["data"]["result"]
    return result


def eventually(
    base: str, promql: str, enough: int = 1, timeout: float = 60
) -> list[dict[str, Any]]:
    """The query's result once it has ``enough`` series (scrapes take a moment)."""
    deadline = time.monotonic() + timeout
    while True:
        result = query(base, promql)
        if len(result) >= enough or time.monotonic() > deadline:
            return result
        time.sleep(1)


def test_prometheus_sees_every_target_up_and_the_metrics_move(
    stack: Stack, prometheus: str
) -> None:
    play_bot_match(GatewayClient(stack.addr("gateway")), "crashland", ["watched"], seed=21)
    up = eventually(prometheus, "sum by (job) (up) == 1", enough=len(ORDER))
    assert {r["metric"]["job"] for r in up} == set(ORDER)
    assert eventually(
        prometheus,
        'grpc_server_handled_total{grpc_service="tabletop.v1.Gateway",'
        'grpc_method="SubmitAction",grpc_code="OK"} > 0',
    )
    appended = eventually(
        prometheus, "sum by (stream) (tabletop_events_appended_total) > 0", enough=4
    )
    assert {r["metric"]["stream"] for r in appended} >= {"board", "dice", "decks", "scoring"}
    assert eventually(prometheus, 'tabletop_projector_events_folded_total{stream="board"} > 0')
    assert eventually(prometheus, "tabletop_matches_finished_total > 0")


def test_promtool_finds_no_naming_problems_in_any_metrics_endpoint(stack: Stack) -> None:
    promtool = need("promtool")
    for service in ORDER:
        url = f"http://{stack.metrics_addr(service)}/metrics"
        with urllib.request.urlopen(url, timeout=5) as r:
            body = r.read()
        checked = subprocess.run(
            [promtool, "check", "metrics"], input=body, capture_output=True, timeout=60
        )
        problems = (checked.stdout + checked.stderr).decode().strip()
        assert checked.returncode == 0 and not problems, f"{service}: {problems}"
