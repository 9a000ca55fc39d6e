"""The roster of services (services/common/roster.py) and what reads it agree, and k8s/base
declares the same workloads: one per service, sharded ones as StatefulSets, on the roster's
ports, with the roster's secrets. Read from the YAML files as they are (no kustomize)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from services.cli.stack import ORDER
from services.common.config import DEFAULT_PORTS, SECRETS_NEEDED
from services.common.roster import BY_NAME, NAMES, ROSTER
from services.common.serve import SERVICES
from services.common.topics import STREAMS

BASE = Path(__file__).resolve().parents[3] / "k8s" / "base"


def objects() -> list[dict[str, Any]]:
    found = []
    for path in sorted(BASE.glob("*.yaml")):
        found += [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    return found


def workloads() -> dict[str, dict[str, Any]]:
    return {
        o["metadata"]["name"]: o for o in objects() if o["kind"] in ("StatefulSet", "Deployment")
    }


def container(workload: dict[str, Any]) -> dict[str, Any]:
    containers = workload["spec"]["template"]["spec"]["containers"]
    assert len(containers) == 1
    found: dict[str, Any] = containers[0]
    return found


def config_literals() -> dict[str, str]:
    kustomization = yaml.safe_load((BASE / "kustomization.yaml").read_text())
    (config,) = [g for g in kustomization["configMapGenerator"] if g["name"] == "tabletop-config"]
    pairs = (literal.partition("=") for literal in config["literals"])
    return {name: value for name, _, value in pairs}


def test_what_reads_the_roster_lists_every_service_in_its_order() -> None:
    assert SERVICES == ORDER == NAMES and len(set(NAMES)) == len(ROSTER)
    assert list(DEFAULT_PORTS) == list(SECRETS_NEEDED) == list(NAMES)
    assert tuple(s.name for s in ROSTER if s.stream) == STREAMS
    ports = [port for s in ROSTER for port in (s.grpc_port, s.metrics_port) if port]
    assert len(ports) == len(set(ports))


def test_k8s_base_runs_one_workload_per_service_of_the_roster() -> None:
    assert set(workloads()) == set(NAMES)
    listed = yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"]
    # one file per service; beside them only the set-up Job that creates the topics
    assert sorted(listed) == sorted([*(f"{name}.yaml" for name in NAMES), "topics.yaml"])


@pytest.mark.parametrize("name", NAMES)
def test_each_workload_is_its_roster_entry(name: str) -> None:
    service, workload = BY_NAME[name], workloads()[name]
    box = container(workload)
    assert box["args"] == [name]
    # a shard is a pod of a StatefulSet: its ordinal is its shard
    assert (workload["kind"] == "StatefulSet") == service.sharded
    env = {e["name"]: e for e in box.get("env", [])}
    assert ("TABLETOP_SHARD" in env) == service.sharded
    ports = {p["name"]: p["containerPort"] for p in box["ports"]}
    assert ports.get("grpc", 0) == service.grpc_port
    assert ports["metrics"] == service.metrics_port
    assert env.get("TABLETOP_GRPC_PORT", {}).get("value", "0") == str(service.grpc_port)
    assert env["TABLETOP_METRICS_PORT"]["value"] == str(service.metrics_port)
    from_secrets = {n for n, e in env.items() if "secretKeyRef" in e.get("valueFrom", {})}
    # and every service its own Kafka user's password (tests/unit/deploy checks which)
    assert from_secrets == {f"TABLETOP_{secret}" for secret in service.secrets} | (
        {"TABLETOP_KAFKA_PASSWORD"} if service.kafka else set()
    )


def test_the_shared_config_addresses_each_called_service_on_its_port() -> None:
    literals = config_literals()
    for service in ROSTER:
        if not service.internal:
            continue
        variable = f"TABLETOP_{service.name.upper()}_ADDR" + ("S" if service.sharded else "")
        for address in literals[variable].split(","):
            host, port = address.rsplit(":", 1)
            assert host.split(".")[0].rsplit("-", 1)[0] == service.name
            assert int(port) == service.grpc_port
