"""The peer: boardgame.io 0.50 run on this machine beside Tabletop, with the same load shape.

The Node project in ``tests/bench/peer/`` (package.json and package-lock.json pin the
versions) is copied to ``.cache/peer/`` and installed there with ``npm ci`` (again only when
the lock file changes). Its server runs with in-memory storage and with FlatFile storage
(node-persist files in a temporary folder); ``load.js`` plays N concurrent matches of a
one-player dice game, each bot sending one move and waiting for the server's authoritative
update before the next (see tests/bench/bots.py for Tabletop's bots). The server's CPU over
the measured window comes from /proc, as for Tabletop's processes (procstat).

Note for reading the figures: boardgame.io sends the update to the clients *before* it
writes the new state to storage (master.ts onUpdate), so its move → update latency does not
include the write; its throughput does (a match's next move waits in its queue for it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from services.cli.stack import free_ports

from .procstat import snapshot, usage
from .stats import Figure, figure
from .timing import window_rates

Storage = Literal["memory", "flatfile"]

SOURCE = Path(__file__).with_name("peer")
FILES = ("package.json", "package-lock.json", "game.js", "server.js", "load.js", "human.js")
STORAGES: tuple[Storage, ...] = ("memory", "flatfile")
STORAGE_TITLE = {"memory": "in-memory", "flatfile": "FlatFile (durable)"}
START_TIMEOUT_S = 90.0


class PeerUnavailable(RuntimeError):
    """Node or npm missing, or the install failed: the peer is skipped, with this reason."""


@dataclass
class PeerLoad:
    """One load run against one boardgame.io server."""

    storage: str
    concurrency: int
    start: float = 0.0
    end: float = 0.0
    stamps: list[float] = field(default_factory=list)
    latency_ms: list[float] = field(default_factory=list)
    create_ms: list[float] = field(default_factory=list)
    matches_finished: int = 0
    errors: dict[str, int] = field(default_factory=dict)
    #: CPU seconds of the server, the load client, other work and idle in the window
    cpu_s: dict[str, float] = field(default_factory=dict)

    @property
    def actions(self) -> int:
        return len(self.stamps)

    def server_cpu_ms_per_action(self) -> float | None:
        seconds = self.cpu_s.get("server")
        return 1000 * seconds / self.actions if seconds is not None and self.actions else None

    def summary(self, run: int) -> dict[str, Any]:
        return {
            "storage": self.storage,
            "concurrency": self.concurrency,
            "run": run,
            "window_s": self.end - self.start,
            "actions": self.actions,
            "matches_finished": self.matches_finished,
            "errors": self.errors,
            "cpu_s": self.cpu_s,
            "server_cpu_ms_per_action": self.server_cpu_ms_per_action(),
        }


# -- install ---------------------------------------------------------------------------------
def install(cache: Path) -> Path:
    """The peer project under ``cache`` with its node_modules (``npm ci`` when the lock
    changed since the last install)."""
    for tool in ("node", "npm"):
        if shutil.which(tool) is None:
            raise PeerUnavailable(f"{tool} is not installed")
    target = cache / "peer"
    target.mkdir(parents=True, exist_ok=True)
    for name in FILES:
        shutil.copyfile(SOURCE / name, target / name)
    lock = hashlib.sha256((SOURCE / "package-lock.json").read_bytes()).hexdigest()
    stamp = target / "node_modules" / ".tabletop-lock-sha256"
    if stamp.exists() and stamp.read_text() == lock:
        return target
    completed = subprocess.run(
        ["npm", "ci", "--no-audit", "--no-fund", "--loglevel=error"],
        cwd=target,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if completed.returncode != 0:
        raise PeerUnavailable(f"npm ci failed: {completed.stderr.strip()[-300:]}")
    stamp.write_text(lock)
    return target


def installed_version(project: Path) -> str:
    with contextlib.suppress(OSError, ValueError, KeyError):
        manifest = project / "node_modules" / "boardgame.io" / "package.json"
        return str(json.loads(manifest.read_text())["version"])
    return "?"


# -- one server, several loads ---------------------------------------------------------------
class PeerServer:
    """``node server.js`` with one storage; FlatFile writes into its own temporary folder."""

    def __init__(self, project: Path, storage: Storage) -> None:
        self.project = project
        self.storage = storage
        self.port, self.api_port = free_ports(2)
        self.data = Path(tempfile.mkdtemp(prefix=f"tabletop-peer-{storage}-"))
        #: the server's standard error, kept after the run (the data folder is not)
        self.log = self.data.with_name(f"{self.data.name}-server.log")
        self.process: asyncio.subprocess.Process | None = None

    @property
    def socket_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def api_url(self) -> str:
        return f"http://127.0.0.1:{self.api_port}"

    async def __aenter__(self) -> PeerServer:
        args = [str(self.port), str(self.api_port), self.storage]
        if self.storage == "flatfile":
            args.append(str(self.data))
        with self.log.open("wb") as log:
            self.process = await asyncio.create_subprocess_exec(
                "node",
                "server.js",
                *args,
                cwd=self.project,
                env={**os.environ, "NODE_ENV": "production"},
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                start_new_session=True,
            )
        assert self.process.stdout is not None
        try:
            line = await asyncio.wait_for(self.process.stdout.readline(), START_TIMEOUT_S)
        except TimeoutError:
            line = b""
        if line.strip() != b"ready":
            await self.__aexit__()
            raise PeerUnavailable(f"the boardgame.io server ({self.storage}) did not start")
        return self

    def exited(self) -> str | None:
        """None while the server runs; else how it ended, with its last words."""
        if self.process is None or self.process.returncode is None:
            return None
        try:
            lines = self.log.read_text(errors="replace").strip().splitlines()
        except OSError:
            lines = []
        last = f": {lines[-1][:200]}" if lines else ""
        code = self.process.returncode
        return f"the boardgame.io server exited with code {code}{last} (log: {self.log})"

    async def __aexit__(self, *exc: object) -> None:
        if self.process is not None and self.process.returncode is None:
            self.process.terminate()
            try:
                await asyncio.wait_for(self.process.wait(), 10)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
        shutil.rmtree(self.data, ignore_errors=True)

    async def load(
        self, concurrency: int, warmup_s: float, duration_s: float, timeout_s: float
    ) -> PeerLoad:
        assert self.process is not None
        samples = self.data.with_name(f"{self.data.name}-load-{concurrency}.json")
        client = await asyncio.create_subprocess_exec(
            "node",
            "load.js",
            self.socket_url,
            self.api_url,
            str(concurrency),
            str(warmup_s),
            str(duration_s),
            str(timeout_s),
            str(samples),
            cwd=self.project,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        assert client.stdout is not None and client.stderr is not None
        pids = {"server": self.process.pid, "load client": client.pid}
        before = None
        result = PeerLoad(self.storage, concurrency)
        try:
            async with asyncio.timeout(warmup_s + duration_s + 3 * timeout_s + 30):
                async for raw in client.stdout:
                    line = raw.decode().strip()
                    if line == "window-start":
                        before = snapshot(pids)
                    elif line == "window-end" and before is not None:
                        result.cpu_s = usage(before, snapshot(pids))
                await client.wait()
            if client.returncode != 0:
                error = (await client.stderr.read()).decode().strip().splitlines()
                raise PeerUnavailable(f"load.js: {error[-1] if error else client.returncode}")
            data = json.loads(samples.read_text())
        finally:
            if client.returncode is None:
                client.kill()
                await client.wait()
            samples.unlink(missing_ok=True)
        result.start, result.end = data["start"], data["end"]
        result.stamps, result.latency_ms = data["stamps"], data["latency_ms"]
        result.create_ms, result.errors = data["create_ms"], data["errors"]
        result.matches_finished = data["matches_finished"]
        return result


async def measure_peer(
    project: Path,
    levels: Sequence[int],
    warmup_s: float,
    duration_s: float,
    timeout_s: float,
    storages: Sequence[Storage] = STORAGES,
) -> list[PeerLoad]:
    """Every level against a fresh server of each storage."""
    loads = []
    for storage in storages:
        async with PeerServer(project, storage) as server:
            for level in levels:
                loads.append(await server.load(level, warmup_s, duration_s, timeout_s))
    return loads


# -- figures ---------------------------------------------------------------------------------
def _label(level: int) -> str:
    return "1 match" if level == 1 else f"{level} concurrent matches"


def peer_figures(loads: Sequence[PeerLoad], version: str) -> list[Figure]:
    figures: list[Figure] = []
    for storage in STORAGES:
        mine = [load for load in loads if load.storage == storage]
        for level in sorted({load.concurrency for load in mine}):
            runs = [load for load in mine if load.concurrency == level]
            title = f"boardgame.io {version} {STORAGE_TITLE[storage]}"
            figures.append(
                figure(
                    f"peer.{storage}.actions.c{level}",
                    f"{title}: moves per second, {_label(level)}",
                    "/s",
                    "higher",
                    [window_rates(r.stamps, r.start, r.end) for r in runs],
                )
            )
            figures.append(
                figure(
                    f"peer.{storage}.update.c{level}",
                    f"{title}: move → authoritative update, {_label(level)}",
                    "ms",
                    "lower",
                    [r.latency_ms for r in runs],
                )
            )
            cpu = [[v] for r in runs if (v := r.server_cpu_ms_per_action()) is not None]
            if cpu:
                figures.append(
                    figure(
                        f"peer.{storage}.cpu.c{level}",
                        f"{title}: server CPU per move, {_label(level)}",
                        "ms",
                        "lower",
                        cpu,
                    )
                )
    return figures
