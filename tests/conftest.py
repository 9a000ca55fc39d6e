"""Shared pytest configuration: integration tests get a real stack (Kafka + every service)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli.stack import Stack, broker_admin
from services.common.kafka_access import KafkaAccess
from services.common.kafka_acls import BENCH, bench_space
from tests.integration.helpers import delete_topics, running, topics_named

ROOT = Path(__file__).resolve().parent.parent


def pytest_sessionstart(session: pytest.Session) -> None:
    """Refuse to test compiled engine modules older than their source (Python would
    import the stale extension, not the edited .py): ``make install`` compiles them again,
    ``make pure`` removes them."""
    stale = [
        str(compiled.relative_to(ROOT))
        for compiled in ROOT.glob("services/**/*.cpython-*.so")
        if (source := compiled.with_name(compiled.name.split(".")[0] + ".py")).exists()
        and source.stat().st_mtime > compiled.stat().st_mtime
    ]
    if stale:
        pytest.exit(
            f"compiled modules older than their .py: {', '.join(stale)}; run "
            "make install (or make pure)",
            returncode=4,
        )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.path):
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def kafka_admin() -> KafkaAccess:
    """The local broker (started if it is not running; `make test` starts it first), as its
    admin, who sets each test installation up: its topics, its users and their ACLs."""
    subprocess.run([str(ROOT / "deploy/kafka/kafka.sh"), "start"], check=True)
    return broker_admin(Path(os.environ.get("KAFKA_HOME", ROOT / ".cache/kafka")))


@pytest.fixture(scope="session")
def kafka(
    kafka_admin: KafkaAccess, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[KafkaAccess]:
    """The broker as the tests' own user (bench) of an installation of their own, for tests
    of the Kafka adapters without services: it creates, writes and reads the topics named
    ``scratch(kafka, ...)``, and nothing else."""
    scratch = Stack.ephemeral(tmp_path_factory.mktemp("scratch"), f"k{uuid.uuid4().hex[:8]}.")
    scratch.kafka = kafka_admin
    scratch.grant()
    try:
        yield scratch.kafka_as(BENCH)
    finally:
        space = bench_space(scratch.topic_prefix)
        asyncio.run(delete_topics(kafka_admin, asyncio.run(topics_named(kafka_admin, space))))
        scratch.revoke()


@pytest.fixture(scope="session", autouse=True)
def own_credentials(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The CLI run by tests keeps its player's credential in the test's scratch space, not
    the user's config dir (the test's own player, the same for the whole session)."""
    before = os.environ.get("TABLETOP_CREDENTIALS")
    path = tmp_path_factory.mktemp("credentials") / "credentials.json"
    os.environ["TABLETOP_CREDENTIALS"] = str(path)
    yield
    if before is None:
        os.environ.pop("TABLETOP_CREDENTIALS", None)
    else:
        os.environ["TABLETOP_CREDENTIALS"] = before


@pytest.fixture(scope="session")
def stack(kafka_admin: KafkaAccess, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    """Every service as a real process on free ports, with topics and Kafka users of its own."""
    prefix = f"it{uuid.uuid4().hex[:8]}."
    run_dir = tmp_path_factory.mktemp("stack")
    stack = Stack.ephemeral(run_dir, topic_prefix=prefix, partitions=3)
    stack.kafka = kafka_admin
    # Quotas generous enough for many tests from one address, admission control off (a
    # loaded machine's slow views would refuse new matches; tests leave matches unfinished);
    # test_gateway_auth and test_matches_in_play test them.
    stack.extra_env = {
        "TABLETOP_GATEWAY_MAX_IN_FLIGHT": "0",
        "TABLETOP_GATEWAY_MAX_VIEW_LAG_MS": "0",
        "TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY": "0",
        "TABLETOP_QUOTA_CREATE_PER_S": "1000",
        "TABLETOP_QUOTA_CREATE_BURST": "1000",
        "TABLETOP_QUOTA_ACTIONS_PER_S": "10000",
        "TABLETOP_QUOTA_ACTIONS_BURST": "10000",
        # every test's clients sign up from one address; tests/integration/test_players.py
        # tests these limits
        "TABLETOP_QUOTA_SIGNUP_PER_S": "1000",
        "TABLETOP_QUOTA_SIGNUP_BURST": "1000",
        "TABLETOP_GATEWAY_MAX_OPEN_LOBBIES_PER_PLAYER": "0",
        "TABLETOP_GATEWAY_MAX_OPEN_MATCHES_PER_PLAYER": "0",
    }
    with running(stack):
        yield stack
