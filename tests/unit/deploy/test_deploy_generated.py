"""Generated manifests stay in step with their single sources: KafkaTopics with
services/common/topics.py, the PrometheusRule with deploy/prometheus/rules/."""

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


@pytest.mark.parametrize("generator", ["gen_topics", "gen_rules"])
def test_committed_output_is_fresh(generator: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = _load(generator).main(["--check"])
    assert status == 0, (
        f"stale output: run `.venv/bin/python deploy/k8s/{generator}.py`\n{capsys.readouterr().err}"
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_kafka_topics_match_topics_py(overlay: str) -> None:
    objs = render(overlay)
    topics = of_kind(objs, "KafkaTopic")
    if not topics:
        pytest.skip(f"{overlay} has no kafka component")
    env = config_env(objs)
    # the topics the services will use with this overlay's configuration
    expected = {
        s.name: (s.partitions, s.config)
        for s in topic_specs(env["TABLETOP_TOPIC_PREFIX"], int(env["TABLETOP_TOPIC_PARTITIONS"]))
    }
    got = {t["spec"]["topicName"]: (t["spec"]["partitions"], t["spec"]["config"]) for t in topics}
    assert got == expected
    (kafka,) = of_kind(objs, "Kafka")
    for t in topics:
        assert t["metadata"]["labels"]["strimzi.io/cluster"] == kafka["metadata"]["name"]
    for pool in of_kind(objs, "KafkaNodePool"):
        assert pool["metadata"]["labels"]["strimzi.io/cluster"] == kafka["metadata"]["name"]


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
