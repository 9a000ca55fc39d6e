"""The manifests (k8s/, every overlay), the image (deploy/Dockerfile) and the container smoke
test's `podman run` (deploy/image/run_spec.py) agree: command, ports, user, environment,
probes, writable paths, grace period. tests/integration/test_image.py checks the built image's
metadata against the same Dockerfile reading."""

from __future__ import annotations

import re

import pytest

from deploy.image import metadata
from deploy.image.run_spec import ContainerSpec, container_specs, local_env, podman_args
from services.common.config import DEFAULT_PORTS, DEFAULT_WEB_PORT
from services.common.kafka_access import KafkaAccess
from services.common.serve import SERVICES as SERVE_CHOICES
from tests.unit.deploy.deploy_support import OVERLAYS, ROOT, SERVICES, render

IMAGE = metadata.from_dockerfile()


def config_reads() -> set[str]:
    """Every TABLETOP_* name services/common/config.py reads (through _env, _addrs or _secret)."""
    source = (ROOT / "services" / "common" / "config.py").read_text()
    return {f"TABLETOP_{n}" for n in re.findall(r"_(?:env|addrs|secret)\(\s*\"([A-Z_]+)\"", source)}


@pytest.fixture(scope="module", params=OVERLAYS)
def specs(request: pytest.FixtureRequest) -> dict[str, ContainerSpec]:
    return container_specs(render(request.param))


def test_config_reader_is_parsed() -> None:
    # guards the regex above: if it found nothing, the subset check below would be vacuous
    assert {"TABLETOP_KAFKA_BOOTSTRAP", "TABLETOP_GRPC_PORT", "TABLETOP_BOARD_ADDRS"} <= (
        config_reads()
    )


def test_every_service_runs_the_image_entrypoint_with_its_name(
    specs: dict[str, ContainerSpec],
) -> None:
    assert set(specs) == set(SERVICES) == set(SERVE_CHOICES)
    assert IMAGE.entrypoint == ("tabletop-serve",)
    for service, spec in specs.items():
        assert spec.command is None, f"{service} overrides the image's ENTRYPOINT"
        assert spec.args == (service,)
        assert spec.image.rsplit("/", 1)[-1].split(":")[0] == "tabletop"


def test_ports_agree_with_the_image_and_the_code(specs: dict[str, ContainerSpec]) -> None:
    labelled = IMAGE.service_ports()
    everyone: list[int] = []
    for service, spec in specs.items():
        grpc, metrics = DEFAULT_PORTS[service]
        web = {"web": DEFAULT_WEB_PORT} if service == "gateway" else {}
        assert spec.ports == labelled[service]
        assert spec.ports == ({"grpc": grpc} if grpc else {}) | {"metrics": metrics} | web
        assert set(spec.ports.values()) <= IMAGE.exposed
        # the service listens where the manifest says: its port variables name these ports
        assert spec.env.get("TABLETOP_GRPC_PORT", "0") == str(grpc)
        assert spec.env["TABLETOP_METRICS_PORT"] == str(metrics)
        if web:
            assert spec.env["TABLETOP_WEB_PORT"] == str(DEFAULT_WEB_PORT)
        everyone += spec.ports.values()
    # run_spec maps ports by number: no two containers may share one
    assert len(everyone) == len(set(everyone))


def test_probes_ask_the_ports_the_service_listens_on(specs: dict[str, ContainerSpec]) -> None:
    for service, spec in specs.items():
        assert set(spec.probes) == {"startup", "liveness", "readiness"}, service
        for probe in spec.probes.values():
            if "grpc" in spec.ports:
                assert (probe.kind, probe.port) == ("grpc", spec.ports["grpc"]), service
            else:
                assert (probe.kind, probe.port, probe.path) == (
                    "http",
                    spec.ports["metrics"],
                    "/metrics",
                ), service


