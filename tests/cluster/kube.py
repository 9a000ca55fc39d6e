"""The local cluster as the tests see it: kubectl with the cluster's kubeconfig, the
addresses a user reaches (the gateway's NodePorts on the node's bridge address), and what an
operator on this machine reads (Kafka's host listener, the Secret)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import BENCH

ROOT = Path(__file__).resolve().parent.parent.parent


def _version(name: str) -> str:
    for line in (ROOT / "deploy/cluster/versions.sh").read_text().splitlines():
        if line.startswith(f"{name}=${{{name}:-"):
            return line.split(":-", 1)[1].rstrip("}")
    raise KeyError(name)


CACHE = Path(os.environ.get("CLUSTER_CACHE", ROOT / ".cache/cluster"))
KUBECTL = CACHE / f"kubernetes-{_version('KUBERNETES_VERSION')}" / "kubectl"
KUBECONFIG = CACHE / "kubeconfig"
NAMESPACE = "tabletop"
#: the Kafka users' passwords, by user (deploy/cluster/deploy.sh makes it)
KAFKA_SECRET = "tabletop-kafka"
#: the workloads of k8s/base and the Kafka component, by kind
WORKLOADS = {
    "kafka": "statefulset",
    "dice": "statefulset",
    "decks": "statefulset",
    "board": "statefulset",
    "scoring": "deployment",
    "projector": "deployment",
    "gateway": "deployment",
    "bots": "statefulset",
}


class KubectlError(RuntimeError):
    pass


def kubectl(*args: str, timeout: float = 120, check: bool = True) -> str:
    done = subprocess.run(
        [str(KUBECTL), "--kubeconfig", str(KUBECONFIG), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise KubectlError(f"kubectl {' '.join(args)}: {done.stderr.strip()[-2000:]}")
    return done.stdout


def get(*args: str, namespace: str = NAMESPACE) -> Any:
    return json.loads(kubectl("-n", namespace, "get", *args, "-o", "json"))


@dataclass(frozen=True)
class Cluster:
    node_ip: str

    @property
    def gateway(self) -> str:
        return f"{self.node_ip}:30050"

    @property
    def web(self) -> str:
        return f"http://{self.node_ip}:30080/"

    @property
    def prometheus(self) -> str:
        return f"http://{self.node_ip}:30090"

    def kafka(self) -> KafkaAccess:
        """Kafka's listener for this machine (k8s/overlays/local): the broker pod's address,
        as the installation's bench user (it reads every topic, writes none of the platform's)."""
        password = base64.b64decode(get("secret", KAFKA_SECRET)["data"][BENCH]).decode()
        return KafkaAccess(f"{pod_ip('kafka-0')}:9094", BENCH, password)

    def secret(self, key: str) -> bytes:
        data = get("secret", "tabletop-secret")["data"]
        return base64.b64decode(data[key])


def cluster() -> Cluster:
    if not KUBECONFIG.exists():
        raise RuntimeError("no cluster: make test-cluster starts one (make cluster)")
    nodes = json.loads(kubectl("get", "nodes", "-o", "json"))["items"]
    addresses = nodes[0]["status"]["addresses"]
    return Cluster(next(a["address"] for a in addresses if a["type"] == "InternalIP"))


def pod_ip(name: str) -> str:
    return str(get("pod", name)["status"]["podIP"])


def pods(workload: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = get("pods", "-l", f"app.kubernetes.io/name={workload}")["items"]
    return items


def ready(pod: dict[str, Any]) -> bool:
    if pod["metadata"].get("deletionTimestamp"):
        return False
    conditions = pod.get("status", {}).get("conditions", [])
    return any(c["type"] == "Ready" and c["status"] == "True" for c in conditions)


def rollout(workload: str, timeout: float = 600) -> None:
    kind = WORKLOADS[workload]
    kubectl(
        "-n", NAMESPACE, "rollout", "status", f"{kind}/{workload}", f"--timeout={int(timeout)}s",
        timeout=timeout + 30,
    )  # fmt: skip


def wait_ready(
    workload: str, count: int, timeout: float = 300, old: frozenset[str] = frozenset()
) -> float:
    """Seconds until ``count`` pods of ``workload`` other than ``old`` (uids) are ready."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        fresh = [p for p in pods(workload) if p["metadata"]["uid"] not in old and ready(p)]
        if len(fresh) >= count:
            return time.monotonic() - start
        time.sleep(0.25)
    raise TimeoutError(f"{workload}: {count} new ready pods not seen in {timeout} s")


