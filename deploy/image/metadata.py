"""What the image promises its runner - entrypoint, user, exposed ports, each service's ports,
environment - read two ways: from deploy/Dockerfile (the unit tests need no engine) and from a
built image's `podman image inspect` (the smoke test checks the two agree)."""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOCKERFILE = Path(__file__).resolve().parents[1] / "Dockerfile"
PORTS_LABEL = "io.tabletop.ports."
USER_LABEL = "io.tabletop.user"


@dataclass(frozen=True)
class ImageMetadata:
    entrypoint: tuple[str, ...]
    user: str
    working_dir: str
    exposed: frozenset[int]
    env: dict[str, str]
    labels: dict[str, str]

    def service_ports(self) -> dict[str, dict[str, int]]:
        """io.tabletop.ports.<service>="grpc=50050 metrics=9100" → service → name → port."""
        return {
            key.removeprefix(PORTS_LABEL): {
                name: int(port) for name, port in (item.split("=") for item in value.split())
            }
            for key, value in self.labels.items()
            if key.startswith(PORTS_LABEL)
        }


def _ports(spec: str) -> set[int]:
    """ "50050-50054/tcp" or "9100" → the port numbers."""
    first, _, last = spec.split("/")[0].partition("-")
    return set(range(int(first), int(last or first) + 1))


def _pairs(text: str) -> dict[str, str]:
    """ENV / LABEL arguments: key=value pairs, shell-quoted."""
    return dict(item.split("=", 1) for item in shlex.split(text))


def from_dockerfile(path: Path = DOCKERFILE) -> ImageMetadata:
    """The final stage's metadata (build-time --label options are not in the file)."""
    text = re.sub(r"\\\n", " ", path.read_text())
    final: list[tuple[str, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        instruction, _, rest = line.partition(" ")
        if instruction.upper() == "FROM":
            final = []
        final.append((instruction.upper(), rest.strip()))
    entrypoint: tuple[str, ...] = ()
    user = working_dir = ""
    exposed: set[int] = set()
    env: dict[str, str] = {}
    labels: dict[str, str] = {}
    for instruction, rest in final:
        if instruction == "ENTRYPOINT":
            entrypoint = tuple(json.loads(rest))
        elif instruction == "USER":
            user = rest
        elif instruction == "WORKDIR":
            working_dir = rest
        elif instruction == "EXPOSE":
            for spec in rest.split():
                exposed |= _ports(spec)
        elif instruction == "ENV":
            env.update(_pairs(rest))
        elif instruction == "LABEL":
            labels.update(_pairs(rest))
    return ImageMetadata(entrypoint, user, working_dir, frozenset(exposed), env, labels)


def from_inspect(inspect: Mapping[str, Any]) -> ImageMetadata:
    """From one element of `podman image inspect` output."""
    config = inspect["Config"]
    exposed: set[int] = set()
    for spec in config.get("ExposedPorts") or {}:
        exposed |= _ports(spec)
    return ImageMetadata(
        entrypoint=tuple(config.get("Entrypoint") or ()),
        user=config.get("User", ""),
        working_dir=config.get("WorkingDir", ""),
        exposed=frozenset(exposed),
        env=dict(item.split("=", 1) for item in config.get("Env") or ()),
        labels=dict(config.get("Labels") or {}),
    )
