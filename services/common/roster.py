"""Tabletop's services: one entry per kind of process, the one list that the configuration
(default ports, required secrets), ``tabletop-serve`` (its choices), the gRPC server (who
is internal), the topics (who owns an event stream), the Kafka users and their ACLs (who
writes and reads which stream) and the local stack (start order) read.
k8s/base declares the same workloads; tests/unit/common/test_roster.py holds it to this.

Adding a service: an entry here, a package ``services/<name>/`` whose ``app.main(config)``
runs it, and its workload in k8s/base (docs/CONVENTIONS.md).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Service:
    name: str
    #: its gRPC port (0: it serves no gRPC) and its metrics port, unless configured
    grpc_port: int
    metrics_port: int
    #: the secrets (TABLETOP_<NAME>) it refuses to start without, outside a dev stack
    secrets: tuple[str, ...] = ()
    #: only other Tabletop services may call it: every call carries the peer token
    internal: bool = False
    #: the single writer of an event stream of its own (``<name>.events``, snapshots)
    stream: bool = False
    #: one process per shard (board-N calls dice-N and decks-N): a StatefulSet
    sharded: bool = False
    #: the other services' event streams it reads (its Kafka user may read those only)
    follows: tuple[str, ...] = ()
    #: it reads or writes Kafka (a user of its own, ACLs); the bots service does not: it is a
    #: client of the gateway's public API
    kafka: bool = True


#: in start order: a service comes after the services it calls
ROSTER = (
    Service(
        "dice", 50051, 9101, ("SECRET", "PEER_TOKEN"), internal=True, stream=True, sharded=True
    ),
    Service(
        "decks", 50052, 9102, ("SECRET", "PEER_TOKEN"), internal=True, stream=True, sharded=True
    ),
    # scoring: a finished match's results, from its events
    Service(
        "scoring", 50054, 9104, ("PEER_TOKEN",), internal=True, stream=True, follows=("board",)
    ),
    # board: a finished match's seeds left unrevealed when it stopped (services/board/reveals.py)
    Service(
        "board",
        50053,
        9103,
        ("PEER_TOKEN",),
        internal=True,
        stream=True,
        sharded=True,
        follows=("dice", "decks"),
    ),
    # projector: every stream, folded into the views
    Service("projector", 0, 9105, follows=("dice", "decks", "scoring", "board")),
    Service("gateway", 50050, 9100, ("TOKEN_KEY", "PEER_TOKEN", "BOTS_TOKEN")),
    # bots: plays every seat reserved for a bot, through the gateway (services/bots/app.py)
    Service("bots", 50055, 9106, ("BOTS_TOKEN",), sharded=True, kafka=False),
)

NAMES = tuple(service.name for service in ROSTER)
#: the services with a Kafka user of their own
KAFKA_USERS = tuple(service.name for service in ROSTER if service.kafka)
BY_NAME = {service.name: service for service in ROSTER}