def test_user_and_read_only_root_match_the_image(specs: dict[str, ContainerSpec]) -> None:
    assert IMAGE.user == IMAGE.labels[metadata.USER_LABEL]
    for service, spec in specs.items():
        assert f"{spec.user}:{spec.group}" == IMAGE.user, service
        assert spec.run_as_non_root and spec.user != 0
        assert spec.read_only_root and spec.cap_drop == ("ALL",)
        assert not spec.allow_privilege_escalation
        # the only writable paths: HOME and the working directory must be emptyDirs
        assert IMAGE.env["HOME"] in spec.empty_dirs, service
        if spec.working_dir is not None:
            assert spec.working_dir in spec.empty_dirs, service


def test_env_names_are_ones_the_config_reads(specs: dict[str, ContainerSpec]) -> None:
    reads = config_reads()
    for service, spec in specs.items():
        assert set(spec.env) <= reads, f"{service}: {sorted(set(spec.env) - reads)}"


def test_addresses_name_the_service_that_owns_the_port(specs: dict[str, ContainerSpec]) -> None:
    owner = {port: service for service, spec in specs.items() for port in spec.ports.values()}
    for spec in specs.values():
        for name, value in spec.env.items():
            if not name.endswith(("_ADDRS", "_ADDR")):
                continue
            for addr in value.split(","):
                host, port = addr.rsplit(":", 1)
                pod_or_service = host.split(".")[0]
                assert re.sub(r"-\d+$", "", pod_or_service) == owner[int(port)], addr


def test_grace_period_covers_pre_stop_and_drain(specs: dict[str, ContainerSpec]) -> None:
    for service, spec in specs.items():
        drain = float(spec.env["TABLETOP_SHUTDOWN_GRACE_SECONDS"])
        assert spec.pre_stop_sleep_seconds + drain < spec.grace_seconds, service


def test_the_smoke_test_runs_each_container_as_the_manifest_says() -> None:
    specs = container_specs(render("small"))
    port_map = {p: 40000 + p % 10000 for spec in specs.values() for p in spec.ports.values()}
    for service, spec in specs.items():
        env = local_env(spec, port_map, KafkaAccess("127.0.0.1:9092", "it.u", "p"), "it.")
        args = podman_args(spec, "img", f"c-{service}", env)
        joined = " ".join(args)
        assert f"--user {IMAGE.user}" in joined
        assert "--read-only --read-only-tmpfs=false" in joined
        assert "--cap-drop ALL" in joined and "no-new-privileges" in joined
        for path in spec.empty_dirs:
            assert f"--tmpfs {path}:rw" in joined
        assert args[-2:] == ["img", service]  # the image's entrypoint, the manifest's args
        assert f"--stop-timeout {spec.grace_seconds}" in joined
        # only the single-host settings change; every other value is the manifest's
        changed = {k for k in spec.env if env[k] != spec.env[k]}
        assert changed <= {
            "TABLETOP_KAFKA_BOOTSTRAP",
            "TABLETOP_TOPIC_PREFIX",
            "TABLETOP_GRPC_PORT",
            "TABLETOP_METRICS_PORT",
            "TABLETOP_WEB_PORT",
            "TABLETOP_BOARD_ADDRS",
            "TABLETOP_DICE_ADDRS",
            "TABLETOP_DECKS_ADDRS",
            "TABLETOP_SCORING_ADDR",
            # made for the run where the Secret is out of band (small, prod)
            "TABLETOP_SECRET",
            "TABLETOP_TOKEN_KEY",
            "TABLETOP_PEER_TOKEN",
            "TABLETOP_BOTS_TOKEN",
            # the bots service calls the gateway where the run puts it
            "TABLETOP_GATEWAY_ADDR",
            # the Kafka users the run creates (the Secret tabletop-kafka is out of band too)
            "TABLETOP_KAFKA_PASSWORD",
        }, service
        assert env.get("TABLETOP_KAFKA_PASSWORD", "p") == "p"
        assert env["TABLETOP_METRICS_PORT"] == str(port_map[spec.ports["metrics"]])
        # the Secret is made out of band: the run makes random values, one per variable
        secrets = [k for k in spec.env if k in ("TABLETOP_SECRET", "TABLETOP_PEER_TOKEN")]
        assert all(len(env[k]) >= 32 for k in secrets), service
        assert env["HOSTNAME"] == spec.pod_name
