"""Starting and stopping the local stack (``make up`` / ``make down``) and the test stack.

Each service runs as its own process (``tabletop-serve NAME``) with its log and pid file
in a run folder; ``up`` is idempotent and waits until every service reports healthy.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.common.config import DEFAULT_PORTS, DEFAULT_WEB_PORT
from services.common.eventlog import create_topics
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import ROLES, user_name
from services.common.kafka_admin import grant, revoke
from services.common.roster import BY_NAME, NAMES
from services.common.topics import topic_specs


def kafka_password_name(role: str) -> str:
    """Where a stack's secrets (and ``tabletop admin kafka-users``) keep a user's password."""
    return f"TABLETOP_KAFKA_PASSWORD_{role.upper()}"


#: the secrets a stack generates once into its run folder (never a built-in default)
SECRET_NAMES = (
    "TABLETOP_SECRET",
    "TABLETOP_TOKEN_KEY",
    "TABLETOP_PEER_TOKEN",
    "TABLETOP_BOTS_TOKEN",
    *(kafka_password_name(role) for role in ROLES),
)
#: what no service's environment carries: the other users' passwords, and admin's
_NOT_FOR_SERVICES = ("TABLETOP_KAFKA_PASSWORD_", "TABLETOP_KAFKA_ADMIN_")

#: start order: what a service calls must be up before it (the roster's order)
ORDER = NAMES


#: where the kernel says its ephemeral range is (the ports it picks for outgoing connections)
_EPHEMERAL_RANGE = Path("/proc/sys/net/ipv4/ip_local_port_range")
#: how many ports below that range a stack picks its servers' ports from
_LISTEN_SPAN = 12_000


def listen_range() -> range:
    """Ports for servers a stack starts later: below the kernel's ephemeral range.

    A port bound to 0 and released comes from the ephemeral range, and until the server
    binds it again any outgoing connection (a started service's Kafka client) may take it:
    the server then fails to bind. No connection takes a port below that range."""
    try:
        low = int(_EPHEMERAL_RANGE.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768  # Linux's default
    return range(max(1024, low - _LISTEN_SPAN), low)


def free_ports(count: int) -> list[int]:
    """``count`` distinct ports that are free now, outside the ephemeral range when it leaves
    room below it; held open together while they are picked, so none is picked twice."""
    candidates = listen_range()
    # from a random place on, so that two stacks started at once rarely try the same ports
    start = secrets.randbelow(len(candidates)) if candidates else 0
    order = (candidates[(start + i) % len(candidates)] for i in range(len(candidates)))
    with contextlib.ExitStack() as held:
        picked: list[int] = []
        for port in order:
            if len(picked) == count:
                break
            s = held.enter_context(socket.socket())
            try:
                s.bind(("", port))  # every address: services listen on 0.0.0.0
            except OSError:
                continue  # a server listens there already
            picked.append(port)
        while len(picked) < count:  # no room below the ephemeral range: let the kernel pick
            s = held.enter_context(socket.socket())
            s.bind(("", 0))
            picked.append(int(s.getsockname()[1]))
        return picked


def free_port() -> int:
    return free_ports(1)[0]


def default_bootstrap() -> str:
    """TABLETOP_KAFKA_BOOTSTRAP, else the local broker of deploy/kafka (KAFKA_PORT)."""
    port = os.environ.get("KAFKA_PORT", "9092")
    return os.environ.get("TABLETOP_KAFKA_BOOTSTRAP", f"127.0.0.1:{port}")


def broker_admin(kafka_home: Path | None = None, bootstrap: str | None = None) -> KafkaAccess:
    """The broker as its admin: TABLETOP_KAFKA_ADMIN_USERNAME and _PASSWORD, else the
    credentials deploy/kafka/kafka.sh made for the local broker (in KAFKA_HOME, by default
    .cache/kafka). Without either the password is empty, and using it fails."""
    username = os.environ.get("TABLETOP_KAFKA_ADMIN_USERNAME", "admin")
    password = os.environ.get("TABLETOP_KAFKA_ADMIN_PASSWORD", "")
    if not password:
        home = kafka_home or Path(os.environ.get("KAFKA_HOME", ".cache/kafka"))
        with contextlib.suppress(OSError):
            pairs = (line.partition("=") for line in (home / "credentials.env").open())
            found = {key: value.strip() for key, _, value in pairs}
            username = found.get("TABLETOP_KAFKA_ADMIN_USERNAME", username)
            password = found.get("TABLETOP_KAFKA_ADMIN_PASSWORD", "")
    return KafkaAccess(bootstrap or default_bootstrap(), username, password)


@dataclass
class Stack:
    run_dir: Path
    #: the broker, as its admin (who creates the stack's topics, users and ACLs)
    kafka: KafkaAccess = field(default_factory=broker_admin)
    topic_prefix: str = ""
    partitions: int = 6
    ports: dict[str, tuple[int, int]] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    extra_env: Mapping[str, str] = field(default_factory=dict)
    #: the gateway's web page and gRPC-Web (0: none)
    web_port: int = 0

    @classmethod
    def ephemeral(cls, run_dir: Path, topic_prefix: str, partitions: int = 3) -> Stack:
        """A stack on free ports with its own topics, for tests and benchmarks."""
        picked = iter(free_ports(1 + sum(2 if g else 1 for g, _ in DEFAULT_PORTS.values())))
        ports = {
            name: (next(picked) if g else 0, next(picked)) for name, (g, _) in DEFAULT_PORTS.items()
        }
        return cls(
            run_dir,
            topic_prefix=topic_prefix,
            partitions=partitions,
            ports=ports,
            web_port=next(picked),
        )

    def addr(self, service: str) -> str:
        return f"127.0.0.1:{self.ports[service][0]}"

    @property
    def web_url(self) -> str:
        """The page (and gRPC-Web) of the gateway."""
        return f"http://127.0.0.1:{self.web_port}/"

    def metrics_addr(self, service: str) -> str:
        return f"127.0.0.1:{self.ports[service][1]}"

    @property
    def kafka_bootstrap(self) -> str:
        return self.kafka.bootstrap

    def secrets(self) -> dict[str, str]:
        """This stack's secrets: random ones made on first use, kept in the run folder
        (mode 0600) so a restarted service derives the same seeds and accepts old tokens
        (one missing from an older folder is added)."""
        path = self.run_dir / "secrets.env"
        held: dict[str, str] = {}
        if path.exists():
            pairs = (line.partition("=") for line in path.read_text().splitlines() if "=" in line)
            held = {key: value for key, _, value in pairs}
        if any(name not in held for name in SECRET_NAMES):
            held |= {name: secrets.token_hex(32) for name in SECRET_NAMES if name not in held}
            self.run_dir.mkdir(parents=True, exist_ok=True)
            fresh = path.with_suffix(".new")
            fd = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as out:
                out.write("".join(f"{name}={value}\n" for name, value in held.items()))
            fresh.replace(path)
        return held

    def kafka_user(self, role: str) -> str:
        return user_name(self.topic_prefix, role)

    def kafka_as(self, role: str) -> KafkaAccess:
        """The broker as one of this stack's users: a service's, or the bench's."""
        password = self.secrets()[kafka_password_name(role)]
        return self.kafka.as_user(self.kafka_user(role), password)

    def kafka_passwords(self) -> dict[str, str]:
        """Each of this stack's Kafka users → its password."""
        held = self.secrets()
        return {self.kafka_user(r): held[kafka_password_name(r)] for r in ROLES}

    def admin_env(self) -> dict[str, str]:
        """What ``tabletop admin`` needs to act on this stack's broker as admin."""
        return {
            "TABLETOP_KAFKA_BOOTSTRAP": self.kafka.bootstrap,
            "TABLETOP_KAFKA_ADMIN_USERNAME": self.kafka.username,
            "TABLETOP_KAFKA_ADMIN_PASSWORD": self.kafka.password,
        }

    def peer_channel(self, service: str) -> grpc.Channel:
        """A channel to an internal service carrying this stack's peer credential."""
        return grpc.intercept_channel(
            grpc.insecure_channel(self.addr(service)),
            PeerToken(self.secrets()["TABLETOP_PEER_TOKEN"]),
        )

    def env(self, service: str) -> dict[str, str]:
        grpc_port, metrics_port = self.ports[service]
        inherited = {**os.environ, **self.secrets()}
        kafka = {}
        if BY_NAME[service].kafka:
            own = self.kafka_as(service)
            kafka = {
                "TABLETOP_KAFKA_BOOTSTRAP": own.bootstrap,
                "TABLETOP_KAFKA_USERNAME": own.username,
                "TABLETOP_KAFKA_PASSWORD": own.password,
            }
        return {
            **{k: v for k, v in inherited.items() if not k.startswith(_NOT_FOR_SERVICES)},
            **kafka,
            "TABLETOP_TOPIC_PREFIX": self.topic_prefix,
            "TABLETOP_TOPIC_PARTITIONS": str(self.partitions),
            "TABLETOP_GRPC_PORT": str(grpc_port),
            "TABLETOP_METRICS_PORT": str(metrics_port),
            "TABLETOP_DICE_ADDRS": self.addr("dice"),
            "TABLETOP_DECKS_ADDRS": self.addr("decks"),
            "TABLETOP_BOARD_ADDRS": self.addr("board"),
            "TABLETOP_SCORING_ADDR": self.addr("scoring"),
            "TABLETOP_GATEWAY_ADDR": self.addr("gateway"),
            "TABLETOP_SHARD": "0",
            "TABLETOP_SHUTDOWN_GRACE_SECONDS": "3",
            # one projector per stack: a stable identity (static group membership)
            "TABLETOP_INSTANCE_ID": f"{self.topic_prefix}{service}-0",
            "TABLETOP_WEB_PORT": str(self.web_port if service == "gateway" else 0),
            **self.extra_env,
        }

    # -- processes --------------------------------------------------------------------
    def _pidfile(self, service: str) -> Path:
        return self.run_dir / f"{service}.pid"

    def pid(self, service: str) -> int | None:
        try:
            pid = int(self._pidfile(service).read_text())
            # A child that exited but was not reaped yet is a zombie: not running.
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ValueError, IndexError):
            return None
        return None if state in ("Z", "X") else pid

    def create_topics(self, replication_factor: int = 1) -> list[str]:
        specs = topic_specs(self.topic_prefix, self.partitions)
        return asyncio.run(create_topics(self.kafka, specs, replication_factor))

    def grant(self) -> tuple[int, int]:
        """Create or update this stack's Kafka users and their ACLs (as admin)."""
        return asyncio.run(grant(self.kafka, self.topic_prefix, self.kafka_passwords()))

    def revoke(self) -> None:
        """Remove this stack's Kafka users and their ACLs (a test stack's last step)."""
        asyncio.run(revoke(self.kafka, self.topic_prefix))

    def start(self, service: str) -> None:
        if self.pid(service) is not None:
            return
        self.run_dir.mkdir(parents=True, exist_ok=True)
        output = open(self.run_dir / f"{service}.log", "ab")  # noqa: SIM115 - handed to the child
        process = subprocess.Popen(
            [sys.executable, "-m", "services.common.serve", service],
            env=self.env(service),
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self._pidfile(service).write_text(str(process.pid))

    def wait_healthy(self, service: str, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.pid(service) is None:
                raise RuntimeError(f"{service} exited; see {self.run_dir / f'{service}.log'}")
            if self.healthy(service):
                return
            time.sleep(0.2)
        raise TimeoutError(f"{service} not healthy after {timeout:.0f} s")

    def healthy(self, service: str) -> bool:
        if service == "projector":
            return self._projector_ready()
        try:
            with grpc.insecure_channel(self.addr(service)) as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=""), timeout=1
                )
            return bool(reply.status == health_pb2.HealthCheckResponse.SERVING)
        except grpc.RpcError:
            return False

    def _projector_ready(self) -> bool:
        try:
            with urllib.request.urlopen(
                f"http://{self.metrics_addr('projector')}/metrics", timeout=1
            ) as r:
                body = r.read().decode()
        except OSError:
            return False
        return "tabletop_projector_assigned_partitions" in body and any(
            line.startswith("tabletop_projector_assigned_partitions ")
            and float(line.split()[1]) > 0
            for line in body.splitlines()
        )

    def up(self, services: tuple[str, ...] = ORDER) -> None:
        if not self.kafka.password:
            raise RuntimeError(
                "no password for Kafka's admin: start the local broker (make kafka), which "
                "keeps it in .cache/kafka/credentials.env, or set TABLETOP_KAFKA_ADMIN_PASSWORD"
            )
        self.create_topics()
        self.grant()
        for service in services:
            self.start(service)
            self.wait_healthy(service)

    def stop(self, service: str, timeout: float = 15.0) -> None:
        pid = self.pid(service)
        if pid is None:
            self._pidfile(service).unlink(missing_ok=True)
            return
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.pid(service) is not None:
            time.sleep(0.1)
        if self.pid(service) is not None:
            os.kill(pid, signal.SIGKILL)
        self._pidfile(service).unlink(missing_ok=True)

    def down(self, timeout: float = 15.0) -> None:
        """SIGTERM every service at once (each drains on its own), SIGKILL stragglers."""
        pids = {s: pid for s in ORDER if (pid := self.pid(s)) is not None}
        for pid in pids.values():
            os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and any(self.pid(s) for s in pids):
            time.sleep(0.1)
        for service in ORDER:
            self.stop(service, timeout=0)

    def status(self) -> dict[str, str]:
        return {
            s: ("healthy" if self.healthy(s) else "starting") if self.pid(s) else "stopped"
            for s in ORDER
        }


class _CallDetails(
    collections.namedtuple(
        "_CallDetails",
        ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression"),
    ),
    grpc.ClientCallDetails,  # type: ignore[misc]
):
    pass


class PeerToken(grpc.UnaryUnaryClientInterceptor, grpc.UnaryStreamClientInterceptor):  # type: ignore[misc]
    """Adds the peer credential to every call (tests and admin tools of a local stack)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def _details(self, details: Any) -> _CallDetails:
        return _CallDetails(
            details.method,
            details.timeout,
            [*(details.metadata or ()), ("x-tabletop-peer", self._token)],
            details.credentials,
            details.wait_for_ready,
            details.compression,
        )

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)


def local_stack() -> Stack:
    """The developer stack of ``make up``: default ports (the page on TABLETOP_WEB_PORT, else
    8080), run files under .cache/run."""
    web_port = int(os.environ.get("TABLETOP_WEB_PORT", DEFAULT_WEB_PORT))
    return Stack(Path(".cache/run"), web_port=web_port)
