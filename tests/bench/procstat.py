"""CPU time per process (from /proc), so a load run can say where the cycles went.

Counts are clock ticks turned into seconds; a process that is gone reads as absent.
The machine-wide counters say how much CPU *other* work took during a run (noise).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
KAFKA_PIDFILE = Path(".cache/kafka/kafka.pid")


def process_cpu(pid: int) -> float | None:
    """User + system CPU seconds of ``pid`` (and its reaped children: no)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    # fields[0] is the state (field 3): utime and stime are fields 14 and 15
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_cpu() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine since boot."""
    try:
        first = Path("/proc/stat").read_text().splitlines()[0].split()
    except OSError:
        return 0.0, 0.0
    values = [int(v) for v in first[1:]]
    idle = values[3] + (values[4] if len(values) > 4 else 0)
    total = sum(values[:8])
    return (total - idle) / TICK, total / TICK


def kafka_pid(pidfile: Path = KAFKA_PIDFILE) -> int | None:
    try:
        pid = int(pidfile.read_text().strip())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


@dataclass(frozen=True)
class CpuSnapshot:
    processes: dict[str, float]
    busy: float
    total: float


def snapshot(pids: Mapping[str, int | None]) -> CpuSnapshot:
    readings = {name: process_cpu(pid) for name, pid in pids.items() if pid is not None}
    busy, total = machine_cpu()
    return CpuSnapshot({k: v for k, v in readings.items() if v is not None}, busy, total)


def usage(before: CpuSnapshot, after: CpuSnapshot) -> dict[str, float]:
    """CPU seconds per named process between two snapshots, plus ``other`` (everything
    else on the machine) and ``idle``."""
    used = {
        name: after.processes[name] - before.processes[name]
        for name in before.processes
        if name in after.processes
    }
    busy = after.busy - before.busy
    used["other"] = max(0.0, busy - sum(used.values()))
    used["idle"] = max(0.0, (after.total - before.total) - busy)
    return used


def process_rss(pid: int) -> int | None:
    """Resident memory of ``pid`` in bytes (VmRSS), None when it is gone."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return None


def rss_snapshot(pids: Mapping[str, int | None]) -> dict[str, int]:
    """Resident bytes per named process (the ones that are running)."""
    readings = {name: process_rss(pid) for name, pid in pids.items() if pid is not None}
    return {name: value for name, value in readings.items() if value is not None}
