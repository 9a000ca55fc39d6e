"""Configuration from environment variables (12-factor), one frozen object per process."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass

from services.common.topics import DEFAULT_PARTITIONS

DEFAULT_PORTS = {
    # service: (gRPC port, metrics port)
    "gateway": (50050, 9100),
    "dice": (50051, 9101),
    "decks": (50052, 9102),
    "board": (50053, 9103),
    "scoring": (50054, 9104),
    "projector": (0, 9105),
}


def _env(name: str, default: str) -> str:
    return os.environ.get(f"TABLETOP_{name}", default)


def _addrs(name: str, service: str) -> tuple[str, ...]:
    default = f"127.0.0.1:{DEFAULT_PORTS[service][0]}"
    return tuple(a.strip() for a in _env(name, default).split(",") if a.strip())


@dataclass(frozen=True)
class Config:
    service: str
    kafka_bootstrap: str
    topic_prefix: str
    partitions: int
    replication_factor: int
    grpc_host: str
    grpc_port: int
    metrics_port: int
    #: one address per shard: board-i calls dice-i and decks-i (co-sharded single writers)
    dice_addrs: tuple[str, ...]
    decks_addrs: tuple[str, ...]
    board_addrs: tuple[str, ...]
    scoring_addr: str
    #: this process's shard (board, dice, decks) and how many there are
    shard: int
    shards: int
    secret: bytes
    log_level: str
    #: scratch space (Faust's table data); /tmp is the writable emptyDir in Kubernetes
    data_dir: str
    shutdown_grace_seconds: float
    #: a stable identity of this replica (its pod name), for static Kafka group membership
    instance_id: str = ""

    @classmethod
    def from_env(cls, service: str) -> Config:
        grpc_port, metrics_port = DEFAULT_PORTS.get(service, (0, 0))
        shard = _env("SHARD", "")
        if not shard:
            # A StatefulSet pod is named <service>-N: its ordinal is its shard.
            tail = os.environ.get("HOSTNAME", "").rsplit("-", 1)[-1]
            shard = tail if tail.isdigit() else "0"
        board_addrs = _addrs("BOARD_ADDRS", "board")
        return cls(
            service=service,
            kafka_bootstrap=_env("KAFKA_BOOTSTRAP", "127.0.0.1:9092"),
            topic_prefix=_env("TOPIC_PREFIX", ""),
            partitions=int(_env("TOPIC_PARTITIONS", str(DEFAULT_PARTITIONS))),
            replication_factor=int(_env("TOPIC_REPLICATION", "1")),
            grpc_host=_env("GRPC_HOST", "127.0.0.1"),
            grpc_port=int(_env("GRPC_PORT", str(grpc_port))),
            metrics_port=int(_env("METRICS_PORT", str(metrics_port))),
            dice_addrs=_addrs("DICE_ADDRS", "dice"),
            decks_addrs=_addrs("DECKS_ADDRS", "decks"),
            board_addrs=board_addrs,
            scoring_addr=_env("SCORING_ADDR", f"127.0.0.1:{DEFAULT_PORTS['scoring'][0]}"),
            shard=int(shard),
            shards=int(_env("SHARDS", str(len(board_addrs)))),
            # Only dice and decks use it: their per-match seeds derive from it.
            secret=_env("SECRET", "local-development-secret").encode(),
            log_level=_env("LOG_LEVEL", "info"),
            data_dir=_env("DATA_DIR", os.path.join(tempfile.gettempdir(), "tabletop")),
            shutdown_grace_seconds=float(_env("SHUTDOWN_GRACE_SECONDS", "10")),
            instance_id=_env("INSTANCE_ID", ""),
        )
