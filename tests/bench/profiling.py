"""Profiles of the services under load: py-spy samples the running processes (no restart,
no code change) while bots play, and the collapsed stacks are summarised per process.

``python -m tests.bench --profile DIR`` adds one extra, unmeasured load run for this (the
sampler costs CPU too, so profiled runs never feed the figures).
"""

from __future__ import annotations

import asyncio
import shutil
import sys
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from .floors import stop_process

PY_SPY = Path(sys.executable).parent / "py-spy"


def py_spy() -> str | None:
    found = PY_SPY if PY_SPY.exists() else shutil.which("py-spy")
    return str(found) if found else None


async def record(
    pids: Mapping[str, int], seconds: float, out_dir: Path, rate: int = 200
) -> dict[str, Path]:
    """Sample every process in ``pids`` for ``seconds``; returns the raw (collapsed) files."""
    tool = py_spy()
    if tool is None:
        raise RuntimeError("py-spy is not installed: .venv/bin/pip install py-spy")
    await asyncio.to_thread(out_dir.mkdir, parents=True, exist_ok=True)
    outputs = {name: out_dir / f"{name}.collapsed.txt" for name in pids}
    processes = [
        await asyncio.create_subprocess_exec(
            tool,
            "record",
            "--pid",
            str(pid),
            "--duration",
            str(max(1, round(seconds))),
            "--rate",
            str(rate),
            "--format",
            "raw",
            "--nonblocking",
            "-o",
            str(outputs[name]),
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.DEVNULL,
        )
        for name, pid in pids.items()
    ]
    try:
        await asyncio.wait_for(asyncio.gather(*(p.wait() for p in processes)), seconds + 30)
    finally:
        for process in processes:
            await stop_process(process)
    return {name: path for name, path in outputs.items() if await asyncio.to_thread(path.exists)}


def _frames(line: str) -> tuple[list[str], int]:
    stack, _, count = line.rstrip().rpartition(" ")
    return stack.split(";"), int(count)


def summarise(path: Path, top: int = 15) -> str:
    """The functions holding the most samples: by self time and including callees."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        try:
            frames, count = _frames(line)
        except ValueError:
            continue
        total += count
        own[frames[-1]] += count
        for frame in set(frames):
            inclusive[frame] += count
    if not total:
        return f"{path.name}: no samples\n"
    lines = [f"{path.name}: {total} samples", "", "self time:"]
    lines += [f"  {100 * n / total:5.1f}%  {frame}" for frame, n in own.most_common(top)]
    lines += ["", "including callees:"]
    lines += [f"  {100 * n / total:5.1f}%  {frame}" for frame, n in inclusive.most_common(top)]
    return "\n".join(lines) + "\n"
