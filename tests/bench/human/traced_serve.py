"""A service run with tracemalloc on, for the capacity run's ``--capacity-tracemalloc``:
where each process's memory per idle match goes, line by line.

``python -m tests.bench.human.traced_serve SERVICE DIR`` runs the service as
``services.common.serve`` does, tracing every allocation (frames: ``FRAMES``). On SIGUSR2
it writes a snapshot to ``DIR/SERVICE-N.tracemalloc`` (N counts from 1); the capacity run
signals every service after its baseline and after its idle step, and ``compare`` tells
which lines grew between the two. Tracing slows a service several times over: its
latency and CPU figures are not the shipped code's, its memory figures are.
"""

from __future__ import annotations

import itertools
import signal
import sys
import tracemalloc
from pathlib import Path

from services.common import serve

FRAMES = 8


def compare(before: Path, after: Path, per: int, top: int = 15) -> list[str]:
    """The lines whose memory grew most from ``before`` to ``after``, as text, with the
    growth per one of ``per`` (matches, streams) beside each."""
    old = tracemalloc.Snapshot.load(str(before))
    new = tracemalloc.Snapshot.load(str(after))
    ignored = (tracemalloc.Filter(False, tracemalloc.__file__),)
    stats = new.filter_traces(ignored).compare_to(old.filter_traces(ignored), "traceback")
    lines = []
    for stat in stats[:top]:
        if stat.size_diff <= 0:
            break
        lines.append(
            f"{stat.size_diff / 1024:9.1f} KiB ({stat.size_diff / max(per, 1):8.0f} B per) "
            f"{stat.count_diff:+7d} blocks  {where(stat.traceback)}"
        )
    return lines


def where(traceback: tracemalloc.Traceback) -> str:
    """Where a block was allocated (innermost frame) and the project's code that asked for
    it (up to three frames of services/), innermost first."""
    frames = list(reversed(traceback))  # innermost first
    ours = [f for f in frames[1:] if "/services/" in f.filename][:3]
    return " ← ".join(_short(f) for f in [frames[0], *ours])


def _short(frame: tracemalloc.Frame) -> str:
    name = frame.filename
    for marker in ("/services/", "/site-packages/", "/lib/python"):
        if marker in name:
            name = name[name.index(marker) + 1 :]
            break
    return f"{name}:{frame.lineno}"


def main() -> None:
    service, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(FRAMES)
    numbers = itertools.count(1)

    def dump(signum: int, frame: object) -> None:
        tracemalloc.take_snapshot().dump(str(folder / f"{service}-{next(numbers)}.tracemalloc"))

    signal.signal(signal.SIGUSR2, dump)
    serve.main([service])


if __name__ == "__main__":
    main()
