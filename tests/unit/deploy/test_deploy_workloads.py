"""What every workload must keep: hardening, probes, named ports, identity, sizing, wiring.
These fail if someone drops a security setting or a probe from a manifest."""

from __future__ import annotations

import re
from typing import Any

import pytest

from services.cli.stack import kafka_password_name
from services.common.config import DEFAULT_WEB_PORT
from services.common.kafka_acls import ADMIN, ROLES
from tests.unit.deploy.deploy_support import (
    GRPC_PORTS,
    METRICS_PORTS,
    OVERLAYS,
    ROOT,
    SERVICES,
    Obj,
    config_env,
    kafka,
    of_kind,
    render,
    workloads,
)

#: stateless request handlers: autoscaled in prod
HPA_SERVICES = {"gateway"}
#: co-sharded single writers (services/common/config.py): shard N = board-N, dice-N, decks-N
SHARDED = ("board", "dice", "decks")
#: single writer with a fixed transactional id: exactly one pod, never two at once
SINGLETONS = {"scoring"}
#: the Secret's keys and who reads each (services/common/config.py SECRETS_NEEDED)
SECRET_KEYS = {
    "TABLETOP_SECRET": ("secret", {"dice", "decks"}),
    "TABLETOP_TOKEN_KEY": ("token-key", {"gateway"}),
    "TABLETOP_PEER_TOKEN": ("peer-token", {"gateway", "dice", "decks", "board", "scoring"}),
    "TABLETOP_BOTS_TOKEN": ("bots-token", {"gateway", "bots"}),
}
#: the Kafka users' passwords, by user (k8s/README.md)
KAFKA_SECRET = "tabletop-kafka"
RECOMMENDED_LABELS = (
    "app.kubernetes.io/name",
    "app.kubernetes.io/part-of",
    "app.kubernetes.io/component",
)

by_overlay = pytest.mark.parametrize("overlay", OVERLAYS)
by_overlay_and_service = pytest.mark.parametrize(
    ("overlay", "service"), [(o, s) for o in OVERLAYS for s in SERVICES]
)


def _workload(overlay: str, service: str) -> Obj:
    found = workloads(render(overlay))
    assert service in found, f"{overlay}: no Deployment/StatefulSet for {service}"
    return found[service]


def _pod(overlay: str, service: str) -> dict[str, Any]:
    spec: dict[str, Any] = _workload(overlay, service)["spec"]["template"]["spec"]
    return spec


def _container(overlay: str, service: str) -> dict[str, Any]:
    containers = _pod(overlay, service)["containers"]
    assert [c["name"] for c in containers] == [service]
    container: dict[str, Any] = containers[0]
    return container


def _env(container: dict[str, Any]) -> dict[str, Any]:
    return {e["name"]: e for e in container.get("env", [])}


@by_overlay_and_service
def test_pod_runs_non_root_with_runtime_default_seccomp(overlay: str, service: str) -> None:
    sc = _pod(overlay, service)["securityContext"]
    assert sc["runAsNonRoot"] is True
    assert sc["runAsUser"] == 10001
    assert sc["seccompProfile"] == {"type": "RuntimeDefault"}


@by_overlay_and_service
def test_container_is_locked_down(overlay: str, service: str) -> None:
    pod = _pod(overlay, service)
    for c in pod["containers"] + pod.get("initContainers", []):
        sc = c["securityContext"]
        assert sc["allowPrivilegeEscalation"] is False, c["name"]
        assert sc["readOnlyRootFilesystem"] is True, c["name"]
        assert sc["capabilities"]["drop"] == ["ALL"], c["name"]
        assert "add" not in sc["capabilities"], c["name"]
        assert sc.get("privileged", False) is False, c["name"]
        assert sc["runAsNonRoot"] is True, c["name"]
        assert sc["runAsUser"] == 10001, c["name"]
        assert sc["seccompProfile"] == {"type": "RuntimeDefault"}, c["name"]


