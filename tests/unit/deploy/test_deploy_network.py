"""The prod network policies allow exactly docs/DESIGN.md's flows. A small evaluator of the
rendered NetworkPolicies (pod selectors, ports by number or name) answers "may A reach B on
port P", both sides' policies considered, as a cluster would."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.unit.deploy.deploy_support import (
    GRPC_PORTS,
    METRICS_PORTS,
    Obj,
    kafka,
    of_kind,
    render,
    workloads,
)

KAFKA = "kafka"
OUTSIDE = "outside"  # a client outside the cluster / namespace


@dataclass(frozen=True)
class Pod:
    labels: dict[str, str]
    ports: dict[str, int] = field(default_factory=dict)
    namespace_labels: dict[str, str] | None = None  # None: the app's own namespace


def _pods(objs: tuple[Obj, ...]) -> dict[str, Pod]:
    pods = {
        name: Pod(
            w["spec"]["template"]["metadata"]["labels"],
            {
                p["name"]: p["containerPort"]
                for p in w["spec"]["template"]["spec"]["containers"][0]["ports"]
            },
        )
        for name, w in workloads(objs).items()
    }
    broker = kafka(objs)
    assert broker is not None
    pods[KAFKA] = Pod(
        broker["spec"]["template"]["metadata"]["labels"],
        {
            p["name"]: p["containerPort"]
            for p in broker["spec"]["template"]["spec"]["containers"][0]["ports"]
        },
    )
    (job,) = of_kind(objs, "Job")
    pods["topics"] = Pod(job["spec"]["template"]["metadata"]["labels"])
    pods[OUTSIDE] = Pod({}, {}, {"kubernetes.io/metadata.name": "elsewhere"})
    pods["prometheus"] = Pod(
        {"app.kubernetes.io/name": "prometheus"}, {}, {"kubernetes.io/metadata.name": "monitoring"}
    )
    return pods


def _selects(selector: dict[str, Any], labels: dict[str, str]) -> bool:
    assert set(selector) <= {"matchLabels"}, f"evaluator knows matchLabels only: {selector}"
    match: dict[str, str] = selector.get("matchLabels", {})
    return match.items() <= labels.items()


def _peer_matches(peer: dict[str, Any], pod: Pod) -> bool:
    assert "ipBlock" not in peer
    if "namespaceSelector" in peer:
        if pod.namespace_labels is None or not _selects(
            peer["namespaceSelector"], pod.namespace_labels
        ):
            return False
    elif pod.namespace_labels is not None:
        return False  # a bare podSelector means the policy's own namespace
    return _selects(peer.get("podSelector", {}), pod.labels)


def _port_matches(rule: dict[str, Any], target: Pod, port: int) -> bool:
    if not rule.get("ports"):
        return True
    for p in rule["ports"]:
        want = p.get("port")
        if (
            want is None
            or want == port
            or (isinstance(want, str) and target.ports.get(want) == port)
        ):
            return True
    return False


def _allowed(policies: list[Obj], pods: dict[str, Pod], src: str, dst: str, port: int) -> bool:
    a, b = pods[src], pods[dst]

    def side(pod: Pod, kind: str, peers_key: str, other: Pod) -> bool:
        if pod.namespace_labels is not None:
            return True  # not ours to police
        selecting = [
            p
            for p in policies
            if kind in p["spec"]["policyTypes"] and _selects(p["spec"]["podSelector"], pod.labels)
        ]
        if not selecting:
            return True
        return any(
            (not rule.get(peers_key) or any(_peer_matches(peer, other) for peer in rule[peers_key]))
            and _port_matches(rule, b, port)
            for p in selecting
            for rule in p["spec"].get(kind.lower(), [])
        )

    return side(a, "Egress", "to", b) and side(b, "Ingress", "from", a)


@pytest.fixture(scope="module")
def prod() -> tuple[list[Obj], dict[str, Pod]]:
    objs = render("prod")
    return of_kind(objs, "NetworkPolicy"), _pods(objs)


def test_default_deny(prod: tuple[list[Obj], dict[str, Pod]]) -> None:
    policies, _ = prod
    deny = [
        p
        for p in policies
        if p["spec"]["podSelector"] == {}
        and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
    ]
    assert deny, "no default-deny policy"


ALLOWED = [
    (OUTSIDE, "gateway", GRPC_PORTS["gateway"]),
    ("gateway", "board", GRPC_PORTS["board"]),
    ("gateway", "scoring", GRPC_PORTS["scoring"]),
    ("gateway", "dice", GRPC_PORTS["dice"]),  # EventSource, for replay
    ("gateway", "decks", GRPC_PORTS["decks"]),
    ("board", "dice", GRPC_PORTS["dice"]),
    ("board", "decks", GRPC_PORTS["decks"]),
    *[(s, KAFKA, 9092) for s in ("gateway", "dice", "decks", "board", "scoring", "projector")],
    *[("prometheus", s, port) for s, port in METRICS_PORTS.items()],
    (KAFKA, KAFKA, 9092),  # replication between brokers
    (KAFKA, KAFKA, 9093),  # the KRaft quorum
    ("topics", KAFKA, 9092),
    ("bots", "gateway", GRPC_PORTS["gateway"]),  # a client of the public API
]

DENIED = [
    (OUTSIDE, "board", GRPC_PORTS["board"]),
    (OUTSIDE, "dice", GRPC_PORTS["dice"]),
    (OUTSIDE, "gateway", METRICS_PORTS["gateway"]),
    ("scoring", "dice", GRPC_PORTS["dice"]),
    ("projector", "decks", GRPC_PORTS["decks"]),
    ("dice", "board", GRPC_PORTS["board"]),
    ("decks", "dice", GRPC_PORTS["dice"]),
    ("scoring", "board", GRPC_PORTS["board"]),
    ("projector", "gateway", GRPC_PORTS["gateway"]),
    ("board", "gateway", GRPC_PORTS["gateway"]),
    ("dice", KAFKA, 9093),  # only the client listener
    ("topics", "board", GRPC_PORTS["board"]),
    (OUTSIDE, KAFKA, 9092),
    ("gateway", "board", METRICS_PORTS["board"]),
    ("prometheus", "board", GRPC_PORTS["board"]),
    # the bots service reaches the gateway only, and nobody calls it
    ("bots", "board", GRPC_PORTS["board"]),
    ("bots", KAFKA, 9092),
    (OUTSIDE, "bots", GRPC_PORTS["bots"]),
    ("gateway", "bots", GRPC_PORTS["bots"]),
]


@pytest.mark.parametrize(("src", "dst", "port"), ALLOWED)
def test_design_flow_allowed(
    prod: tuple[list[Obj], dict[str, Pod]], src: str, dst: str, port: int
) -> None:
    policies, pods = prod
    assert _allowed(policies, pods, src, dst, port)


@pytest.mark.parametrize(("src", "dst", "port"), DENIED)
def test_other_flow_denied(
    prod: tuple[list[Obj], dict[str, Pod]], src: str, dst: str, port: int
) -> None:
    policies, pods = prod
    assert not _allowed(policies, pods, src, dst, port)
