"""deploy/prometheus/prometheus.sh runs a real Prometheus on loopback: it starts, becomes
ready, scrapes the targets it is given, loads the alert rules, and stops."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from services.cli.stack import free_port
from services.common.config import DEFAULT_PORTS
from tests.unit.deploy.deploy_support import ROOT, tool

SCRIPT = ROOT / "deploy" / "prometheus" / "prometheus.sh"
METRICS = b"""# TYPE tabletop_matches_active gauge
tabletop_matches_active{game="crashland"} 2
"""


class _Metrics(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = METRICS if self.path == "/metrics" else b""
        self.send_response(200 if body else 404)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def exporter() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Metrics)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPT), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _query(port: int, promql: str) -> list[dict[str, Any]]:
    url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    with urllib.request.urlopen(url, timeout=5) as r:
        result: list[dict[str, Any]] = json.load(r)["data"]["result"]
        return result


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    tool("prometheus")
    return {
        **os.environ,
        "PROMETHEUS_HOME": str(tmp_path / "prometheus"),
        "PROMETHEUS_PORT": str(free_port()),
    }


def test_start_scrape_stop(env: dict[str, str], exporter: int) -> None:
    env["PROMETHEUS_TARGETS"] = f"board=127.0.0.1:{exporter}"
    port = int(env["PROMETHEUS_PORT"])
    try:
        started = _run(env, "start")
        assert started.returncode == 0, started.stderr
        assert _run(env, "status").returncode == 0
        # Target discovery settles in ~5 s, then a 2 s scrape interval.
        deadline = time.monotonic() + 30
        while not _query(port, 'tabletop_matches_active{job="board"}'):
            assert time.monotonic() < deadline, "the target was never scraped"
            time.sleep(0.5)
        (sample,) = _query(port, 'tabletop_matches_active{job="board"}')
        assert sample["value"][1] == "2"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/rules", timeout=5) as r:
            groups = {g["name"] for g in json.load(r)["data"]["groups"]}
        assert {"tabletop.availability", "tabletop.grpc", "tabletop.events"} <= groups
        # start again: reloads the config in place, same process
        assert _run(env, "start").returncode == 0
    finally:
        stopped = _run(env, "stop")
    assert stopped.returncode == 0, stopped.stderr
    assert _run(env, "status").returncode != 0


def test_default_config_scrapes_every_process(env: dict[str, str]) -> None:
    done = _run(env, "config")
    assert done.returncode == 0, done.stderr
    config = Path(done.stdout.strip()).read_text()
    for job, (_, port) in DEFAULT_PORTS.items():  # the services' own defaults
        assert f"job_name: '{job}'" in config and f"'127.0.0.1:{port}'" in config
    assert "scrape_interval: 2s" in config
    assert str(ROOT / "deploy" / "prometheus" / "rules" / "tabletop.rules.yaml") in config


def test_refuses_non_loopback_targets(env: dict[str, str]) -> None:
    env["PROMETHEUS_TARGETS"] = "board=192.0.2.1:9103"
    done = _run(env, "start")
    assert done.returncode != 0
    assert "loopback" in done.stderr
    assert not (Path(env["PROMETHEUS_HOME"]) / "prometheus.pid").exists()


def test_never_mistakes_another_process_for_its_own(env: dict[str, str]) -> None:
    # e.g. the Debian package's own service on the port: refuse rather than "reuse" it
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        env["PROMETHEUS_PORT"] = str(squatter.getsockname()[1])
        done = _run(env, "start")
        assert done.returncode != 0
        assert "taken by another process" in done.stderr
        assert _run(env, "status").returncode != 0
