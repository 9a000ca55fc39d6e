"""The image, run for real: the seven services started from it with podman exactly as the dev
overlay of k8s/ runs them (deploy/image/run_spec.py: read-only root, user 10001, no
capabilities, emptyDirs as tmpfs, ConfigMap and Secret values, limits, grace period), on the
host network against the local Kafka; a bot match through the containerised gateway; every
probe answered; /metrics scraped; SIGTERM stops each within its grace period.

Needs podman and an up-to-date image: `make image` builds it, `make test-image` builds it and
runs this file (TABLETOP_IMAGE_TEST=1 lets the test build the image itself, and turns "cannot
run" into a failure). Otherwise the test is skipped with the reason.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, NoReturn

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from deploy.compile_engines import compiled_modules
from deploy.image import context, metadata
from deploy.image.run_spec import ContainerSpec, Probe, container_specs, local_env, podman_args
from services.cli.client import GatewayClient
from services.cli.stack import ORDER, Stack, free_ports
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import ROLES
from tests.integration.helpers import play_bot_match, remove
from tests.unit.deploy.deploy_support import ROOT, render

IMAGE = os.environ.get("TABLETOP_IMAGE", "localhost/tabletop:latest")
REQUIRED = os.environ.get("TABLETOP_IMAGE_TEST") == "1"
#: the overlay the image runs as (its Secret is made per run, as a user makes it)
OVERLAY = "small"
RESULTS = ROOT / ".cache" / "image" / "smoke-results.json"


def unavailable(reason: str) -> NoReturn:
    if REQUIRED:
        pytest.fail(f"TABLETOP_IMAGE_TEST=1 but {reason}", pytrace=False)
    pytest.skip(reason)


def podman(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["podman", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def inspect_image() -> dict[str, Any]:
    out = podman("image", "inspect", IMAGE)
    assert out.returncode == 0, out.stderr
    image: dict[str, Any] = json.loads(out.stdout)[0]
    return image


@pytest.fixture(scope="module")
def image() -> dict[str, Any]:
    """The image's metadata, once it is known to exist, be fresh and run here."""
    if shutil.which("podman") is None:
        unavailable("podman is not installed (make image installs it)")
    want = context.digest()
    exists = podman("image", "exists", IMAGE).returncode == 0
    fresh = exists and inspect_image()["Config"]["Labels"].get(context.LABEL) == want
    if not fresh:
        if not REQUIRED:
            state = "was not built from this working tree" if exists else "does not exist"
            pytest.skip(f"image {IMAGE} {state}: run `make image` (or `make test-image`)")
        build = subprocess.run(
            [str(ROOT / "deploy/image/build.sh")],
            env={**os.environ, "IMAGE": IMAGE},
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    probe = podman("run", "--rm", "--network", "host", IMAGE, "--help")
    if probe.returncode != 0:
        unavailable(f"podman cannot run a container here: {probe.stderr.strip()[-500:]}")
    return inspect_image()


@pytest.fixture(scope="module")
def specs() -> dict[str, ContainerSpec]:
    return container_specs(render(OVERLAY))


@dataclass
class Running:
    specs: dict[str, ContainerSpec]
    #: containerPort → the host port picked for it
    port_map: dict[int, int]
    names: dict[str, str]
    prefix: str

    def port(self, service: str, name: str) -> int:
        return self.port_map[self.specs[service].ports[name]]

    def logs(self, service: str) -> str:
        out = podman("logs", "--tail", "60", self.names[service])
        return f"==== {service}\n{out.stdout}{out.stderr}"


def probe_ok(probe: Probe, port_map: dict[int, int]) -> bool:
    port = port_map[probe.port]
    if probe.kind == "http":
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{probe.path}", timeout=2) as r:
                return bool(r.status == 200)
        except OSError:
            return False
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2
            )
        return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
    except grpc.RpcError:
        return False


def is_running(name: str) -> bool:
    out = podman("container", "inspect", "--format", "{{.State.Running}}", name)
    return out.stdout.strip() == "true"


def wait_started(running: Running, service: str) -> None:
    """As the kubelet would: the startup probe, for at most period x failureThreshold."""
    probe = running.specs[service].probes["startup"]
    deadline = time.monotonic() + probe.patience_seconds
    while time.monotonic() < deadline:
        if not is_running(running.names[service]):
            pytest.fail(f"{service} exited while starting\n{running.logs(service)}")
        if probe_ok(probe, running.port_map):
            return
        time.sleep(0.5)
    pytest.fail(f"{service}: startup probe failing after {probe.patience_seconds} s")


