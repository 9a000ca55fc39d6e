"""How Kubernetes runs each Tabletop container, read from the rendered manifests (k8s/), and the
same thing as a `podman run` command line.

The container smoke test (tests/integration/test_image.py) starts the image only through
`podman_args`, and tests/unit/deploy/test_deploy_image_drift.py checks these specs against
the image's metadata, so the manifests, the image and the smoke test cannot drift apart.

One host is not a cluster, so `local_env` changes exactly these, and only where the manifests
set them: the Kafka bootstrap and topic prefix, and the service's Kafka password (the local
broker, topics and Kafka users of the test's own),
every port (free ports on the host network: containerPort N becomes the port the test picked
for it), and the in-cluster addresses `<pod>.<service>:<port>` (to 127.0.0.1 and that port).
Everything else - user, read-only root, dropped capabilities, emptyDirs, working directory,
the rest of the ConfigMap and Secret values, memory and CPU limits, the grace period - is
passed as the manifests say.
"""

from __future__ import annotations

import base64
import functools
import re
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.common.kafka_access import KafkaAccess

Obj = Mapping[str, Any]


@dataclass(frozen=True)
class Probe:
    kind: str  # "grpc" or "http"
    port: int
    path: str
    period_seconds: int
    failure_threshold: int

    @property
    def patience_seconds(self) -> int:
        """How long the kubelet waits on it before it gives up (restarts or unreadies)."""
        return self.period_seconds * self.failure_threshold


@dataclass(frozen=True)
class ContainerSpec:
    service: str
    kind: str  # Deployment or StatefulSet
    #: the pod's name: a StatefulSet pod is <name>-<ordinal>, which is its shard (config.py)
    pod_name: str
    image: str
    command: tuple[str, ...] | None
    args: tuple[str, ...]
    #: port name → containerPort
    ports: dict[str, int]
    #: ConfigMap (envFrom) then env, in Kubernetes' order; a Secret reference resolved when
    #: the overlay renders the Secret, else "" (prod brings its own)
    env: dict[str, str]
    user: int
    group: int
    run_as_non_root: bool
    read_only_root: bool
    cap_drop: tuple[str, ...]
    allow_privilege_escalation: bool
    #: emptyDir mount path → sizeLimit
    empty_dirs: dict[str, str]
    working_dir: str | None
    memory_limit: str
    cpu_limit: str
    grace_seconds: int
    pre_stop_sleep_seconds: int
    #: startup / liveness / readiness
    probes: dict[str, Probe]


def _probe(raw: Obj) -> Probe:
    # Kubernetes' defaults: every 10 s, 3 failures
    timing = (int(raw.get("periodSeconds", 10)), int(raw.get("failureThreshold", 3)))
    if "grpc" in raw:
        return Probe("grpc", int(raw["grpc"]["port"]), "", *timing)
    http = raw["httpGet"]
    return Probe("http", int(http["port"]), str(http["path"]), *timing)


def _field(path: str, workload: Obj, pod_name: str) -> str:
    """A downward-API fieldRef, as it resolves for the pod `pod_name` (ordinal 0)."""
    labels = dict(workload["spec"]["template"]["metadata"].get("labels", {}))
    if workload["kind"] == "StatefulSet":
        labels["apps.kubernetes.io/pod-index"] = "0"
    fields: dict[str, str] = {
        "metadata.name": pod_name,
        "metadata.namespace": workload["metadata"].get("namespace", "default"),
        **{f"metadata.labels['{k}']": str(v) for k, v in labels.items()},
    }
    if path not in fields:
        raise LookupError(f"fieldRef {path} is not one run_spec knows")
    return fields[path]


