"""A dead-lettered match does not stay frozen: with a projector whose fold fails for one
game (a bug of that build), that game's match is dead-lettered while the others go on
(its players, whose gateway shows the board's acknowledged updates, play on);
``tabletop admin deadletter list`` names it; a retry before the fix dead-letters it again
without stopping the stream; after the fix a retry folds it from its events, its views
catch up, the outstanding gauge returns to 0 and rebuild-compare finds no difference."""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from services.cli.client import GatewayClient, play_on
from services.cli.stack import Stack
from services.common.topics import topic_specs
from tests.integration.helpers import delete_topics, newest_published, play_bot_match

ROOT = Path(__file__).resolve().parents[2]
POISONED_GAME = "drillit"

#: loaded by the projector's interpreter only (PYTHONPATH): while the marker file names a
#: game, folding that game's board events from the third on fails, as a bug would
SITECUSTOMIZE = """
import os, sys
if sys.argv[-1:] == ["projector"]:
    from services.projector import app

    marker = os.environ["TABLETOP_TEST_POISON_FILE"]
    original = app.ProjectionFolder.fold

    def fold(self, envelope):
        with open(marker) as f:
            poisoned = f.read().split()
        if envelope.stream == "board" and envelope.sequence >= 3 and envelope.game in poisoned:
            raise RuntimeError("a bug in this build's fold")
        return original(self, envelope)

    app.ProjectionFolder.fold = fold
"""


@pytest.fixture
def poisoned_stack(kafka: str, tmp_path: Path) -> Iterator[tuple[Stack, Path]]:
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    marker = tmp_path / "poisoned"
    marker.write_text(POISONED_GAME)
    prefix = f"dlq{uuid.uuid4().hex[:8]}."
    stack = Stack.ephemeral(tmp_path / "run", topic_prefix=prefix, partitions=2)
    stack.kafka_bootstrap = kafka
    stack.extra_env = {
        "PYTHONPATH": f"{hooks}:{ROOT}",
        "TABLETOP_TEST_POISON_FILE": str(marker),
        "TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "0",
        "TABLETOP_QUOTA_CREATE_BURST": "100",
    }
    try:
        stack.up()
        yield stack, marker
    except BaseException:
        print((tmp_path / "run" / "projector.log").read_text()[-4000:])
        raise
    finally:
        stack.down()
        asyncio.run(delete_topics(kafka, [s.name for s in topic_specs(prefix, 2)]))


def admin(stack: Stack, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli.main",
            "--gateway",
            stack.addr("gateway"),
            "admin",
            *args,
            "--topic-prefix",
            stack.topic_prefix,
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={
            "TABLETOP_KAFKA_BOOTSTRAP": stack.kafka_bootstrap,
            "TABLETOP_TOKEN_KEY": stack.secrets()["TABLETOP_TOKEN_KEY"],
            "PATH": "/usr/bin:/bin",
        },
    )


def listed(stack: Stack) -> dict[str, dict[str, Any]]:
    done = admin(stack, "deadletter", "list")
    assert done.returncode == 0, done.stderr
    return {o["match_id"]: o for o in json.loads(done.stdout)}


def eventually(check: Callable[[], bool], limit_s: float = 60.0) -> None:
    deadline = time.monotonic() + limit_s
    while not check():
        assert time.monotonic() < deadline, "not reached in time"
        time.sleep(0.5)


def gauge(stack: Stack) -> float:
    with urllib.request.urlopen(f"http://{stack.metrics_addr('projector')}/metrics") as r:
        for line in r.read().decode().splitlines():
            if line.startswith("tabletop_projector_dead_lettered_matches "):
                return float(line.split()[1])
    return -1.0


def _published_version(stack: Stack, match_id: str) -> int:
    update = newest_published(stack, match_id)
    return 0 if update is None else update.summary.version


def test_a_dead_lettered_match_is_folded_again_once_fixed(
    poisoned_stack: tuple[Stack, Path],
) -> None:
    stack, marker = poisoned_stack
    client = GatewayClient(stack.addr("gateway"))
    rng = random.Random(3)
    frozen = client.create(POISONED_GAME, ["x", "y"], {}, bots=["x", "y"])
    client.join_all(frozen, ["x", "y"])
    _, end = play_on(client, frozen, "x", lambda _, legal: rng.choice(list(legal.actions)))
    assert end.next.finished
    play_bot_match(client, "crashland", ["solo"], seed=4)  # the others go on
    eventually(lambda: frozen in listed(stack))
    letter = listed(stack)[frozen]
    assert letter["reason"] == "fold_error" and letter["sequence"] == 3
    assert "a bug in this build's fold" in letter["error"]
    # the read model stopped short of the end: the prefix before the poisoned event is
    # published (the projector's views and dead letters are separate topics, so one being
    # readable does not make the other so at the same instant)
    eventually(lambda: 0 < _published_version(stack, frozen) < end.version, limit_s=30)
    assert client.view(frozen, "").version == end.version  # the players' gateway's did not
    eventually(lambda: gauge(stack) == 1.0)

    # Retried before the fix: set aside again, and the stream goes on.
    first_offset = letter["last_offset"]
    assert admin(stack, "deadletter", "retry", frozen).returncode == 0
    eventually(lambda: listed(stack)[frozen]["last_offset"] > first_offset)
    play_bot_match(client, "crashland", ["solo"], seed=5)

    # The fixed build: a retry (of every match listed) folds it whole from its events.
    marker.write_text("")
    retried = admin(stack, "deadletter", "retry")
    assert json.loads(retried.stdout) == {"retried": [frozen]}
    eventually(lambda: not listed(stack))
    # the read model has the whole match now
    eventually(lambda: _published_version(stack, frozen) == end.version)
    eventually(lambda: gauge(stack) == 0.0)
    compared = admin(stack, "rebuild-compare")
    report = json.loads(compared.stdout)
    assert report["differences"] == [] and compared.returncode == 0
    assert report["matches"] == 3