def metrics(running: Running, service: str) -> str:
    url = f"http://127.0.0.1:{running.port(service, 'metrics')}/metrics"
    with urllib.request.urlopen(url, timeout=5) as r:
        return str(r.read().decode())


def metric_value(body: str, name: str) -> float:
    values = [float(line.split()[-1]) for line in body.splitlines() if line.startswith(name + " ")]
    return values[0] if values else 0.0


@pytest.fixture(scope="module")
def running(
    image: dict[str, Any],
    specs: dict[str, ContainerSpec],
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Running]:
    """Every service in its own container, started in the local stack's order."""
    # Asked for only now: a session fixture would be set up (Kafka started) before the
    # image fixture had a chance to skip.
    kafka_admin: KafkaAccess = request.getfixturevalue("kafka_admin")
    container_ports = [port for spec in specs.values() for port in spec.ports.values()]
    port_map = dict(zip(container_ports, free_ports(len(container_ports)), strict=True))
    run_id = uuid.uuid4().hex[:8]
    prefix = f"img{run_id}."
    partitions = int(specs["gateway"].env["TABLETOP_TOPIC_PARTITIONS"])
    # the installation's topics and Kafka users, as the Kubernetes setup Job makes them
    install = Stack.ephemeral(tmp_path_factory.mktemp("image"), prefix, partitions)
    install.kafka = kafka_admin
    install.create_topics()
    install.grant()
    names = {service: f"tabletop-it-{run_id}-{service}" for service in specs}
    up = Running(specs, port_map, names, prefix)
    try:
        for service in ORDER:
            spec = specs[service]
            # the bots service has no Kafka user: it reads the bootstrap address only
            kafka = install.kafka_as(service) if service in ROLES else install.kafka
            env = local_env(spec, port_map, kafka, prefix)
            started = subprocess.run(
                podman_args(spec, IMAGE, names[service], env),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert started.returncode == 0, f"podman run {service}: {started.stderr}"
            wait_started(up, service)
        # The read model serves views once its consumer has partitions (the probe only says
        # the process is up): the bot match reads its own writes through it.
        deadline = time.monotonic() + specs["projector"].probes["startup"].patience_seconds
        while metric_value(metrics(up, "projector"), "tabletop_projector_assigned_partitions") <= 0:
            assert time.monotonic() < deadline, up.logs("projector")
            time.sleep(0.5)
        yield up
    except BaseException:
        for service in ORDER:
            print(up.logs(service))
        raise
    finally:
        podman("rm", "--force", "--time", "0", *names.values())
        remove(install)


def test_the_image_is_what_the_dockerfile_and_the_manifests_say(
    image: dict[str, Any], specs: dict[str, ContainerSpec]
) -> None:
    built = metadata.from_inspect(image)
    recipe = metadata.from_dockerfile()
    assert built.entrypoint == recipe.entrypoint == ("tabletop-serve",)
    assert built.user == recipe.user == recipe.labels[metadata.USER_LABEL]
    assert built.working_dir == recipe.working_dir
    assert built.exposed == recipe.exposed
    assert recipe.labels.items() <= built.labels.items()
    for service, spec in specs.items():
        assert built.user == f"{spec.user}:{spec.group}"
        assert spec.command is None and spec.args == (service,)
        assert built.service_ports()[service] == spec.ports
        assert set(spec.ports.values()) <= built.exposed


#: the installed packages and where their sources are in the working tree
PACKAGES = {"services": ROOT / "services", "tabletop": ROOT / "protos" / "tabletop"}
SUFFIXES = (".py", ".yaml", ".json", ".toml")
HASH_INSTALLED = f"""
import hashlib, importlib, json, pathlib
out = {{}}
for package in {list(PACKAGES)!r}:
    root = pathlib.Path(importlib.import_module(package).__path__[0])
    for f in root.rglob("*"):
        if f.suffix in {SUFFIXES!r} and "__pycache__" not in f.parts:
            out[f"{{package}}/{{f.relative_to(root)}}"] = hashlib.sha256(f.read_bytes()).hexdigest()
print(json.dumps(out))
"""


def test_the_image_runs_the_code_of_this_working_tree(image: dict[str, Any]) -> None:
    """Every source file, installed, byte for byte (a stale build cache would show here)."""
    local = {
        f"{package}/{f.relative_to(root)}": hashlib.sha256(f.read_bytes()).hexdigest()
        for package, root in PACKAGES.items()
        for f in root.rglob("*")
        if f.suffix in SUFFIXES and "__pycache__" not in f.parts
    }
    out = podman("run", "--rm", "--entrypoint", "python3", IMAGE, "-c", HASH_INSTALLED)
    assert out.returncode == 0, out.stderr
    installed: dict[str, str] = json.loads(out.stdout)
    assert sorted(set(local) - set(installed)) == [], "not in the image"
    assert sorted(set(installed) - set(local)) == [], "in the image only"
    assert sorted(k for k in local if local[k] != installed[k]) == [], "differ from the tree"


IMPORTED_FILES = """
import importlib, json, sys
print(json.dumps({name: importlib.import_module(name).__file__ for name in sys.argv[1:]}))
"""


def test_the_image_runs_the_engines_compiled(image: dict[str, Any]) -> None:
    """Every module `make install` compiles is imported in the image as its extension."""
    modules = compiled_modules()
    out = podman("run", "--rm", "--entrypoint", "python3", IMAGE, "-c", IMPORTED_FILES, *modules)
    assert out.returncode == 0, out.stderr
    files: dict[str, str] = json.loads(out.stdout)
    assert sorted(files) == sorted(modules)
    assert {name: file for name, file in files.items() if not file.endswith(".so")} == {}
    assert all("/site-packages/services/" in file for file in files.values())


def test_every_probe_of_every_container_answers(running: Running) -> None:
    for service, spec in running.specs.items():
        for kind, probe in spec.probes.items():
            assert probe_ok(probe, running.port_map), (
                f"{service} {kind} probe\n{running.logs(service)}"
            )


def test_a_bot_match_through_the_containerised_gateway(running: Running) -> None:
    client = GatewayClient(f"127.0.0.1:{running.port('gateway', 'grpc')}")
    try:
        match_id, actions = play_bot_match(client, "crashland", ["astronaut"], seed=1)
    finally:
        client.close()
    assert match_id and actions > 0


def test_every_container_serves_its_metrics(running: Running) -> None:
    for service in running.specs:
        body = metrics(running, service)
        assert "# TYPE tabletop_" in body, f"{service} exports no tabletop_ metric"


def test_sigterm_stops_each_container_within_its_grace_period(running: Running) -> None:
    """The gateway first (as clients leave), then the others. On a cluster the preStop sleep
    comes first, so podman gets what the kubelet leaves after it: a container still running
    then is SIGKILLed (exit 137). The drain times go to .cache/image/smoke-results.json."""
    drained: dict[str, float] = {}
    for service in reversed(ORDER):
        spec, name = running.specs[service], running.names[service]
        left = spec.grace_seconds - spec.pre_stop_sleep_seconds
        start = time.monotonic()
        stop = podman("stop", "--time", str(left), name, timeout=left + 30)
        drained[service] = round(time.monotonic() - start, 2)
        assert stop.returncode == 0, stop.stderr
        state = json.loads(podman("container", "inspect", name).stdout)[0]["State"]
        assert state["ExitCode"] == 0, (
            f"{service} exit {state['ExitCode']}\n{running.logs(service)}"
        )
        assert not state.get("OOMKilled"), service
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps({"image": IMAGE, "drain_seconds": drained}, indent=2) + "\n")
    print(f"drain on SIGTERM (s): {drained}")


