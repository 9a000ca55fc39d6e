"""Building the Go load generator (``loadgen/``) into ``.cache/humanload/``.

Its gRPC code is generated from ``protos/`` at build time (protoc from grpcio-tools, with
protoc-gen-go and protoc-gen-go-grpc installed from the Go module proxy into
``.cache/bin``), so nothing generated is committed and the generator always speaks the
protos of the code it measures. A build is redone only when the sources, the protos or
the plugin versions changed (a hash in the build folder).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SOURCE = Path(__file__).with_name("loadgen")
PROTOS = ROOT / "protos"
CACHE = ROOT / ".cache"
#: pinned plugin versions (the go.mod's protobuf is the runtime they generate for)
PLUGINS = {
    "protoc-gen-go": "google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12",
    "protoc-gen-go-grpc": "google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.5.1",
}
MODULE = "humanload"
PACKAGE = f"{MODULE}/tabletopv1"
BUILD_TIMEOUT_S = 900


class GeneratorUnavailable(RuntimeError):
    """Go missing or the build failed: the human-paced load is skipped, with this reason."""


def go_binary() -> str:
    found = shutil.which("go") or (
        "/usr/local/go/bin/go" if Path("/usr/local/go/bin/go").exists() else None
    )
    if found is None:
        raise GeneratorUnavailable("go is not installed (the load generator is written in Go)")
    return found


def _go_env(bin_dir: Path) -> dict[str, str]:
    return {
        **os.environ,
        "GOBIN": str(bin_dir),
        "GOTOOLCHAIN": "local",
        "GOFLAGS": "-buildvcs=false",
    }


def _run(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    try:
        done = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GeneratorUnavailable(f"{Path(command[0]).name}: {error}") from error
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip()[-400:]
        raise GeneratorUnavailable(f"{' '.join(command[:3])} failed: {tail}")


def install_plugins(go: str, bin_dir: Path) -> dict[str, Path]:
    """protoc-gen-go and protoc-gen-go-grpc at their pinned versions (a stamp per version)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, package in PLUGINS.items():
        path = bin_dir / name
        stamp = bin_dir / f".{name}-{package.rsplit('@', 1)[1]}"
        if not (path.exists() and stamp.exists()):
            _run([go, "install", package], ROOT, _go_env(bin_dir))
            stamp.touch()
        paths[name] = path
    return paths


def _fingerprint() -> str:
    digest = hashlib.sha256()
    for path in sorted([*SOURCE.iterdir(), *(PROTOS / "tabletop" / "v1").glob("*.proto")]):
        if path.is_file():
            digest.update(path.name.encode())
            digest.update(path.read_bytes())
    digest.update(repr(sorted(PLUGINS.items())).encode())
    return digest.hexdigest()


def generate(plugins: dict[str, Path], out: Path) -> None:
    """The Go code of every proto of ``protos/`` into ``out``/tabletopv1."""
    files = sorted(str(p.relative_to(PROTOS)) for p in (PROTOS / "tabletop" / "v1").glob("*.proto"))
    mappings = [f"M{name}={PACKAGE}" for name in files]
    _run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I",
            str(PROTOS),
            f"--plugin=protoc-gen-go={plugins['protoc-gen-go']}",
            f"--plugin=protoc-gen-go-grpc={plugins['protoc-gen-go-grpc']}",
            f"--go_out={out}",
            f"--go-grpc_out={out}",
            f"--go_opt=module={MODULE}",
            f"--go-grpc_opt=module={MODULE}",
            *(f"--go_opt={m}" for m in mappings),
            *(f"--go-grpc_opt={m}" for m in mappings),
            *files,
        ],
        PROTOS,
    )


def build(cache: Path = CACHE) -> Path:
    """The generator's binary, built if anything it is made of changed since the last build."""
    go = go_binary()
    folder = cache / "humanload"
    binary = folder / "humanload"
    stamp = folder / ".fingerprint"
    fingerprint = _fingerprint()
    if binary.exists() and stamp.exists() and stamp.read_text() == fingerprint:
        return binary
    plugins = install_plugins(go, cache / "bin")
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for path in SOURCE.iterdir():
        if path.is_file():
            shutil.copyfile(path, folder / path.name)
    generate(plugins, folder)
    _run([go, "build", "-o", str(binary), "."], folder, _go_env(cache / "bin"))
    stamp.write_text(fingerprint)
    return binary
