"""A digest of what the image is built from: the Dockerfile and the build context that
.dockerignore lets through (pyproject.toml, protos/, services/, deploy/compile_engines.py,
web/dist/; caches and locally compiled .so files left out).

`make image` stamps it on the image (label io.tabletop.context); the container smoke test
compares it with the working tree, so it never passes on a stale image.
    python3 deploy/image/context.py        prints the digest
"""

from __future__ import annotations

import hashlib
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LABEL = "io.tabletop.context"
#: the allow-list of .dockerignore, plus the recipe itself
INPUTS = (
    "deploy/Dockerfile",
    ".dockerignore",
    "pyproject.toml",
    "deploy/compile_engines.py",
    "protos",
    "services",
    "web/dist",
)
_SKIPPED_DIRS = {"__pycache__", ".mypy_cache", ".pytest_cache"}


def _files(root: Path) -> Iterator[Path]:
    for name in INPUTS:
        path = root / name
        if path.is_file():
            yield path
            continue
        for file in sorted(path.rglob("*")):
            parts = set(file.relative_to(root).parts)
            if file.is_file() and not parts & _SKIPPED_DIRS and file.suffix not in (".pyc", ".so"):
                yield file


def digest(root: Path = ROOT) -> str:
    h = hashlib.sha256()
    for file in _files(root):
        h.update(str(file.relative_to(root)).encode() + b"\0")
        h.update(hashlib.sha256(file.read_bytes()).digest())
    return h.hexdigest()[:16]


if __name__ == "__main__":
    sys.stdout.write(digest() + "\n")