def test_sigterm_stops_a_container_that_is_still_starting(
    image: dict[str, Any], specs: dict[str, ContainerSpec]
) -> None:
    """A pod deleted while its service still starts (dice rebuilding its shard can take
    minutes) must not wait out the grace period: here Kafka answers nothing, so it never
    gets past startup."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        held: list[socket.socket] = []
        accepting = threading.Thread(target=lambda: held.append(silent.accept()[0]), daemon=True)
        accepting.start()
        spec = specs["dice"]
        port_map = dict(zip(spec.ports.values(), free_ports(len(spec.ports)), strict=True)) | {
            p: 1 for s in specs.values() for p in s.ports.values() if p not in spec.ports.values()
        }
        silent_kafka = KafkaAccess(f"127.0.0.1:{silent.getsockname()[1]}", "unused", "unused")
        env = local_env(spec, port_map, silent_kafka, "unused.")
        name = f"tabletop-it-{uuid.uuid4().hex[:8]}-starting"
        try:
            started = podman(*podman_args(spec, IMAGE, name, env)[1:])
            assert started.returncode == 0, started.stderr
            accepting.join(timeout=30)  # it is connecting: startup is under way
            podman("stop", "--time", "3", name)
            state = json.loads(podman("container", "inspect", name).stdout)[0]["State"]
            assert state["ExitCode"] != 137, "SIGTERM ignored: SIGKILLed after the grace period"
        finally:
            podman("rm", "--force", "--time", "0", name)
            for conn in held:
                conn.close()
