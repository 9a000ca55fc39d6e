"""The capacity run's load generators against the real systems, for a few seconds: the Go
generator sets up matches of every game through a real gateway, their seats play random
legal actions (parameters sampled) and see their views; the idle step and the watch
streams are measured; boardgame.io's node client does the same against a real peer.
Correctness only: no timing is asserted."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess

import pytest

from services.cli.stack import Stack
from tests.bench.boardgameio import install
from tests.bench.human.build import GeneratorUnavailable, build, go_binary
from tests.bench.human.capacity import GENERATOR, CapacityRun, CapacitySizes
from tests.bench.human.generator import Shape
from tests.bench.human.run import PEER_SYSTEM, peer_capacity, tabletop_capacity
from tests.bench.suite import PEER_CACHE

SHAPE = Shape(think_mean_s=0.3, think_min_s=0.05, rpc_timeout_s=30)
SIZES = CapacitySizes(
    steps=(4, 8),
    hold_s=4.0,
    settle_s=1.0,
    idle_matches=8,
    idle_s=2.0,
    watch_batch=6,
    warm_s=2.0,
    past_failure=True,  # a loaded machine may miss the p99 bound: the test is not about it
)


def check_run(run: CapacityRun, games: set[str]) -> None:
    assert not run.error, run.error
    assert run.baseline is not None and run.idle is not None
    assert run.idle.matches == SIZES.idle_matches
    assert int(run.idle.setup["ready"]) == SIZES.idle_matches
    assert int(run.idle.load.get("actions", 0)) == 0  # nobody acts in the idle step
    assert [step.matches for step in run.steps] == list(SIZES.steps)
    for step in run.steps:
        assert step.errors() == 0, (step.load["errors"], step.setup)
        assert step.refusals() == 0, step.load["refusals"]
        assert len(step.load["view_ms"]) == step.load["actions"] > 0
        assert GENERATOR in step.cpu_s and GENERATOR in step.rss_end
    played = {game for step in run.steps for game, n in step.load["actions_by_game"].items() if n}
    assert played == games
    opened = [batch for batch in run.watch if batch.streams > 0]
    assert [batch.streams for batch in opened] == [SIZES.watch_batch] * 2
    assert run.watch[-1].label == "all closed"


def built() -> None:
    try:
        build()
    except GeneratorUnavailable as error:
        if shutil.which("go") is None:
            pytest.skip(str(error))
        raise


@pytest.mark.integration
def test_the_generators_own_tests_pass() -> None:
    """loadgen/*_test.go: parameters drawn in range, refusals told from failures, each
    other stream's view counted once (go test, in the build folder with its generated code)."""
    built()
    binary = build()
    done = subprocess.run(
        [go_binary(), "test", "./..."],
        cwd=binary.parent,
        env={**os.environ, "GOTOOLCHAIN": "local", "GOFLAGS": "-buildvcs=false"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@pytest.mark.integration
def test_tabletop_at_human_pace(stack: Stack) -> None:
    built()
    run = asyncio.run(tabletop_capacity(stack, SHAPE, SIZES, lambda _: None))
    check_run(run, set(SHAPE.seats))
    assert {"gateway", "board", "projector", "kafka"} <= set(run.steps[0].cpu_s)
    # every service's garbage collections were read from its metrics in each window
    assert all(run.steps[0].gc_pauses[name] for name in ("gateway", "board", "projector"))
    others = [ms for step in run.steps for ms in step.load["others_ms"]]
    assert others  # the other seats and the spectators saw the actions too


@pytest.mark.integration
def test_boardgameio_at_human_pace() -> None:
    if shutil.which("node") is None:
        pytest.skip("node is not installed")
    run = asyncio.run(peer_capacity(install(PEER_CACHE), SHAPE, SIZES, lambda _: None))
    assert run.system == PEER_SYSTEM
    check_run(run, {"dicetable"})
    assert "boardgame.io server" in run.steps[0].cpu_s
