"""The alert rules pass `promtool check rules` and their unit tests (`promtool test rules`);
the dashboard's queries are valid PromQL over metrics the services really export."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.deploy.deploy_support import ROOT, tool

RULES = ROOT / "deploy" / "prometheus" / "rules" / "tabletop.rules.yaml"
RULE_TESTS = sorted((ROOT / "deploy" / "prometheus" / "tests").glob("*.yaml"))
DASHBOARD = ROOT / "deploy" / "grafana" / "tabletop.json"


def _exported() -> set[str]:
    """Series names the processes export, read from services/common/metrics.py (so alerts and
    the dashboard cannot drift from the code), plus Prometheus' own `up`."""
    source = (ROOT / "services" / "common" / "metrics.py").read_text()
    names = {"up"}
    for kind, name in re.findall(r'\b(Counter|Gauge|Histogram)\(\s*"([a-z_:]+)"', source):
        base = name.removesuffix("_total")
        names |= {
            "Counter": {f"{base}_total"},
            "Gauge": {name},
            "Histogram": {f"{name}_bucket", f"{name}_sum", f"{name}_count"},
        }[kind]
    return names


EXPORTED = _exported()
METRIC = re.compile(r"\b(up|grpc_server_[a-z_]+|tabletop_[a-z_]+)\b(?=\s*[{\[)]|\s*$)")


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args], capture_output=True, text=True, timeout=120, check=False
    )


def test_check_rules() -> None:
    done = _promtool("check", "rules", str(RULES))
    assert done.returncode == 0, done.stdout + done.stderr


def test_rule_unit_tests() -> None:
    assert RULE_TESTS, "no rule tests in deploy/prometheus/tests"
    done = _promtool("test", "rules", *map(str, RULE_TESTS))
    assert done.returncode == 0, done.stdout + done.stderr


def test_every_alert_has_a_unit_test() -> None:
    rules = yaml.safe_load(RULES.read_text())
    alerts = {r["alert"] for g in rules["groups"] for r in g["rules"] if "alert" in r}
    tested = {
        case["alertname"]
        for path in RULE_TESTS
        for test in yaml.safe_load(path.read_text())["tests"]
        for case in test.get("alert_rule_test", [])
        if case.get("exp_alerts")
    }
    assert alerts <= tested, f"alerts never shown firing in a test: {sorted(alerts - tested)}"


def test_rules_use_exported_metrics_only() -> None:
    rules = yaml.safe_load(RULES.read_text())
    used = {m for g in rules["groups"] for r in g["rules"] for m in METRIC.findall(r["expr"])}
    assert used <= EXPORTED, sorted(used - EXPORTED)


def _panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for p in dashboard["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return out


def _exprs() -> list[str]:
    dashboard = json.loads(DASHBOARD.read_text())
    return [t["expr"] for p in _panels(dashboard) for t in p.get("targets", [])]


def test_dashboard_shape() -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    panels = _panels(dashboard)
    ids = [p["id"] for p in panels]
    assert len(ids) == len(set(ids)), "duplicate panel ids"
    assert dashboard["uid"] and dashboard["title"]
    variables = {v["name"] for v in dashboard["templating"]["list"]}
    assert {"datasource", "namespace", "job", "game"} <= variables
    for p in panels:
        assert {"h", "w", "x", "y"} <= set(p["gridPos"]), p["title"]
        if p["type"] != "row":
            assert p["datasource"]["uid"] == "${datasource}", p["title"]
            assert p["targets"], p["title"]


def test_dashboard_covers_red_games_streams_and_lag() -> None:
    used = {m for e in _exprs() for m in METRIC.findall(e)}
    assert used <= EXPORTED, sorted(used - EXPORTED)
    assert {
        "grpc_server_handled_total",
        "grpc_server_handling_seconds_bucket",
        "tabletop_matches_active",
        "tabletop_matches_created_total",
        "tabletop_matches_finished_total",
        "tabletop_actions_total",
        "tabletop_events_appended_total",
        "tabletop_projector_events_folded_total",
        "tabletop_projector_lag_seconds",
    } <= used


def test_dashboard_queries_parse(tmp_path: Path) -> None:
    # promtool has no bare "check query": each expression becomes a recording rule.
    subst = {"$__rate_interval": "5m", "$namespace": ".*", "$job": ".*", "$game": ".*"}
    rules = []
    for i, expr in enumerate(_exprs()):
        for var, value in subst.items():
            expr = expr.replace(var, value)
        assert "$" not in expr, f"unknown dashboard variable in {expr}"
        rules.append({"record": f"dashboard:query_{i}", "expr": expr})
    path = tmp_path / "dashboard.rules.yaml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}))
    done = _promtool("check", "rules", str(path))
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("expr", ["rate(tabletop_nope_total[5m])"])
def test_metric_pattern_finds_names(expr: str) -> None:
    assert METRIC.findall(expr) == ["tabletop_nope_total"]


def test_grpc_codes_in_rules_and_dashboard_are_codes_the_services_emit() -> None:
    # the services once wrote "INTERNAL" where the rules matched "Internal": the error
    # ratio alert could not fire
    from services.common.metrics import GRPC_CODE_LABEL

    emitted = set(GRPC_CODE_LABEL.values())
    texts = [RULES.read_text(), *_exprs()]
    named = {
        code
        for text in texts
        for pattern in re.findall(r'grpc_code=~?\\?"([^"\\]+)', text)
        for code in pattern.split("|")
    }
    assert named, "the rules match on grpc_code"
    assert named <= emitted, sorted(named - emitted)
