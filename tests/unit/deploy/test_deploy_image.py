"""The image recipe keeps its promises, read from the Dockerfile (the built image is checked by
tests/integration/test_image.py), and the manifests agree with the code on services and ports."""

from __future__ import annotations

import re
import tomllib

from deploy.compile_engines import compiled_modules, compiled_paths, requirements
from services.common.config import DEFAULT_PORTS
from services.common.serve import SERVICES as SERVE_CHOICES
from tests.unit.deploy.deploy_support import GRPC_PORTS, METRICS_PORTS, ROOT, SERVICES

DOCKERFILE = ROOT / "deploy" / "Dockerfile"


def _stages() -> list[list[str]]:
    """Instructions per stage, continuation lines joined, comments dropped."""
    text = re.sub(r"\\\n", " ", DOCKERFILE.read_text())
    stages: list[list[str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.upper().startswith("FROM "):
            stages.append([])
        if stages:
            stages[-1].append(line)
    return stages


def test_multi_stage_slim_python_311() -> None:
    stages = _stages()
    assert len(stages) >= 2
    assert "ARG PYTHON_IMAGE=python:3.11-slim" in DOCKERFILE.read_text()
    for stage in stages:  # the web bundle comes built (make web): no other base to pull
        assert stage[0].startswith("FROM ${PYTHON_IMAGE}")
    assert stages[-1][0].startswith("FROM ${PYTHON_IMAGE}")


def test_runtime_stage_is_non_root_without_build_tools() -> None:
    runtime = _stages()[-1]
    text = "\n".join(runtime)
    assert "USER 10001:10001" in runtime
    assert re.search(r"useradd .*--uid 10001", text)
    assert 'ENTRYPOINT ["tabletop-serve"]' in runtime
    for build_tool in ("build-essential", "gcc", "apt-get install", "git "):
        assert build_tool not in text, build_tool
    # the environment comes whole from the engines stage (a COPY: its cache key is the content)
    assert "COPY --from=engines /opt/tabletop /opt/tabletop" in runtime
    assert "pip " not in text


def test_builder_makes_wheels_without_a_compiler() -> None:
    builder = "\n".join(_stages()[0])
    assert "pip wheel --only-binary=:all: --wheel-dir /wheels ." in builder
    # the runtime's environment installs from those wheels only
    assert "pip install --no-index --find-links=/wheels tabletop" in builder
    for build_tool in ("build-essential", "gcc", "apt-get install"):
        assert build_tool not in builder, build_tool


def test_the_engines_stage_compiles_the_listed_modules_as_make_install_does() -> None:
    (engines,) = (stage for stage in _stages() if stage[0].endswith(" AS engines"))
    text = "\n".join(engines)
    # the builder's environment, with the extensions the project's own script builds from the
    # one list (pyproject.toml), at the dev extra's mypy; and a check that Python imports them
    assert "COPY --from=builder /opt/tabletop /opt/tabletop" in engines
    assert "deploy/compile_engines.py --requirements" in text
    assert "/opt/mypyc/bin/python deploy/compile_engines.py >" in text
    assert "/opt/tabletop/bin/python deploy/compile_engines.py --check-imported" in text
    assert "$(PY) deploy/compile_engines.py >" in (ROOT / "Makefile").read_text()
    assert "!deploy/compile_engines.py" in (ROOT / ".dockerignore").read_text().splitlines()


def test_the_compiled_list_names_modules_and_the_compiler_its_pin() -> None:
    assert compiled_paths() and all((ROOT / path).is_file() for path in compiled_paths())
    assert "services.games.crashland.rules" in compiled_modules()
    dev = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    (mypy,) = (r for r in dev["dev"] if r.startswith("mypy=="))
    assert mypy in requirements()


def test_entrypoint_is_a_console_script() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "tabletop-serve" in project["scripts"]


def test_dockerignore_keeps_the_context_small() -> None:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    assert lines[lines.index("*")] == "*"  # allow-list: everything else stays out
    assert {"!pyproject.toml", "!services/", "!protos/"} <= set(lines)


def test_manifests_agree_with_the_code() -> None:
    assert set(SERVICES) == set(SERVE_CHOICES)
    for service in SERVICES:
        grpc, metrics = DEFAULT_PORTS[service]
        assert METRICS_PORTS[service] == metrics
        assert GRPC_PORTS.get(service, 0) == grpc