def _env(container: Obj, objs: Sequence[Obj], workload: Obj, pod_name: str) -> dict[str, str]:
    namespace = workload["metadata"].get("namespace")

    def named(kind: str, name: str) -> Obj | None:
        found = [
            o
            for o in objs
            if o["kind"] == kind
            and o["metadata"].get("namespace") == namespace
            and o["metadata"]["name"] == name
        ]
        return found[0] if found else None

    env: dict[str, str] = {}
    for source in container.get("envFrom", []):
        config_map = named("ConfigMap", source["configMapRef"]["name"])
        if config_map is None:
            raise LookupError(f"ConfigMap {source['configMapRef']['name']} is not rendered")
        env.update(config_map.get("data", {}))
    for var in container.get("env", []):
        if "value" in var:
            env[var["name"]] = str(var["value"])
            continue
        if "fieldRef" in var["valueFrom"]:
            env[var["name"]] = _field(var["valueFrom"]["fieldRef"]["fieldPath"], workload, pod_name)
            continue
        ref = var["valueFrom"]["secretKeyRef"]
        secret = named("Secret", ref["name"])
        if secret is None:
            # created out of band (prod): the name is known, the value is not
            env[var["name"]] = ""
        elif ref["key"] in secret.get("stringData", {}):
            env[var["name"]] = secret["stringData"][ref["key"]]
        else:
            env[var["name"]] = base64.b64decode(secret["data"][ref["key"]]).decode()
    return env


def container_specs(objs: Sequence[Obj]) -> dict[str, ContainerSpec]:
    """Every Tabletop workload's container in a rendered overlay, by service name."""
    specs: dict[str, ContainerSpec] = {}
    for o in objs:
        if o["kind"] not in ("Deployment", "StatefulSet") or o["metadata"]["name"] == "kafka":
            continue  # Kafka runs its own image (deploy/image/kafka)
        pod = o["spec"]["template"]["spec"]
        (container,) = pod["containers"]
        security = {**pod.get("securityContext", {}), **container.get("securityContext", {})}
        name = o["metadata"]["labels"]["app.kubernetes.io/name"]
        volumes = {v["name"]: v for v in pod.get("volumes", [])}
        pre_stop = container.get("lifecycle", {}).get("preStop", {})
        pod_name = f"{name}-0" if o["kind"] == "StatefulSet" else f"{name}-pod"
        specs[name] = ContainerSpec(
            service=name,
            kind=o["kind"],
            pod_name=pod_name,
            image=container["image"],
            command=tuple(container["command"]) if "command" in container else None,
            args=tuple(container.get("args", ())),
            ports={p["name"]: int(p["containerPort"]) for p in container.get("ports", [])},
            env=_env(container, objs, o, pod_name),
            user=int(security["runAsUser"]),
            group=int(security["runAsGroup"]),
            run_as_non_root=bool(security.get("runAsNonRoot", False)),
            read_only_root=bool(security.get("readOnlyRootFilesystem", False)),
            cap_drop=tuple(security.get("capabilities", {}).get("drop", ())),
            allow_privilege_escalation=bool(security.get("allowPrivilegeEscalation", True)),
            empty_dirs={
                m["mountPath"]: volumes[m["name"]]["emptyDir"].get("sizeLimit", "")
                for m in container.get("volumeMounts", [])
                if "emptyDir" in volumes[m["name"]]
            },
            working_dir=container.get("workingDir"),
            memory_limit=str(container["resources"]["limits"]["memory"]),
            cpu_limit=str(container["resources"]["limits"]["cpu"]),
            grace_seconds=int(pod.get("terminationGracePeriodSeconds", 30)),
            pre_stop_sleep_seconds=int(pre_stop.get("sleep", {}).get("seconds", 0)),
            probes={
                kind: _probe(container[f"{kind}Probe"])
                for kind in ("startup", "liveness", "readiness")
                if f"{kind}Probe" in container
            },
        )
    return specs


def _bytes(quantity: str) -> str:
    """A Kubernetes quantity (64Mi, 1Gi) in podman's notation (64m, 1g)."""
    match = re.fullmatch(r"(\d+)(Ki|Mi|Gi)?", quantity)
    if match is None:
        raise ValueError(f"unsupported quantity {quantity!r}")
    number, unit = match.groups()
    return number + {"Ki": "k", "Mi": "m", "Gi": "g", None: ""}[unit]


