"""An installation's Kafka users and their ACLs, set up as the broker's admin.

``grant`` makes the broker match the table (services/common/kafka_acls.py): it creates or
updates each user's SCRAM credential from the installation's secrets, creates the ACLs
missing and deletes those of its users that the table no longer holds, and returns once
every user can log in and the broker enforces every ACL. ``revoke`` removes their ACLs
and retires the users (a test stack's teardown).

aiokafka's admin client has no call for SCRAM credentials nor a batch of ACLs: the
requests are built here from aiokafka's protocol types (Kafka's AlterUserScramCredentials
v0, KIP-554; CreateAcls, DescribeAcls and DeleteAcls v1, which aiokafka declares) and sent
with its plain client (aiokafka version pinned in pyproject.toml).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import secrets
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import for_code
from aiokafka.protocol.admin import (
    CreateAclsRequest_v1,
    DeleteAclsRequest_v1,
    DescribeAclsRequest_v1,
)
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import (
    CompactArray,
    CompactBytes,
    CompactString,
    Int8,
    Int16,
    Int32,
    Schema,
    TaggedFields,
)

from services.common.kafka_access import KafkaAccess, wait_for_login
from services.common.kafka_acls import Acl, Operation, Pattern, Resource, acl_table, users
from services.common.logging import get_logger

log = get_logger(__name__)

#: Kafka's least for SCRAM-SHA-512 (and kafka-configs' default); a client pays it per login
SCRAM_ITERATIONS = 4096
#: how long a change may take to reach the broker's authenticator and authorizer
SETTLE_TIMEOUT_S = 15.0

_SCRAM_SHA_512 = 2  # Kafka's ScramMechanism type
_ANY, _ALLOW, _ANY_HOST = 1, 3, "*"
_NONE_ERROR = 0


class _AlterUserScramCredentialsResponse_v0(Response):  # type: ignore[misc]
    API_KEY = 51
    API_VERSION = 0
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "results",
            CompactArray(
                ("user", CompactString("utf-8")),
                ("error_code", Int16),
                ("error_message", CompactString("utf-8")),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _AlterUserScramCredentialsRequest_v0(RequestStruct):  # type: ignore[misc]
    FLEXIBLE_VERSION = True
    API_KEY = 51
    API_VERSION = 0
    RESPONSE_TYPE = _AlterUserScramCredentialsResponse_v0
    SCHEMA = Schema(
        (
            "deletions",
            CompactArray(
                ("name", CompactString("utf-8")), ("mechanism", Int8), ("tags", TaggedFields)
            ),
        ),
        (
            "upsertions",
            CompactArray(
                ("name", CompactString("utf-8")),
                ("mechanism", Int8),
                ("iterations", Int32),
                ("salt", CompactBytes),
                ("salted_password", CompactBytes),
                ("tags", TaggedFields),
            ),
        ),
        ("tags", TaggedFields),
    )


class _AlterUserScramCredentials(Request[_AlterUserScramCredentialsRequest_v0]):  # type: ignore[misc]
    API_KEY = 51

    def __init__(self, deletions: Sequence[str], upsertions: Mapping[str, str]) -> None:
        self._deletions: list[tuple[Any, ...]] = [(n, _SCRAM_SHA_512, {}) for n in deletions]
        self._upsertions = [_salted(name, password) for name, password in upsertions.items()]

    def build(
        self, request_struct_class: type[_AlterUserScramCredentialsRequest_v0]
    ) -> _AlterUserScramCredentialsRequest_v0:
        return request_struct_class(self._deletions, self._upsertions, {})


def _salted(name: str, password: str) -> tuple[Any, ...]:
    """A SCRAM credential as the broker stores it (RFC 5802's SaltedPassword): the password
    itself never leaves this process."""
    salt = secrets.token_bytes(32)
    salted = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, SCRAM_ITERATIONS)
    return (name, _SCRAM_SHA_512, SCRAM_ITERATIONS, salt, salted, {})


class _Rule(NamedTuple):
    """An ACL as the broker lists it."""

    resource_type: int
    name: str
    pattern_type: int
    principal: str
    host: str
    operation: int
    permission: int


def _rule(acl: Acl) -> _Rule:
    return _Rule(
        int(acl.resource),
        acl.name,
        int(acl.pattern),
        acl.principal,
        _ANY_HOST,
        int(acl.operation),
        _ALLOW,
    )


class _CreateAcls(Request[CreateAclsRequest_v1]):  # type: ignore[misc]
    API_KEY = 30

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self._rules = rules

    def build(self, request_struct_class: type[CreateAclsRequest_v1]) -> CreateAclsRequest_v1:
        return request_struct_class([tuple(rule) for rule in self._rules])


class _DeleteAcls(Request[DeleteAclsRequest_v1]):  # type: ignore[misc]
    """Deletes the ACLs matching each rule exactly."""

    API_KEY = 31

    def __init__(self, rules: Sequence[_Rule]) -> None:
        self._rules = rules

    def build(self, request_struct_class: type[DeleteAclsRequest_v1]) -> DeleteAclsRequest_v1:
        return request_struct_class([tuple(rule) for rule in self._rules])


class _DescribeAcls(Request[DescribeAclsRequest_v1]):  # type: ignore[misc]
    """Every ACL of one principal."""

    API_KEY = 29

    def __init__(self, principal: str) -> None:
        self._principal = principal

    def build(self, request_struct_class: type[DescribeAclsRequest_v1]) -> DescribeAclsRequest_v1:
        return request_struct_class(_ANY, None, _ANY, self._principal, None, _ANY, _ANY)


@contextlib.asynccontextmanager
async def _connected(access: KafkaAccess) -> AsyncIterator[tuple[AIOKafkaClient, int]]:
    client = AIOKafkaClient(**access.client_options())
    try:
        await client.bootstrap()
        yield client, client.get_random_node()
    finally:
        await client.close()


def _raise_for(code: int, message: str | None, what: str) -> None:
    if code != _NONE_ERROR:
        raise for_code(code)(f"{what}: {message or ''}".rstrip(": "))


async def upsert_users(admin: KafkaAccess, passwords: Mapping[str, str]) -> None:
    """Create each user, or give it this password."""
    async with _connected(admin) as (client, node):
        response = await client.send(node, _AlterUserScramCredentials((), passwords))
    for user, code, message, _ in response.results:
        _raise_for(code, message, f"user {user}")


async def retire_users(admin: KafkaAccess, names: Iterable[str]) -> None:
    """Give these users a random password nobody holds: none of them logs in again.

    Not a deletion: with Kafka 4.1 a deleted SCRAM credential takes the bootstrap users'
    (admin's, the broker's own) with it when the broker next restarts, so a broker whose
    test installations were removed let nobody in any more."""
    await upsert_users(admin, {name: secrets.token_hex(32) for name in names})


async def _describe(client: AIOKafkaClient, node: int, principal: str) -> set[_Rule]:
    response = await client.send(node, _DescribeAcls(principal))
    _raise_for(response.error_code, response.error_message, f"the ACLs of {principal}")
    return {
        _Rule(resource_type, name, pattern_type, *acl)
        for resource_type, name, pattern_type, acls in response.resources
        for acl in acls
    }


async def acls_of(admin: KafkaAccess, user_names: Iterable[str]) -> set[Acl]:
    """The ALLOW-from-anywhere ACLs the broker holds for these users, as the table writes
    them (others are left out)."""
    found: set[Acl] = set()
    async with _connected(admin) as (client, node):
        for name in user_names:
            for rule in await _describe(client, node, f"User:{name}"):
                if rule.permission == _ALLOW and rule.host == _ANY_HOST:
                    with contextlib.suppress(ValueError):
                        found.add(
                            Acl(
                                name,
                                Resource(rule.resource_type),
                                Pattern(rule.pattern_type),
                                rule.name,
                                Operation(rule.operation),
                            )
                        )
    return found


async def apply_acls(
    admin: KafkaAccess, table: Sequence[Acl], user_names: Iterable[str]
) -> tuple[int, int]:
    """Make these users' ACLs exactly ``table``'s; returns how many were created and
    deleted, once the broker enforces them."""
    principals = [f"User:{name}" for name in user_names]
    wanted = {_rule(acl) for acl in table}
    async with _connected(admin) as (client, node):
        held: set[_Rule] = set()
        for principal in principals:
            held |= await _describe(client, node, principal)
        missing, extra = sorted(wanted - held), sorted(held - wanted)
        if missing:
            response = await client.send(node, _CreateAcls(missing))
            for code, message in response.creation_responses:
                _raise_for(code, message, "creating an ACL")
        if extra:
            response = await client.send(node, _DeleteAcls(extra))
            for code, message, _ in response.filter_responses:
                _raise_for(code, message, "deleting an ACL")
        # the broker's authorizer applies a change a moment after it is committed
        deadline = asyncio.get_running_loop().time() + SETTLE_TIMEOUT_S
        while True:
            held = set()
            for principal in principals:
                held |= await _describe(client, node, principal)
            if held == wanted:
                return len(missing), len(extra)
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the broker does not list the ACLs just set")
            await asyncio.sleep(0.1)


async def wait_until_users_log_in(accesses: Iterable[KafkaAccess]) -> None:
    """Return once each user logs in (a new credential reaches the broker's authenticator a
    moment after it is committed)."""
    for access in accesses:
        await wait_for_login(access, SETTLE_TIMEOUT_S)


async def grant(admin: KafkaAccess, prefix: str, passwords: Mapping[str, str]) -> tuple[int, int]:
    """Set the installation's users (``passwords``: user → password, every one of
    ``kafka_acls.users(prefix)``) and their ACLs up; returns the ACLs created and deleted."""
    names = users(prefix)
    missing = [name for name in names if not passwords.get(name)]
    if missing:
        raise ValueError(f"no password for the Kafka users {', '.join(missing)}")
    await upsert_users(admin, {name: passwords[name] for name in names})
    await wait_until_users_log_in(admin.as_user(name, passwords[name]) for name in names)
    changed = await apply_acls(admin, acl_table(prefix), names)
    log.info("kafka_users_granted", prefix=prefix, created=changed[0], deleted=changed[1])
    return changed


async def revoke(admin: KafkaAccess, prefix: str) -> None:
    """Remove all the installation's ACLs, and retire its users."""
    names = users(prefix)
    await apply_acls(admin, [], names)
    await retire_users(admin, names)
