"""Who connects to Kafka, and where: the one thing every Kafka client of ours is built from.

The broker takes no connection without authentication (SASL/SCRAM-SHA-512): each service
is a user of its own (``services.common.kafka_acls`` says what each may do), so a client
is a bootstrap address and the user it connects as, never a bare address.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiokafka.client import AIOKafkaClient

#: the SASL mechanism of every client: a salted challenge-response, so the password never
#: crosses the wire, and users are added to a running cluster without restarting it
MECHANISM = "SCRAM-SHA-512"
SECURITY_PROTOCOL = "SASL_PLAINTEXT"
#: how long a service starting waits for its user to log in: the installation's setup
#: creates the users, and in Kubernetes its Job may still be running
LOGIN_PATIENCE_S = 300.0


class NoPassword(ValueError):
    """A client was to connect without a password (a dev stack's process given none)."""


@dataclass(frozen=True)
class KafkaAccess:
    bootstrap: str
    username: str
    password: str = field(repr=False)

    def credentials(self) -> tuple[str, str]:
        """(username, password), for a client about to connect."""
        if not self.password:
            raise NoPassword(f"no Kafka password for the user {self.username[:64]}")
        return self.username, self.password

    def client_options(self) -> dict[str, Any]:
        """aiokafka's keyword arguments for a producer, consumer, admin or plain client."""
        username, password = self.credentials()
        return {
            "bootstrap_servers": self.bootstrap,
            "security_protocol": SECURITY_PROTOCOL,
            "sasl_mechanism": MECHANISM,
            "sasl_plain_username": username,
            "sasl_plain_password": password,
        }

    def as_user(self, username: str, password: str) -> KafkaAccess:
        """The same brokers, as another user."""
        return KafkaAccess(self.bootstrap, username, password)


def _not_a_failed_connection(record: logging.LogRecord) -> bool:
    return not str(record.msg).startswith("Unable connect to")


async def log_in(access: KafkaAccess) -> None:
    """Connect as the user once; raises what went wrong (a broker away, a user refused),
    which aiokafka would also log as an error: the caller says what a refusal means."""
    client = AIOKafkaClient(**access.client_options())
    aiokafka_log = logging.getLogger("aiokafka")  # its client logs under this name
    aiokafka_log.addFilter(_not_a_failed_connection)
    try:
        await client.bootstrap()
    finally:
        aiokafka_log.removeFilter(_not_a_failed_connection)
        await client.close()


async def wait_for_login(
    access: KafkaAccess,
    patience_s: float = LOGIN_PATIENCE_S,
    waiting: Callable[[BaseException], None] = lambda error: None,
) -> None:
    """Return once the user logs in; ``waiting`` hears of each refusal meanwhile. After
    ``patience_s`` the last refusal is raised."""
    deadline = time.monotonic() + patience_s
    while True:
        try:
            await log_in(access)
            return
        except NoPassword:
            raise
        except Exception as error:
            if time.monotonic() > deadline:
                raise
            waiting(error)
            await asyncio.sleep(1.0)