def _cpus(quantity: str) -> str:
    return str(int(quantity[:-1]) / 1000) if quantity.endswith("m") else quantity


#: the variables a Secret fills (k8s/base: secretKeyRef of tabletop-secret)
_SECRET_VARS = (
    "TABLETOP_SECRET",
    "TABLETOP_TOKEN_KEY",
    "TABLETOP_PEER_TOKEN",
    "TABLETOP_BOTS_TOKEN",
)


@functools.cache
def _run_secret(name: str) -> str:
    """One random value per variable for this process: every service of a run shares it."""
    return secrets.token_hex(32)


def local_env(
    spec: ContainerSpec,
    port_map: Mapping[int, int],
    kafka: KafkaAccess,
    topic_prefix: str,
) -> dict[str, str]:
    """The manifests' environment with the single-host changes of the module docstring.
    `port_map` takes every containerPort of every workload to the host port picked for it."""
    env = dict(spec.env)

    def replace(name: str, value: str) -> None:
        if name not in env:
            raise KeyError(f"{spec.service}: the manifests no longer set {name}")
        env[name] = value

    def local_addr(addr: str) -> str:
        port = int(addr.rsplit(":", 1)[1])
        return f"127.0.0.1:{port_map[port]}"

    for name, value in spec.env.items():
        if name in _SECRET_VARS and not value:
            # created out of band in a cluster: this run makes its own, as a user would
            env[name] = _run_secret(name)
    replace("TABLETOP_KAFKA_BOOTSTRAP", kafka.bootstrap)
    if spec.service != "bots":  # a client of the gateway: no Kafka user of its own
        replace("TABLETOP_KAFKA_PASSWORD", kafka.password)
    replace("TABLETOP_TOPIC_PREFIX", topic_prefix)
    for name, value in spec.env.items():
        if name.endswith("_PORT") and int(value) in port_map:
            env[name] = str(port_map[int(value)])
        elif name.endswith(("_ADDRS", "_ADDR")):
            env[name] = ",".join(local_addr(a) for a in value.split(","))
    env["HOSTNAME"] = spec.pod_name
    return env


def podman_args(spec: ContainerSpec, image: str, name: str, env: Mapping[str, str]) -> list[str]:
    """`podman run` for one container, detached, on the host network."""
    args = ["podman", "run", "--detach", "--name", name, "--network", "host"]
    args += ["--user", f"{spec.user}:{spec.group}"]
    if spec.read_only_root:
        # podman would add writable tmpfs at /run, /var/tmp: a pod has none of them
        args += ["--read-only", "--read-only-tmpfs=false"]
    for cap in spec.cap_drop:
        args += ["--cap-drop", cap]
    if not spec.allow_privilege_escalation:
        args += ["--security-opt", "no-new-privileges"]
    for path, size in spec.empty_dirs.items():
        # an emptyDir is writable by the pod's fsGroup; mode 1777 is the tmpfs equivalent
        size_option = f",size={_bytes(size)}" if size else ""
        args += ["--tmpfs", f"{path}:rw,mode=1777{size_option}"]
    if spec.working_dir:
        args += ["--workdir", spec.working_dir]
    args += ["--memory", _bytes(spec.memory_limit), "--cpus", _cpus(spec.cpu_limit)]
    # SIGTERM (podman's default stop signal, as Kubernetes), SIGKILL after the grace period
    args += ["--stop-timeout", str(spec.grace_seconds)]
    for key, value in env.items():
        args += ["--env", f"{key}={value}"]
    if spec.command is not None:
        args += ["--entrypoint", spec.command[0]]
        return [*args, image, *spec.command[1:], *spec.args]
    return [*args, image, *spec.args]