def write_overlay(tag: str, shards: int = 1, name: str = "test", kafka_tag: str = "") -> Path:
    """A kustomization over k8s/overlays/local with an image tag and a shard count (what a
    user's overlay for N shards says: replicas and the three address lists), and the tests'
    own bound on matches in play."""
    folder = CACHE / "overlays" / name
    folder.mkdir(parents=True, exist_ok=True)
    base = os.path.relpath(ROOT / "k8s/overlays/local", folder)

    def addrs(service: str, port: int) -> str:
        return ",".join(f"{service}-{n}.{service}-headless:{port}" for n in range(shards))

    replicas = "".join(f"  - name: {s}\n    count: {shards}\n" for s in ("board", "dice", "decks"))
    (folder / "kustomization.yaml").write_text(
        "# Written by tests/cluster/kube.py: k8s/overlays/local with a tag and a shard count.\n"
        "apiVersion: kustomize.config.k8s.io/v1beta1\n"
        "kind: Kustomization\n"
        f"resources:\n  - {base}\n"
        f'images:\n  - name: localhost/tabletop\n    newTag: "{tag}"\n'
        + (f'  - name: localhost/tabletop-kafka\n    newTag: "{kafka_tag}"\n' if kafka_tag else "")
        + f"replicas:\n{replicas}"
        "configMapGenerator:\n"
        "  - name: tabletop-config\n"
        "    behavior: merge\n"
        "    literals:\n"
        f"      - TABLETOP_BOARD_ADDRS={addrs('board', 50053)}\n"
        f"      - TABLETOP_DICE_ADDRS={addrs('dice', 50051)}\n"
        f"      - TABLETOP_DECKS_ADDRS={addrs('decks', 50052)}\n"
        # The tests leave matches unfinished (bots stopped mid-match, probes' matches): they
        # would count as in play for TABLETOP_GATEWAY_MATCH_IDLE_S and fill the 2-core bound.
        "      - TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY=1000\n"
    )
    return folder


def current_tag() -> str:
    image: str = get("statefulset", "board")["spec"]["template"]["spec"]["containers"][0]["image"]
    return image.rsplit(":", 1)[1]


def image_id(image: str) -> str:
    done = subprocess.run(
        ["podman", "image", "inspect", "--format", "{{.Id}}", image],
        capture_output=True, text=True, check=True,
        env={**os.environ, "CONTAINERS_STORAGE_CONF": str(ROOT / ".cache/podman/storage.conf")},
    )  # fmt: skip
    return done.stdout.strip()


def retag(source: str, target: str) -> None:
    """A new tag of an image, imported into the cluster (what a registry push would do)."""
    env = {**os.environ, "CONTAINERS_STORAGE_CONF": str(ROOT / ".cache/podman/storage.conf")}
    subprocess.run(["podman", "tag", source, target], check=True, env=env)
    subprocess.run([str(ROOT / "deploy/cluster/images.sh"), "import", target], check=True, env=env)


def _cgroup_working_set(path: Path) -> int:
    """What the kubelet calls a cgroup's working set: its usage less inactive file pages."""
    usage = int((path / "memory.usage_in_bytes").read_text())
    stat = dict(line.split() for line in (path / "memory.stat").read_text().splitlines())
    return max(0, usage - int(stat.get("total_inactive_file", 0)))


def pod_memory() -> dict[str, dict[str, int]]:
    """Namespace → pod → working-set bytes, from the kubelet's cgroups (cgroup v1)."""
    pods_ = json.loads(kubectl("get", "pods", "-A", "-o", "json"))["items"]
    root = Path("/sys/fs/cgroup/memory/kubepods")
    found: dict[str, dict[str, int]] = {}
    for pod in pods_:
        uid = pod["metadata"]["uid"]
        for folder in (root / f"pod{uid}", *root.glob(f"*/pod{uid}")):
            if folder.is_dir():
                namespace = found.setdefault(pod["metadata"]["namespace"], {})
                namespace[pod["metadata"]["name"]] = _cgroup_working_set(folder)
                break
    return found


def control_plane_memory() -> dict[str, int]:
    """The cluster's own processes (deploy/cluster/cluster.sh records their PIDs): RSS bytes."""
    found = {}
    for pidfile in sorted((CACHE / "run" / "pids").glob("*.pid")):
        try:
            status = Path(f"/proc/{pidfile.read_text().strip()}/status").read_text()
        except OSError:
            continue
        rss = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
        found[pidfile.stem] = int(rss.split()[1]) * 1024
    return found
