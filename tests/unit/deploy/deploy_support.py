"""Shared helpers for the offline deploy checks: plain cached functions, imported by the test
modules (conftest.py puts this folder on sys.path)."""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, NoReturn

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[3]
K8S = ROOT / "k8s"
OVERLAYS = sorted(p.parent.name for p in (K8S / "overlays").glob("*/kustomization.yaml"))
#: CRDs kept as data beside the project, never copied into it
CRDS = ROOT.parent / "shared" / "k8s-crds"
#: the gRPC services and the projector: one workload each
SERVICES = ("gateway", "dice", "decks", "board", "scoring", "projector", "bots")
GRPC_PORTS = {
    "gateway": 50050,
    "dice": 50051,
    "decks": 50052,
    "board": 50053,
    "scoring": 50054,
    "bots": 50055,
}
METRICS_PORTS = {
    "gateway": 9100,
    "dice": 9101,
    "decks": 9102,
    "board": 9103,
    "scoring": 9104,
    "projector": 9105,
    "bots": 9106,
}

Obj = dict[str, Any]


def missing(what: str) -> NoReturn:
    """Skip on a developer's machine, fail in CI: CI must never skip these silently."""
    reason = f"{what} (install with `make tools-deploy`)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}", pytrace=False)
    pytest.skip(reason)


@functools.cache
def _lookup(name: str) -> str | None:
    override = os.environ.get(name.upper())
    if override:
        return override
    local = ROOT / ".cache" / "bin" / name
    if local.is_file() and os.access(local, os.X_OK):
        return str(local)
    return shutil.which(name)


def tool(name: str) -> str:
    """$<NAME> (e.g. KUSTOMIZE=/path), then the project's .cache/bin, then PATH."""
    path = _lookup(name)
    if path is None:
        missing(f"`{name}` is not installed")
    return path


def crd_dir() -> Path:
    if not CRDS.is_dir():
        missing(f"the CRDs are not at {CRDS}")
    return CRDS


@functools.cache
def _build(kustomize: str, overlay: str) -> tuple[Obj, ...]:
    proc = subprocess.run(
        [kustomize, "build", str(K8S / "overlays" / overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, f"kustomize build {overlay} failed:\n{proc.stderr}"
    return tuple(d for d in yaml.safe_load_all(proc.stdout) if d)


def render(overlay: str) -> tuple[Obj, ...]:
    """`kustomize build k8s/overlays/<overlay>`, parsed (once per session). Callers must not
    mutate the result."""
    return _build(tool("kustomize"), overlay)


def of_kind(objs: tuple[Obj, ...], *kinds: str) -> list[Obj]:
    return [o for o in objs if o["kind"] in kinds]


def workloads(objs: tuple[Obj, ...]) -> dict[str, Obj]:
    """The services' Deployments and StatefulSets by app.kubernetes.io/name (Kafka's is
    ``kafka(objs)``)."""
    return {
        o["metadata"]["labels"]["app.kubernetes.io/name"]: o
        for o in of_kind(objs, "Deployment", "StatefulSet")
        if o["metadata"]["name"] != "kafka"
    }


def kafka(objs: tuple[Obj, ...]) -> Obj | None:
    """The Kafka StatefulSet of k8s/components/kafka, if the overlay has it."""
    found = [o for o in of_kind(objs, "StatefulSet") if o["metadata"]["name"] == "kafka"]
    return found[0] if found else None


def config_env(objs: tuple[Obj, ...]) -> dict[str, str]:
    """The shared ConfigMap's data (its name carries a hash suffix)."""
    (cm,) = [
        o for o in of_kind(objs, "ConfigMap") if o["metadata"]["name"].startswith("tabletop-config")
    ]
    data: dict[str, str] = cm["data"]
    return data
