"""The Kafka users of an installation and what each may do: the ACL table, from the roster.

Every service is a user of its own, ``<topic prefix><service>`` (installations sharing a
broker have users of their own, as they have topics of their own), allowed exactly this:

- a service that owns an event stream writes and reads its events and snapshots, under
  its transactional ids; nobody else writes them;
- a service reads the streams the roster says it follows (``Service.follows``);
- the projector reads what it folds and writes the views, its dead letters and its
  table's changelog, in its consumer group; the gateway reads the views, and writes and
  reads table talk (the only writer of ``talk.events``);
- ``bench`` (the benchmarks' and tests' user) reads every topic of the installation and
  owns what it names ``<prefix>bench.*`` (scratch topics, their groups and transactions).

The broker (deploy/kafka) allows nothing else (``allow.everyone.if.no.acl.found=false``);
its super users are the broker itself and ``admin``, which creates topics, users and ACLs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import IntEnum

from services.common.roster import ROSTER, Service
from services.common.topics import (
    PROJECTOR_TABLES,
    changelog_topic,
    dead_letter_topic,
    event_topic,
    faust_leader_topic,
    projector_group,
    retry_topic,
    sessions_topic,
    snapshot_topic,
    talk_topic,
    topic_specs,
    transactional_id,
    views_topic,
)

#: the broker's super user that sets an installation up (deploy/kafka/server.properties.in)
ADMIN = "admin"
#: the benchmarks' and tests' own user
BENCH = "bench"
#: an installation's users, by role: one per service, and the bench's
ROLES = (*(s.name for s in ROSTER if s.kafka), BENCH)


class Resource(IntEnum):
    """Kafka's resource types, as the protocol numbers them."""

    TOPIC = 2
    GROUP = 3
    TRANSACTIONAL_ID = 5


class Pattern(IntEnum):
    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    """The operations granted here (READ and WRITE imply DESCRIBE)."""

    ALL = 2
    READ = 3
    WRITE = 4


@dataclass(frozen=True, order=True)
class Acl:
    """One ALLOW rule, from any host."""

    user: str
    resource: Resource
    pattern: Pattern
    name: str
    operation: Operation

    @property
    def principal(self) -> str:
        return f"User:{self.user}"

    def __str__(self) -> str:
        star = "*" if self.pattern is Pattern.PREFIXED else ""
        return f"{self.user} {self.operation.name} {self.resource.name} {self.name}{star}"


def user_name(prefix: str, name: str) -> str:
    return f"{prefix}{name}"


def users(prefix: str = "") -> tuple[str, ...]:
    """The installation's users: one per service, and the bench's."""
    return tuple(user_name(prefix, role) for role in ROLES)


def bench_space(prefix: str = "") -> str:
    """The names (topics, groups, transactional ids) the bench user owns start so."""
    return f"{user_name(prefix, BENCH)}."


def acl_table(prefix: str = "") -> list[Acl]:
    """Every ACL of the installation with this topic prefix, sorted."""
    acls = [acl for service in ROSTER if service.kafka for acl in _service_acls(service, prefix)]
    acls += _bench_acls(prefix)
    return sorted(set(acls))


def _service_acls(service: Service, prefix: str) -> Iterator[Acl]:
    user = user_name(prefix, service.name)

    def topic(name: str, *operations: Operation) -> Iterator[Acl]:
        for operation in operations:
            yield Acl(user, Resource.TOPIC, Pattern.LITERAL, name, operation)

    read, write = Operation.READ, Operation.WRITE
    if service.stream:
        yield from topic(event_topic(service.name, prefix), read, write)
        yield from topic(snapshot_topic(service.name, prefix), read, write)
        txn = transactional_id(service.name, prefix)
        if service.sharded:  # one id per shard: <id>-0, <id>-1...
            yield Acl(user, Resource.TRANSACTIONAL_ID, Pattern.PREFIXED, f"{txn}-", write)
        else:
            yield Acl(user, Resource.TRANSACTIONAL_ID, Pattern.LITERAL, txn, write)
    for stream in service.follows:
        yield from topic(event_topic(stream, prefix), read)
    yield from _ROLES.get(service.name, _no_more)(user, prefix)


def _projector(user: str, prefix: str) -> Iterator[Acl]:
    read, write = Operation.READ, Operation.WRITE
    own = [
        dead_letter_topic(prefix),  # written, and read back for the outstanding gauge
        faust_leader_topic(prefix),
        *(changelog_topic(table, prefix) for table in PROJECTOR_TABLES),
    ]
    for name in own:
        yield Acl(user, Resource.TOPIC, Pattern.LITERAL, name, read)
        yield Acl(user, Resource.TOPIC, Pattern.LITERAL, name, write)
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, views_topic(prefix), write)
    # an operator's request to fold a match again (``tabletop admin deadletter retry``)
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, retry_topic(prefix), read)
    yield Acl(user, Resource.GROUP, Pattern.LITERAL, projector_group(prefix), read)


def _gateway(user: str, prefix: str) -> Iterator[Acl]:
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, views_topic(prefix), Operation.READ)
    # table talk: appended by an idempotent producer (no transactions), followed by every
    # replica from the beginning (no consumer group)
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, talk_topic(prefix), Operation.READ)
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, talk_topic(prefix), Operation.WRITE)
    # refresh-token trades: the same, so every replica folds every replica's claims
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, sessions_topic(prefix), Operation.READ)
    yield Acl(user, Resource.TOPIC, Pattern.LITERAL, sessions_topic(prefix), Operation.WRITE)


def _no_more(user: str, prefix: str) -> Iterator[Acl]:
    return iter(())


#: what a service does beyond owning and following streams
_ROLES: dict[str, Callable[[str, str], Iterator[Acl]]] = {
    "projector": _projector,
    "gateway": _gateway,
}


def _bench_acls(prefix: str) -> Iterator[Acl]:
    user = user_name(prefix, BENCH)
    for spec in topic_specs(prefix):
        yield Acl(user, Resource.TOPIC, Pattern.LITERAL, spec.name, Operation.READ)
    for resource in Resource:
        yield Acl(user, resource, Pattern.PREFIXED, bench_space(prefix), Operation.ALL)
