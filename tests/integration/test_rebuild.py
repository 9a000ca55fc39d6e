"""Rebuilding every read model from offset 0 gives the views the live projector serves."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from services.cli.client import GatewayClient
from services.cli.stack import Stack
from tests.integration.helpers import play_bot_match

ROOT = Path(__file__).resolve().parents[2]


def test_a_rebuild_from_offset_zero_equals_the_live_views(stack: Stack) -> None:
    client = GatewayClient(stack.addr("gateway"))
    play_bot_match(client, "crashland", ["solo"], seed=31)
    play_bot_match(client, "drillit", ["x", "y"], seed=32, options={"difficulty": "hard"})
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli.main",
            "--gateway",
            stack.addr("gateway"),
            "admin",
            "rebuild-compare",
            "--topic-prefix",
            stack.topic_prefix,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={
            **stack.admin_env(),
            "TABLETOP_TOKEN_KEY": stack.secrets()["TABLETOP_TOKEN_KEY"],
            "PATH": "/usr/bin:/bin",
        },
    )
    report = json.loads(done.stdout)
    assert done.returncode == 0, report["differences"]
    assert report["matches"] >= 2 and report["compared"] >= 5
    assert report["differences"] == []