@by_overlay_and_service
def test_tmp_is_a_writable_empty_dir(overlay: str, service: str) -> None:
    pod = _pod(overlay, service)
    mounts = {m["mountPath"]: m["name"] for m in _container(overlay, service)["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert "/tmp" in mounts
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert not any("hostPath" in v for v in pod["volumes"])


@by_overlay_and_service
def test_probes_on_numeric_ports(overlay: str, service: str) -> None:
    c = _container(overlay, service)
    for kind in ("startupProbe", "livenessProbe", "readinessProbe"):
        probe = c[kind]
        if service in GRPC_PORTS:
            # native gRPC probe against grpc.health.v1; the port must be a number
            assert probe["grpc"]["port"] == GRPC_PORTS[service], kind
        else:
            assert probe["httpGet"] == {"path": "/metrics", "port": METRICS_PORTS[service]}, kind


@by_overlay_and_service
def test_named_ports_and_port_env(overlay: str, service: str) -> None:
    c = _container(overlay, service)
    ports = {p["name"]: p["containerPort"] for p in c["ports"]}
    env = _env(c)
    expected = {"metrics": METRICS_PORTS[service]}
    if service in GRPC_PORTS:
        expected["grpc"] = GRPC_PORTS[service]
        assert env["TABLETOP_GRPC_PORT"]["value"] == str(GRPC_PORTS[service])
    if service == "gateway":  # the page and gRPC-Web
        expected["web"] = DEFAULT_WEB_PORT
        assert env["TABLETOP_WEB_PORT"]["value"] == str(DEFAULT_WEB_PORT)
    assert ports == expected
    assert env["TABLETOP_METRICS_PORT"]["value"] == str(METRICS_PORTS[service])


@by_overlay_and_service
def test_resources_requested_and_limited(overlay: str, service: str) -> None:
    resources = _container(overlay, service)["resources"]
    for section in ("requests", "limits"):
        assert {"cpu", "memory"} <= set(resources[section]), section


@by_overlay_and_service
def test_image_command_and_labels(overlay: str, service: str) -> None:
    w = _workload(overlay, service)
    c = _container(overlay, service)
    assert c["args"] == [service]  # the image's ENTRYPOINT is tabletop-serve
    name, _, tag = c["image"].rpartition(":")
    assert name and tag and tag != "latest", c["image"]
    for labels in (w["metadata"]["labels"], w["spec"]["template"]["metadata"]["labels"]):
        assert all(k in labels for k in RECOMMENDED_LABELS), labels
        assert labels["app.kubernetes.io/name"] == service
        assert labels["app.kubernetes.io/part-of"] == "tabletop"


@by_overlay_and_service
def test_own_service_account_without_token(overlay: str, service: str) -> None:
    objs = render(overlay)
    pod = _pod(overlay, service)
    assert pod["serviceAccountName"] == service
    assert pod["automountServiceAccountToken"] is False
    accounts = {o["metadata"]["name"]: o for o in of_kind(objs, "ServiceAccount")}
    assert accounts[service]["automountServiceAccountToken"] is False


@by_overlay_and_service
def test_grace_period_outlasts_the_drain(overlay: str, service: str) -> None:
    pod = _pod(overlay, service)
    grace = float(config_env(render(overlay))["TABLETOP_SHUTDOWN_GRACE_SECONDS"])
    pre_stop = _container(overlay, service).get("lifecycle", {}).get("preStop", {})
    sleep = pre_stop.get("sleep", {}).get("seconds", 0)
    assert pod["terminationGracePeriodSeconds"] > grace + sleep


@by_overlay_and_service
def test_secret_only_where_needed(overlay: str, service: str) -> None:
    env = _env(_container(overlay, service))
    for name, (key, readers) in SECRET_KEYS.items():
        if service in readers:
            ref = env[name]["valueFrom"]["secretKeyRef"]
            assert ref["name"].startswith("tabletop-secret") and ref["key"] == key
        else:
            assert name not in env
        assert name not in config_env(render(overlay))


@by_overlay_and_service
def test_each_service_connects_to_kafka_as_itself(overlay: str, service: str) -> None:
    """Its own user (the default name, ``<topic prefix><service>``), its own password; the
    bots service, a client of the gateway, has none."""
    env = _env(_container(overlay, service))
    if service not in ROLES:
        assert "TABLETOP_KAFKA_PASSWORD" not in env
        return
    ref = env["TABLETOP_KAFKA_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert (ref["name"], ref["key"]) == (KAFKA_SECRET, service)
    assert "TABLETOP_KAFKA_USERNAME" not in env
    assert not {k for k in config_env(render(overlay)) if k.startswith("TABLETOP_KAFKA_PASS")}


@by_overlay
def test_the_topics_job_sets_every_kafka_user_up_as_admin(overlay: str) -> None:
    (job,) = [
        j for j in of_kind(render(overlay), "Job") if j["metadata"]["name"] == "tabletop-topics"
    ]
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert "tabletop admin kafka-users" in " ".join(container["args"])
    env = _env(container)
    assert env["TABLETOP_KAFKA_ADMIN_USERNAME"]["value"] == ADMIN
    refs = {
        name: (e["valueFrom"]["secretKeyRef"]["name"], e["valueFrom"]["secretKeyRef"]["key"])
        for name, e in env.items()
        if "valueFrom" in e
    }
    assert refs == {
        "TABLETOP_KAFKA_ADMIN_PASSWORD": (KAFKA_SECRET, ADMIN),
        **{kafka_password_name(role): (KAFKA_SECRET, role) for role in ROLES},
    }


@by_overlay
def test_kafka_takes_only_authenticated_clients_and_allows_only_acls(overlay: str) -> None:
    objs = render(overlay)
    (config,) = [
        c for c in of_kind(objs, "ConfigMap") if c["metadata"]["name"].startswith("kafka-config")
    ]
    broker = kafka(objs)
    assert broker is not None
    (container,) = broker["spec"]["template"]["spec"]["containers"]
    env = _env(container)
    props = dict(
        line.split("=", 1)
        for line in config["data"]["server.properties"].splitlines()
        if "=" in line and not line.startswith("#")
    )
    props |= {
        k[len("KAFKA_CFG_") :].lower().replace("_", "."): e["value"]
        for k, e in env.items()
        if k.startswith("KAFKA_CFG_")
    }
    protocols = dict(p.split(":") for p in props["listener.security.protocol.map"].split(","))
    for listener in props["listeners"].split(","):
        assert protocols[listener.split(":")[0]] == "SASL_PLAINTEXT", listener
    for name in {listener.split(":")[0] for listener in props["listeners"].split(",")}:
        mechanisms = props[f"listener.name.{name.lower()}.sasl.enabled.mechanisms"]
        assert mechanisms == ("PLAIN" if name == "CONTROLLER" else "SCRAM-SHA-512"), name
    assert props["authorizer.class.name"].endswith("StandardAuthorizer")
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert props["super.users"] == f"User:broker;User:{ADMIN}"
    for name, key in (("KAFKA_BROKER_PASSWORD", "broker"), ("KAFKA_ADMIN_PASSWORD", ADMIN)):
        ref = env[name]["valueFrom"]["secretKeyRef"]
        assert (ref["name"], ref["key"]) == (KAFKA_SECRET, key)


def test_the_local_cluster_makes_a_password_for_every_kafka_user() -> None:
    script = (ROOT / "deploy/cluster/deploy.sh").read_text()
    (listed,) = re.findall(r"users=\(([^)]*)\)", script)
    assert sorted(listed.split()) == sorted(("broker", ADMIN, *ROLES))


def test_every_service_gets_the_secrets_config_requires() -> None:
    from services.common.config import SECRETS_NEEDED

    for service, names in SECRETS_NEEDED.items():
        for name in names:
            assert service in SECRET_KEYS[f"TABLETOP_{name}"][1], (service, name)


@by_overlay_and_service
def test_service_with_named_ports(overlay: str, service: str) -> None:
    objs = render(overlay)
    pod_labels = _workload(overlay, service)["spec"]["template"]["metadata"]["labels"]
    matching = [
        s for s in of_kind(objs, "Service") if s["spec"]["selector"].items() <= pod_labels.items()
    ]
    assert len(matching) == 1, f"{service}: want exactly one Service, got {len(matching)}"
    ports = {p["name"]: p for p in matching[0]["spec"]["ports"]}
    assert ports["metrics"]["port"] == METRICS_PORTS[service]
    assert ports["metrics"]["targetPort"] == "metrics"
    if service in GRPC_PORTS:
        assert ports["grpc"]["port"] == GRPC_PORTS[service]
        assert ports["grpc"]["targetPort"] == "grpc"


@by_overlay
def test_shards_are_statefulsets_in_step(overlay: str) -> None:
    objs = render(overlay)
    env = config_env(objs)
    counts = set()
    for service in SHARDED:
        w = _workload(overlay, service)
        assert w["kind"] == "StatefulSet", service
        headless = f"{service}-headless"
        assert w["spec"]["serviceName"] == headless
        (svc,) = [s for s in of_kind(objs, "Service") if s["metadata"]["name"] == headless]
        assert svc["spec"]["clusterIP"] == "None"
        # the pod's ordinal is its shard
        shard = _env(_container(overlay, service))["TABLETOP_SHARD"]["valueFrom"]["fieldRef"]
        assert shard["fieldPath"] == "metadata.labels['apps.kubernetes.io/pod-index']"
        # every shard listed once, in ordinal order, as many as there are pods
        replicas = w["spec"]["replicas"]
        addrs = env[f"TABLETOP_{service.upper()}_ADDRS"].split(",")
        assert addrs == [f"{service}-{i}.{headless}:{GRPC_PORTS[service]}" for i in range(replicas)]
        counts.add(replicas)
    assert len(counts) == 1, f"board, dice and decks must have the same shard count: {counts}"
    assert "TABLETOP_SHARDS" not in env  # derived from the address lists: one knob less


@by_overlay
def test_single_writers_run_alone(overlay: str) -> None:
    for service in SINGLETONS:
        w = _workload(overlay, service)
        assert w["spec"]["replicas"] == 1
        assert w["spec"]["strategy"] == {"type": "Recreate"}


@by_overlay
def test_config_wiring(overlay: str) -> None:
    env = config_env(render(overlay))
    assert env["TABLETOP_GRPC_HOST"] == "0.0.0.0"
    assert env["TABLETOP_SCORING_ADDR"] == f"scoring:{GRPC_PORTS['scoring']}"
    objs = render(overlay)
    broker = kafka(objs)
    assert broker is not None
    (bootstrap,) = [
        s for s in of_kind(objs, "Service") if s["metadata"]["name"] == "kafka-bootstrap"
    ]
    assert (
        env["TABLETOP_KAFKA_BOOTSTRAP"]
        == f"kafka-bootstrap:{bootstrap['spec']['ports'][0]['port']}"
    )
    assert (
        bootstrap["spec"]["selector"].items()
        <= broker["spec"]["template"]["metadata"]["labels"].items()
    )
    # docs/DESIGN.md: topics are created explicitly
    (config,) = [
        c for c in of_kind(objs, "ConfigMap") if c["metadata"]["name"].startswith("kafka-config")
    ]
    assert "auto.create.topics.enable=false" in config["data"]["server.properties"].splitlines()


@by_overlay
def test_every_variable_is_one_the_services_read(overlay: str) -> None:
    # services/common/config.py reads TABLETOP_<NAME> through _env("NAME") / _addrs("NAME"):
    # a misspelt or renamed variable would be silently ignored, so compare with the code.
    source = (ROOT / "services" / "common" / "config.py").read_text()
    known = {f"TABLETOP_{n}" for n in re.findall(r'_(?:env|addrs|secret)\("([A-Z_]+)"', source)}
    objs = render(overlay)
    used = {k for k in config_env(objs) if k.startswith("TABLETOP_")}
    for w in workloads(objs).values():
        for c in w["spec"]["template"]["spec"]["containers"]:
            used |= {e["name"] for e in c.get("env", []) if e["name"].startswith("TABLETOP_")}
    assert used <= known, f"not read by services/common/config.py: {sorted(used - known)}"


@by_overlay
def test_monitored(overlay: str) -> None:
    objs = render(overlay)
    monitors = of_kind(objs, "ServiceMonitor", "PodMonitor")
    if not monitors:
        pytest.skip(f"{overlay} has no monitoring component")
    services = of_kind(objs, "Service")
    for service in SERVICES:
        scraped = [
            m
            for m in of_kind(objs, "ServiceMonitor")
            for s in services
            if s["metadata"]["labels"].get("app.kubernetes.io/name") == service
            and m["spec"]["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()
            and any(e["port"] == "metrics" for e in m["spec"]["endpoints"])
        ]
        assert len(scraped) == 1, f"{service}: scraped by {len(scraped)} ServiceMonitors"
        # job = service name: the alerts and the dashboard rely on it
        assert scraped[0]["spec"]["jobLabel"] == "app.kubernetes.io/name"
    assert of_kind(objs, "PrometheusRule")


def test_small_runs_one_of_each_and_brings_no_secret() -> None:
    objs = render("small")
    for service, w in workloads(objs).items():
        assert w["spec"]["replicas"] == 1, service
    broker = kafka(objs)
    assert broker is not None and broker["spec"]["replicas"] == 1
    assert not of_kind(objs, "Secret"), "the Secret is created out of band, never rendered"


def test_local_is_small_with_what_this_machine_needs() -> None:
    def named(objs: tuple[Obj, ...]) -> list[tuple[str, str]]:
        # generated ConfigMaps carry a content hash: compare them by name only
        return sorted(
            (o["kind"], re.sub(r"-[a-z0-9]{10}$", "", o["metadata"]["name"])) for o in objs
        )

    small, local = render("small"), render("local")
    assert named(local) == named(small), "the local overlay adds or drops objects"
    (gateway,) = [s for s in of_kind(local, "Service") if s["metadata"]["name"] == "gateway"]
    assert gateway["spec"]["type"] == "NodePort"
    assert {p["name"]: p["nodePort"] for p in gateway["spec"]["ports"] if "nodePort" in p} == {
        "grpc": 30050,
        "web": 30080,
    }
    for w in workloads(local).values():
        image = w["spec"]["template"]["spec"]["containers"][0]["image"]
        assert image.startswith("localhost/tabletop:"), image


def test_kafka_is_hardened_and_keeps_its_data() -> None:
    for overlay in OVERLAYS:
        broker = kafka(render(overlay))
        assert broker is not None, overlay
        pod = broker["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        assert pod["securityContext"]["runAsNonRoot"] is True
        assert pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"]
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
        assert container["securityContext"]["capabilities"]["drop"] == ["ALL"]
        assert {"startupProbe", "readinessProbe", "livenessProbe"} <= set(container)
        # its log lives on a claim, not in the pod: a deleted pod loses nothing
        (claim,) = broker["spec"]["volumeClaimTemplates"]
        mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
        assert mounts[claim["metadata"]["name"]] == "/var/lib/kafka"
        env = {e["name"]: e.get("value", "") for e in container["env"]}
        voters = env["KAFKA_CONTROLLER_QUORUM_VOTERS"].split(",")
        assert [v.split("@")[0] for v in voters] == [
            str(n) for n in range(broker["spec"]["replicas"])
        ]


def test_prod_brings_no_secret_and_runs_several_replicas() -> None:
    objs = render("prod")
    assert not of_kind(objs, "Secret"), "prod's Secret is created out of band, never rendered"
    hpas = {
        h["spec"]["scaleTargetRef"]["name"]: h for h in of_kind(objs, "HorizontalPodAutoscaler")
    }
    assert set(hpas) == HPA_SERVICES
    for service, w in workloads(objs).items():
        if service in HPA_SERVICES:
            # the HPA owns the count; a replicas field would fight it on every apply
            assert "replicas" not in w["spec"], service
            assert hpas[service]["spec"]["minReplicas"] >= 2
            assert w["kind"] == "Deployment"
        elif service not in SINGLETONS:
            assert w["spec"]["replicas"] >= 2, service


def test_prod_has_a_disruption_budget_per_workload() -> None:
    objs = render("prod")
    pdbs = of_kind(objs, "PodDisruptionBudget")
    for service, w in workloads(objs).items():
        labels = w["spec"]["template"]["metadata"]["labels"]
        covering = [
            p for p in pdbs if p["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(covering) == 1, service


@by_overlay
def test_the_bots_replicas_know_how_many_they_are(overlay: str) -> None:
    """Replicas split the matches by TABLETOP_BOTS_REPLICAS: fewer and some matches' bots
    would not move, more and two replicas would play one seat."""
    bots = _workload(overlay, "bots")
    env = _env(_container(overlay, "bots"))
    assert int(env["TABLETOP_BOTS_REPLICAS"]["value"]) == bots["spec"].get("replicas", 1)
