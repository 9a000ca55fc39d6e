"""Every overlay renders, and every rendered object is valid: core kinds against the
Kubernetes schemas (strict: unknown fields fail), custom resources against their CRD."""

from __future__ import annotations

import copy
import functools
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.unit.deploy.deploy_support import OVERLAYS, Obj, crd_dir, render

#: newest Kubernetes the installed kubernetes-validate ships schemas for
K8S_VERSION = "1.37.0"

Schemas = dict[tuple[str, str, str], dict[str, Any]]  # (group, version, kind) -> schema


def test_overlays_exist() -> None:
    assert {"small", "local", "prod"} <= set(OVERLAYS)


def test_k8s_schema_version_is_newest_shipped() -> None:
    # Bumping kubernetes-validate should bump the version we validate against.
    newest = kubernetes_validate.utils.latest_version()
    assert newest == K8S_VERSION, f"kubernetes-validate now ships {newest}: raise K8S_VERSION"


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    """Reject unknown fields like server-side strict field validation does: the API server
    would otherwise prune a misspelt field silently."""
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if (
                node.get("type") == "object"
                and "properties" in node
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out


@functools.cache
def crd_schemas() -> Schemas:
    schemas: Schemas = {}
    for path in sorted(crd_dir().rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            if not doc or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            for version in spec["versions"]:
                if version.get("served"):
                    key = (spec["group"], version["name"], spec["names"]["kind"])
                    schemas[key] = _strict(version["schema"]["openAPIV3Schema"])
    assert schemas, f"no CRDs found under {crd_dir()}"
    return schemas


def _gvk(obj: Obj) -> tuple[str, str, str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    return group, version, obj["kind"]


def _name(obj: Obj) -> str:
    return f"{obj['kind']}/{obj['metadata']['name']}"


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_renders_with_objects(overlay: str) -> None:
    kinds = {o["kind"] for o in render(overlay)}
    assert {"Deployment", "StatefulSet", "Service", "ServiceAccount", "ConfigMap"} <= kinds


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_core_objects_match_kubernetes_schemas(overlay: str) -> None:
    schemas = crd_schemas()
    crd_groups = {g for g, _, _ in schemas}
    errors = []
    core = [o for o in render(overlay) if _gvk(o)[0] not in crd_groups]
    assert core
    for obj in core:
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{_name(obj)}: {'/'.join(map(str, e.path))}: {e.message}")
        except kubernetes_validate.SchemaNotFoundError:
            errors.append(f"{_name(obj)}: {obj['apiVersion']} is not in Kubernetes {K8S_VERSION}")
    assert not errors, "\n".join(errors)


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_custom_resources_match_their_crds(overlay: str) -> None:
    schemas = crd_schemas()
    crd_groups = {g for g, _, _ in schemas}
    custom = [o for o in render(overlay) if _gvk(o)[0] in crd_groups]
    assert custom
    errors = []
    for obj in custom:
        schema = schemas.get(_gvk(obj))
        if schema is None:
            errors.append(f"{_name(obj)}: no served CRD version for {obj['apiVersion']}")
            continue
        validator = jsonschema.Draft7Validator(schema)
        errors += [
            f"{_name(obj)}: {'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(obj)
        ]
    assert not errors, "\n".join(errors)


def test_strict_crd_validation_catches_a_misspelt_field() -> None:
    monitor = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "ServiceMonitor",
        "metadata": {"name": "m"},
        "spec": {"selector": {}, "endpoints": [{"port": "metrics", "intervall": "15s"}]},
    }
    validator = jsonschema.Draft7Validator(crd_schemas()[_gvk(monitor)])
    assert any("intervall" in e.message for e in validator.iter_errors(monitor))
