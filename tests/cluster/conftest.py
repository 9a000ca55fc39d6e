"""The local Kubernetes cluster with the platform deployed (`make test-cluster` brings both
up first). Every test here is marked `cluster`; `make test` leaves them out."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.kube import (
    WORKLOADS,
    Cluster,
    cluster,
    current_tag,
    kubectl,
    rollout,
    write_overlay,
)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/cluster" in str(item.path):
            item.add_marker(pytest.mark.cluster)


@pytest.fixture(scope="session")
def k8s() -> Cluster:
    """The deployed platform, with the tests' overlay (k8s/overlays/local, the deployed
    image, a bound on matches in play for tests that leave matches unfinished)."""
    found = cluster()
    kubectl("apply", "-k", str(write_overlay(current_tag())))
    for workload in WORKLOADS:
        rollout(workload)
    return found


@pytest.fixture(scope="session")
def report() -> Any:
    """Figures the tests measure, written to CLUSTER_REPORT (JSON) as they come."""
    figures: dict[str, Any] = {}
    path = os.environ.get("CLUSTER_REPORT")
    existing = Path(path) if path else None
    if existing and existing.exists():
        figures.update(json.loads(existing.read_text()))

    class Report:
        def add(self, key: str, value: Any) -> None:
            figures[key] = value
            print(f"\n{key}: {json.dumps(value)}", flush=True)
            if existing:
                existing.write_text(json.dumps(figures, indent=1) + "\n")

    return Report()
