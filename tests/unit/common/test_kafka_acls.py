"""The Kafka users of an installation and their ACLs (services/common/kafka_acls.py), checked
as the broker matches them: a LITERAL name is that name, a PREFIXED one every name it
starts, ALL any operation. Each service writes only its own stream, reads only what the
roster says it follows, and no rule reaches outside the installation's topic prefix."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.cli.stack import Stack, kafka_password_name
from services.common.kafka_acls import (
    BENCH,
    ROLES,
    Acl,
    Operation,
    Pattern,
    Resource,
    acl_table,
    bench_space,
    user_name,
    users,
)
from services.common.roster import BY_NAME, KAFKA_USERS, NAMES, ROSTER
from services.common.topics import (
    STREAMS,
    event_topic,
    projector_group,
    retry_topic,
    sessions_topic,
    snapshot_topic,
    talk_topic,
    topic_specs,
    transactional_id,
    views_topic,
)

PREFIX = "staging."
TABLE = acl_table(PREFIX)
TOPICS = [spec.name for spec in topic_specs(PREFIX)]


def allowed(user: str, resource: Resource, name: str, operation: Operation) -> bool:
    def matches(acl: Acl) -> bool:
        if acl.pattern is Pattern.PREFIXED:
            return name.startswith(acl.name)
        return name == acl.name

    return any(
        acl.user == user
        and acl.resource is resource
        and acl.operation in (operation, Operation.ALL)
        and matches(acl)
        for acl in TABLE
    )


def who(resource: Resource, name: str, operation: Operation) -> set[str]:
    return {role for role in ROLES if allowed(user_name(PREFIX, role), resource, name, operation)}


def test_every_service_of_the_roster_and_the_bench_is_a_user_with_rules() -> None:
    # every service but the bots service, a client of the gateway that reads no Kafka
    assert (*(n for n in NAMES if n != "bots"), BENCH) == ROLES
    assert users(PREFIX) == tuple(f"{PREFIX}{role}" for role in ROLES)
    assert {acl.user for acl in TABLE} == set(users(PREFIX))


@pytest.mark.parametrize("stream", STREAMS)
def test_only_the_owner_writes_its_stream_and_its_snapshots(stream: str) -> None:
    for topic in (event_topic(stream, PREFIX), snapshot_topic(stream, PREFIX)):
        assert who(Resource.TOPIC, topic, Operation.WRITE) == {stream}


def test_what_is_not_an_event_stream_has_one_writer_too() -> None:
    writers = {topic: who(Resource.TOPIC, topic, Operation.WRITE) for topic in TOPICS}
    assert writers[views_topic(PREFIX)] == {"projector"}
    assert writers[talk_topic(PREFIX)] == {"gateway"}
    # a request to fold a match again is an operator's (tabletop admin, as admin)
    assert writers.pop(retry_topic(PREFIX)) == set()
    assert all(len(names) == 1 for names in writers.values()), writers
    assert set().union(*writers.values()) == {*STREAMS, "projector", "gateway"}


@pytest.mark.parametrize("service", NAMES)
def test_a_service_reads_its_own_stream_and_those_it_follows_and_no_other(service: str) -> None:
    entry = BY_NAME[service]
    read = {s for s in STREAMS if allowed(user_name(PREFIX, service), Resource.TOPIC,
                                          event_topic(s, PREFIX), Operation.READ)}  # fmt: skip
    assert read == {*entry.follows, *([service] if entry.stream else [])}


def test_the_projector_follows_every_stream_the_gateway_reads_views_talk_and_sessions() -> None:
    assert set(BY_NAME["projector"].follows) == set(STREAMS)
    gateway = user_name(PREFIX, "gateway")
    assert {t for t in TOPICS if allowed(gateway, Resource.TOPIC, t, Operation.READ)} == {
        views_topic(PREFIX),
        talk_topic(PREFIX),
        sessions_topic(PREFIX),
    }
    # talk and refresh trades are the topics the gateway writes, and only the gateway
    assert {t for t in TOPICS if allowed(gateway, Resource.TOPIC, t, Operation.WRITE)} == {
        talk_topic(PREFIX),
        sessions_topic(PREFIX),
    }
    assert who(Resource.TOPIC, sessions_topic(PREFIX), Operation.WRITE) == {"gateway"}


@pytest.mark.parametrize("service", [s.name for s in ROSTER if s.stream])
def test_a_stream_writers_transactional_ids_are_its_own(service: str) -> None:
    shards = range(12) if BY_NAME[service].sharded else [None]
    for shard in shards:
        txn = transactional_id(service, PREFIX, shard)
        assert who(Resource.TRANSACTIONAL_ID, txn, Operation.WRITE) == {service}, txn
    # another installation's ids on the same broker are not its own
    other = transactional_id(service, "prod.", 0 if BY_NAME[service].sharded else None)
    assert who(Resource.TRANSACTIONAL_ID, other, Operation.WRITE) == set()


def test_only_the_projector_joins_the_projectors_group() -> None:
    assert who(Resource.GROUP, projector_group(PREFIX), Operation.READ) == {"projector"}


def test_the_bench_reads_every_topic_and_writes_only_its_own() -> None:
    bench = user_name(PREFIX, BENCH)
    assert all(allowed(bench, Resource.TOPIC, t, Operation.READ) for t in TOPICS)
    assert not any(allowed(bench, Resource.TOPIC, t, Operation.WRITE) for t in TOPICS)
    scratch = f"{bench_space(PREFIX)}floor"
    for resource in Resource:
        assert who(resource, scratch, Operation.WRITE) == {BENCH}


def test_no_rule_reaches_outside_the_installation() -> None:
    assert all(acl.name.startswith(PREFIX) and acl.user.startswith(PREFIX) for acl in TABLE)
    assert all(acl.name != "*" for acl in acl_table(""))
    assert not any(acl.operation is Operation.ALL for acl in TABLE if not acl.user.endswith(BENCH))
    # with no prefix (a cluster of its own) the bench's space is still a prefix of names
    assert bench_space("") == "bench."


def test_a_stack_keeps_a_password_per_user_and_gives_each_service_only_its_own(
    tmp_path: Path,
) -> None:
    stack = Stack.ephemeral(tmp_path, PREFIX)
    held = stack.secrets()
    passwords = stack.kafka_passwords()
    assert set(passwords) == set(users(PREFIX))
    assert len(set(passwords.values())) == len(ROLES)
    assert all(len(p) == 64 for p in passwords.values())
    assert not [k for k in stack.env("bots") if k.startswith("TABLETOP_KAFKA_PASSWORD")]
    for service in KAFKA_USERS:
        env = stack.env(service)
        assert env["TABLETOP_KAFKA_USERNAME"] == f"{PREFIX}{service}"
        assert env["TABLETOP_KAFKA_PASSWORD"] == held[kafka_password_name(service)]
        others = {p for role, p in zip(ROLES, passwords.values(), strict=True) if role != service}
        assert not others & set(env.values())
        assert not [k for k in env if k.startswith("TABLETOP_KAFKA_ADMIN_")]


def test_a_run_folder_from_before_the_kafka_users_gets_their_passwords(tmp_path: Path) -> None:
    (tmp_path / "secrets.env").write_text("TABLETOP_SECRET=kept\n")
    held = Stack(tmp_path).secrets()
    assert held["TABLETOP_SECRET"] == "kept"
    assert all(kafka_password_name(role) in held for role in ROLES)
    assert (tmp_path / "secrets.env").stat().st_mode & 0o777 == 0o600
    assert Stack(tmp_path).secrets() == held
