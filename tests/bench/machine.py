"""What the figures were measured on."""

from __future__ import annotations

import datetime as dt
import os
import platform
import re
import subprocess
from pathlib import Path
from typing import Any

import aiokafka
import grpc

KAFKA_LIBS = Path(".cache/kafka/libs")


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def kafka_version(libs: Path = KAFKA_LIBS) -> str:
    """The broker's version, from its jar name (kafka_2.13-X.Y.Z.jar)."""
    try:
        for jar in sorted(libs.glob("kafka_*.jar")):
            found = re.fullmatch(r"kafka_[\d.]+-([\d.]+)\.jar", jar.name)
            if found:
                return found.group(1)
    except OSError:
        pass
    return "unknown"


def load_average() -> list[float]:
    try:
        return [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]]
    except (OSError, ValueError):
        return []


def revision() -> str:
    """The code measured: the git commit (``+dirty`` with local changes), or what the
    environment says (TABLETOP_BENCH_REVISION) when run from an exported tree."""
    given = os.environ.get("TABLETOP_BENCH_REVISION")
    if given:
        return given
    try:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", "services", "protos"],
            capture_output=True,
            text=True,
            timeout=10,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return f"{commit}+dirty" if dirty else commit


def machine_info() -> dict[str, Any]:
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "nproc": os.cpu_count(),
        "cpu_model": cpu_model(),
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "kafka": kafka_version(),
        "aiokafka": aiokafka.__version__,
        "grpcio": grpc.__version__,
        "platform": platform.platform(),
        "load_average_at_start": load_average(),
        "revision": revision(),
    }
