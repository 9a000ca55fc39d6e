"""A private single-node Kafka broker for the fault suite, so it can be killed freely.

It reuses the jars of the shared broker (.cache/kafka/libs, one symlink per jar) with its
own KAFKA_HOME, data and ports; the shared broker on 127.0.0.1:9092 is never touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from services.cli.stack import broker_admin, free_ports
from services.common.kafka_access import KafkaAccess

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "deploy/kafka/kafka.sh"


@dataclass
class PrivateKafka:
    home: Path
    port: int
    controller_port: int

    @classmethod
    def create(cls, home: Path, jars: Path = ROOT / ".cache/kafka/libs") -> PrivateKafka:
        libs = home / "libs"
        libs.mkdir(parents=True, exist_ok=True)
        found = sorted(jars.glob("*.jar"))
        if not found:
            raise RuntimeError(f"no Kafka jars in {jars}: run `make kafka` once first")
        for jar in found:
            link = libs / jar.name
            if not link.exists():
                link.symlink_to(jar.resolve())
        (libs / ".complete").touch()  # kafka.sh fetches nothing when this is fresh
        return cls(home, *free_ports(2))

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def admin(self) -> KafkaAccess:
        """The broker as its admin (the password kafka.sh made when it formatted it)."""
        return broker_admin(self.home, self.bootstrap)

    def _env(self) -> dict[str, str]:
        return {
            **os.environ,
            "KAFKA_HOME": str(self.home),
            "KAFKA_PORT": str(self.port),
            "KAFKA_CONTROLLER_PORT": str(self.controller_port),
        }

    def start(self) -> None:
        subprocess.run([str(SCRIPT), "start"], env=self._env(), check=True, capture_output=True)

    def stop(self) -> None:
        subprocess.run([str(SCRIPT), "stop"], env=self._env(), check=False, capture_output=True)

    def pid(self) -> int | None:
        try:
            pid = int((self.home / "kafka.pid").read_text())
            os.kill(pid, 0)
        except (FileNotFoundError, ValueError, ProcessLookupError):
            return None
        return pid

    def kill(self) -> None:
        """SIGKILL the broker (no clean shutdown) and wait until it is gone."""
        pid = self.pid()
        if pid is None:
            return
        os.kill(pid, signal.SIGKILL)
        while self.pid() is not None:
            time.sleep(0.05)
        # kafka.sh waits for "Kafka Server started" in the log: start the next one afresh.
        (self.home / "kafka.log").unlink(missing_ok=True)
