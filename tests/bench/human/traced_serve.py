"""A service run with tracemalloc on, for the capacity run's ``--capacity-tracemalloc``:
where each process's memory per idle match goes, line by line.

``python -m tests.bench.human.traced_serve SERVICE DIR`` runs the service as
``services.common.serve`` does, tracing every allocation (frames: ``FRAMES``). When the
file ``DIR/SERVICE.request`` appears, holding a number N, a thread writes a snapshot to
``DIR/SERVICE-N.tracemalloc`` and removes the request (a file, not a signal: Faust's worker
takes SIGUSR1 and SIGUSR2 for itself). The capacity run asks every service after its
baseline and after its idle step, and ``compare`` tells which lines grew between the two.
Tracing slows a service several times over: its latency and CPU figures are not the
shipped code's, its memory figures are.
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
import time
import tracemalloc
from pathlib import Path

FRAMES = 8
#: how often the thread looks for a request
POLL_S = 0.5


def request(folder: Path, service: str, number: int) -> Path:
    """Ask ``service`` for snapshot ``number``; the path it will write."""
    pending = folder / f"{service}.request.tmp"
    pending.write_text(str(number))
    pending.replace(folder / f"{service}.request")  # whole, never half written
    return folder / f"{service}-{number}.tracemalloc"


def _answer(folder: Path, service: str) -> None:
    asked = folder / f"{service}.request"
    while True:
        time.sleep(POLL_S)
        with contextlib.suppress(OSError, ValueError):
            number = int(asked.read_text())
            asked.unlink()
            written = folder / f"{service}-{number}.tracemalloc"
            partial = written.with_suffix(".partial")
            gc.collect()  # what is left is held, not garbage awaiting the cycle collector
            tracemalloc.take_snapshot().dump(str(partial))
            partial.replace(written)


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
    # Imported here, not above: importing serve sets GRPC_EXPERIMENTS for the process, and
    # the bench imports this module for ``compare`` (its own gRPC client must not change).
    from services.common import serve

    service, folder = sys.argv[1], Path(sys.argv[2])
    folder.mkdir(parents=True, exist_ok=True)
    tracemalloc.start(FRAMES)
    threading.Thread(target=_answer, args=(folder, service), daemon=True).start()
    serve.main([service])


if __name__ == "__main__":
    main()
