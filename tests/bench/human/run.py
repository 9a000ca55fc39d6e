"""One capacity run against each system: Tabletop (a stack the caller started) and
boardgame.io with FlatFile storage (a server of its own)."""

from __future__ import annotations

import contextlib
import dataclasses
import resource
from collections.abc import Callable
from pathlib import Path

from services.cli.stack import ORDER, Stack

from ..boardgameio import PeerServer, PeerUnavailable
from ..procstat import kafka_pid
from .build import GeneratorUnavailable, build
from .capacity import Capacity, CapacityRun, CapacitySizes
from .generator import GeneratorFailed, Shape, peer_people, tabletop_people

#: what the capacity stack changes from the shipped settings: the count bound on matches in
#: play is off (32 by default turns the 33rd table away; issue 43 replaces it with admission
#: by load); the view lag and commands in flight admission stays as shipped
CAPACITY_ENV = {
    "TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY": "0",
    "TABLETOP_GATEWAY_MATCH_IDLE_S": "600",
}
CAPACITY_ENV_NOTE = (
    "the shipped settings except the bound on matches in play (off: "
    "`TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY=0`) and the per-address quotas and stream bounds "
    "(raised: every person connects from 127.0.0.1)"
)
PEER_SYSTEM = "boardgame.io FlatFile"
#: open files the bench asks for before it starts the capacity stack (its services
#: inherit it): one connection per person is thousands of sockets in the gateway
OPEN_FILES = 1 << 16


def raise_file_limit(wanted: int = OPEN_FILES) -> int:
    """Raise this process's open-file limit (and so its children's) towards ``wanted``:
    the hard limit too where allowed (root); the soft limit that results."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), max(hard, wanted)))
        return max(soft, wanted)
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        return hard
    return soft


def _run(system: str, shape: Shape, sizes: CapacitySizes) -> CapacityRun:
    return CapacityRun(system, dataclasses.asdict(shape), dataclasses.asdict(sizes))


async def tabletop_capacity(
    stack: Stack,
    shape: Shape,
    sizes: CapacitySizes,
    progress: Callable[[str], None],
    seed: int = 1,
    traced: Path | None = None,
) -> CapacityRun:
    """The steps against ``stack`` (started with ``CAPACITY_ENV``; with ``traced``, its
    services run by traced_serve and write their snapshots there)."""
    run = _run("tabletop", shape, sizes)
    try:
        binary = build()
    except GeneratorUnavailable as error:
        run.error = str(error)
        return run
    pids: dict[str, int | None] = {name: stack.pid(name) for name in ORDER}
    pids["kafka"] = kafka_pid()
    try:
        async with tabletop_people(binary, stack.addr("gateway"), shape, seed) as people:
            capacity = Capacity(
                people,
                pids,
                sizes,
                progress,
                stack.topic_prefix,
                traced,
                traced_names=ORDER,
                metrics={name: stack.metrics_addr(name) for name in ORDER},
            )
            await capacity.run(run, len(shape.seats))
    except GeneratorFailed as error:
        run.error = str(error)
    return run


async def peer_capacity(
    project: Path,
    shape: Shape,
    sizes: CapacitySizes,
    progress: Callable[[str], None],
    seed: int = 1,
) -> CapacityRun:
    """The same steps against boardgame.io (FlatFile) in the installed peer ``project``."""
    run = _run(PEER_SYSTEM, shape, sizes)
    try:
        async with PeerServer(project, "flatfile") as server:
            assert server.process is not None
            pids: dict[str, int | None] = {"boardgame.io server": server.process.pid}
            people = peer_people(project, server.socket_url, server.api_url, shape, seed)
            try:
                async with people:
                    await Capacity(people, pids, sizes, progress).run(run, len(shape.seats))
            finally:
                # a server gone mid-ramp fails its steps as refusals would: say why
                if (ended := server.exited()) is not None:
                    run.error = ended
    except (PeerUnavailable, GeneratorFailed, OSError) as error:
        run.error = str(error)
    return run
