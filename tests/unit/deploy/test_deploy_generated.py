"""Manifests stay in step with their single sources: the topics Job creates the topics of
services/common/topics.py with the services' own settings; the PrometheusRule is generated
from deploy/prometheus/rules/."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType
from typing import Any

import pytest
import yaml

from services.common.topics import topic_specs
from tests.unit.deploy.deploy_support import OVERLAYS, ROOT, config_env, of_kind, render


def _load(name: str) -> ModuleType:
    path = ROOT / "deploy" / "k8s" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"tabletop_deploy_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("generator", ["gen_rules"])
def test_committed_output_is_fresh(generator: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = _load(generator).main(["--check"])
    assert status == 0, (
        f"stale output: run `.venv/bin/python deploy/k8s/{generator}.py`\n{capsys.readouterr().err}"
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_topics_job_creates_the_services_topics(overlay: str) -> None:
    objs = render(overlay)
    (job,) = of_kind(objs, "Job")
    (container,) = job["spec"]["template"]["spec"]["containers"]
    # the platform's own tool, reading topics.py, with the ConfigMap every service reads
    assert "tabletop admin create-topics" in " ".join(container["command"] + container["args"])
    (config,) = [e["configMapRef"]["name"] for e in container["envFrom"]]
    assert config.startswith("tabletop-config")
    assert job["spec"]["template"]["spec"]["restartPolicy"] == "Never"
    # it is gone once done, so the next apply (a new version) runs it again
    assert job["spec"]["ttlSecondsAfterFinished"] == 0
    env = config_env(objs)
    assert topic_specs(env["TABLETOP_TOPIC_PREFIX"], int(env["TABLETOP_TOPIC_PARTITIONS"]))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_prometheus_rule_is_the_rules_file(overlay: str) -> None:
    rules: dict[str, Any] = yaml.safe_load(
        (ROOT / "deploy" / "prometheus" / "rules" / "tabletop.rules.yaml").read_text()
    )
    rendered = of_kind(render(overlay), "PrometheusRule")
    if not rendered:
        pytest.skip(f"{overlay} has no monitoring component")
    (rule,) = rendered
    assert rule["spec"]["groups"] == rules["groups"]
