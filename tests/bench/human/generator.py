"""Driving the people: one process (the Go generator for Tabletop, ``human.js`` for
boardgame.io), one JSON command per line on its stdin and one answer line on its stdout."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: seats of each game's matches, in the order the tables take them (every seat a person)
DEFAULT_SEATS: Mapping[str, int] = {
    "crashland": 1,
    "drillit": 2,
    "imperial_miners": 2,
    "dungeon_drop": 2,
}


@dataclass(frozen=True)
class Shape:
    """Who sits at a table and how they play."""

    seats: Mapping[str, int] = field(default_factory=lambda: dict(DEFAULT_SEATS))
    spectators: int = 1
    think_mean_s: float = 10.0
    think_min_s: float = 1.0
    #: persons sharing one connection (1: a device each)
    persons_per_conn: int = 1
    setup_parallel: int = 16
    rpc_timeout_s: float = 15.0

    def streams_per_match(self) -> float:
        """Open streams of an average table (seats and spectators)."""
        return sum(self.seats.values()) / len(self.seats) + self.spectators

    def args(self) -> list[str]:
        return [
            "-seats",
            ",".join(f"{game}={n}" for game, n in self.seats.items()),
            "-spectators",
            str(self.spectators),
            "-think-mean",
            f"{self.think_mean_s}s",
            "-think-min",
            f"{self.think_min_s}s",
            "-persons-per-conn",
            str(self.persons_per_conn),
            "-setup-parallel",
            str(self.setup_parallel),
            "-rpc-timeout",
            f"{self.rpc_timeout_s}s",
        ]


class GeneratorFailed(RuntimeError):
    """The generator exited or answered something that is not an answer."""


class Driver:
    """``async with Driver(argv) as people: await people.matches(100, 600)``."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        self.argv = argv
        self.cwd = cwd
        self.process: asyncio.subprocess.Process | None = None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process is not None else None

    async def __aenter__(self) -> Driver:
        self.process = await asyncio.create_subprocess_exec(
            *self.argv,
            cwd=self.cwd,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=64 << 20,  # a window's samples come on one line
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        process = self.process
        if process is None or process.returncode is not None:
            return
        with contextlib.suppress(GeneratorFailed, TimeoutError, OSError, ValueError):
            await asyncio.wait_for(self.call("quit"), 60)
        try:
            await asyncio.wait_for(process.wait(), 10)
        except TimeoutError:
            process.kill()
            await process.wait()

    async def call(self, command: str, **params: Any) -> dict[str, Any]:
        process = self.process
        assert process is not None and process.stdin is not None and process.stdout is not None
        process.stdin.write(json.dumps({"cmd": command, **params}).encode() + b"\n")
        await process.stdin.drain()
        line = await process.stdout.readline()
        if not line:
            error = b""
            if process.stderr is not None:
                with contextlib.suppress(TimeoutError):
                    error = await asyncio.wait_for(process.stderr.read(), 5)
            raise GeneratorFailed(f"{Path(self.argv[0]).name} exited: {error.decode()[-400:]}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise GeneratorFailed(str(answer["error"]))
        return answer

    async def matches(self, count: int, wait_s: float) -> dict[str, Any]:
        """Keep ``count`` tables in play; wait until each has its match set up."""
        return await self.call("matches", count=count, wait_s=wait_s)

    async def acting(self, on: bool) -> None:
        await self.call("acting", on=on)

    async def watchers(self, count: int, per_conn: int = 1) -> dict[str, Any]:
        """``count`` more spectators, ``per_conn`` to a connection; 0 closes them all."""
        return await self.call("watchers", count=count, per_conn=per_conn)

    async def mark(self) -> None:
        await self.call("mark")

    async def collect(self) -> dict[str, Any]:
        return await self.call("collect")

    async def status(self) -> dict[str, Any]:
        return await self.call("status")


def tabletop_people(binary: Path, gateway: str, shape: Shape, seed: int = 1) -> Driver:
    """The Go generator against a Tabletop gateway."""
    return Driver([str(binary), "-gateway", gateway, "-seed", str(seed), *shape.args()])


def peer_people(
    project: Path, socket_url: str, api_url: str, shape: Shape, seed: int = 1
) -> Driver:
    """``human.js`` against a boardgame.io server (the peer's project folder)."""
    return Driver(
        [
            "node",
            "human.js",
            socket_url,
            api_url,
            ",".join(str(n) for n in shape.seats.values()),
            str(shape.spectators),
            str(shape.think_mean_s),
            str(shape.think_min_s),
            str(shape.rpc_timeout_s),
            str(seed),
        ],
        cwd=project,
    )
