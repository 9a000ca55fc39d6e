"""The service entry point's process-wide settings, checked in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = (
    "import json, os, sys; import services.common.serve; "
    "print(json.dumps([os.environ.get('GRPC_EXPERIMENTS'), 'grpc' in sys.modules]))"
)


def _import_serve(**env: str) -> tuple[str | None, bool]:
    clean = {k: v for k, v in os.environ.items() if k != "GRPC_EXPERIMENTS"}
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    experiments, grpc_imported = json.loads(out)
    return experiments, grpc_imported


def test_services_use_grpcs_classic_endpoints_set_before_grpc_reads_them() -> None:
    experiments, grpc_imported = _import_serve()
    assert experiments == "-event_engine_listener,-event_engine_client"
    assert not grpc_imported  # grpc reads its experiments once, when it starts


def test_an_operators_own_grpc_experiments_are_kept() -> None:
    assert _import_serve(GRPC_EXPERIMENTS="")[0] == ""
