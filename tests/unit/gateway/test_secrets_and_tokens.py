"""No guessable secrets; tokens signed with PyJWT; token-bucket quotas."""

from __future__ import annotations

import datetime
import subprocess
import sys
import time

import jwt
import jwt.api_jwt
import pytest

from services.common.config import Config, ConfigError
from services.common.kafka_access import NoPassword
from services.gateway.auth import (
    BadToken,
    Quota,
    Role,
    Tokens,
    TooLong,
    bearer,
    bounded,
    bounded_options,
    creation,
)

KEY = b"k" * 32
RANDOM = "0123456789abcdef" * 4


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    names = (
        "SECRET",
        "TOKEN_KEY",
        "PEER_TOKEN",
        "BOTS_TOKEN",
        "DEV_STACK",
        "GRPC_HOST",
        "KAFKA_PASSWORD",
    )
    for name in names:
        monkeypatch.delenv(f"TABLETOP_{name}", raising=False)
    return monkeypatch


@pytest.mark.parametrize("service", ["dice", "decks", "board", "scoring", "gateway", "bots"])
def test_a_service_without_its_secrets_refuses_to_start(
    clean_env: pytest.MonkeyPatch, service: str
) -> None:
    with pytest.raises(ConfigError, match="no usable default"):
        Config.from_env(service)


def test_a_short_secret_is_refused(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLETOP_SECRET", "password")
    clean_env.setenv("TABLETOP_PEER_TOKEN", RANDOM)
    with pytest.raises(ConfigError, match="too short"):
        Config.from_env("dice")


def test_given_secrets_are_used(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLETOP_SECRET", RANDOM)
    clean_env.setenv("TABLETOP_PEER_TOKEN", RANDOM[::-1])
    clean_env.setenv("TABLETOP_KAFKA_PASSWORD", "kafka-" + RANDOM)
    config = Config.from_env("dice")
    assert config.secret == RANDOM.encode() and config.peer_token == RANDOM[::-1].encode()
    assert config.kafka.credentials() == ("dice", "kafka-" + RANDOM)


@pytest.mark.parametrize("service", ["dice", "board", "projector", "gateway"])
def test_a_service_without_its_kafka_password_refuses_to_start(
    clean_env: pytest.MonkeyPatch, service: str
) -> None:
    for name in ("SECRET", "TOKEN_KEY", "PEER_TOKEN", "BOTS_TOKEN"):
        clean_env.setenv(f"TABLETOP_{name}", RANDOM)
    with pytest.raises(ConfigError, match="TABLETOP_KAFKA_PASSWORD is not set"):
        Config.from_env(service)


def test_the_bots_service_needs_no_kafka_password(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLETOP_BOTS_TOKEN", RANDOM)
    assert Config.from_env("bots").bots_token == RANDOM.encode()


def test_a_service_is_its_own_kafka_user_in_its_installation(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("TABLETOP_KAFKA_PASSWORD", RANDOM)
    clean_env.setenv("TABLETOP_TOPIC_PREFIX", "staging.")
    assert Config.from_env("projector").kafka.username == "staging.projector"
    clean_env.setenv("TABLETOP_KAFKA_USERNAME", "views-folder")
    assert Config.from_env("projector").kafka.username == "views-folder"


def test_a_dev_stack_without_a_kafka_password_fails_only_when_it_connects(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("TABLETOP_DEV_STACK", "1")
    kafka = Config.from_env("gateway").kafka
    with pytest.raises(NoPassword, match="no Kafka password for the user gateway"):
        kafka.client_options()


def test_a_dev_stack_has_defaults_on_loopback_only(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("TABLETOP_DEV_STACK", "1")
    assert b"dev-stack-only" in Config.from_env("dice").secret
    clean_env.setenv("TABLETOP_GRPC_HOST", "0.0.0.0")
    with pytest.raises(ConfigError, match="loopback"):
        Config.from_env("dice")


def test_the_process_exits_with_the_reason(clean_env: pytest.MonkeyPatch) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "services.common.serve", "dice"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "TABLETOP_SECRET is not set" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_token_carries_match_seat_role_and_expiry() -> None:
    tokens = Tokens(KEY, 60)
    token, issued = tokens.issue("m1", Role.SEAT, "client", "ana")
    claims = tokens.verify(token)
    assert (claims.match_id, claims.seat, claims.role, claims.subject) == (
        "m1",
        "ana",
        Role.SEAT,
        "client",
    )
    assert claims == issued


def test_expired_foreign_and_unsigned_tokens_are_refused() -> None:
    tokens = Tokens(KEY, 60)
    expired, _ = tokens.issue("m1", Role.SEAT, "c", "ana", now=1_000)
    with pytest.raises(BadToken, match="expired"):
        tokens.verify(expired)
    other, _ = Tokens(b"o" * 32, 60).issue("m1", Role.SEAT, "c", "ana")
    with pytest.raises(BadToken):
        tokens.verify(other)
    import jwt

    unsigned = jwt.encode(
        {"m": "m1", "r": "seat", "s": "ana", "sub": "c", "jti": "j", "iss": "tabletop-gateway"},
        key="",
        algorithm="none",
    )
    with pytest.raises(BadToken):
        tokens.verify(unsigned)


def test_a_token_verified_once_is_still_refused_once_it_expires(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def clock(at: float) -> None:  # ours and PyJWT's
        monkeypatch.setattr(time, "time", lambda: at)
        monkeypatch.setattr(jwt.api_jwt, "datetime", _FrozenDatetime(at))

    tokens = Tokens(KEY, 60)
    token, _ = tokens.issue("m1", Role.SEAT, "c", "ana", now=1_000)
    clock(1_030)
    assert tokens.verify(token).seat == "ana"
    assert tokens.verify(token).seat == "ana"  # the second time without PyJWT
    clock(1_060)
    with pytest.raises(BadToken, match="expired"):
        tokens.verify(token)


class _FrozenDatetime:
    """PyJWT's clock (``datetime.now``) at a fixed time."""

    def __init__(self, at: float) -> None:
        self._at = at

    def now(self, tz: datetime.tzinfo | None = None) -> datetime.datetime:
        return datetime.datetime.fromtimestamp(self._at, tz)


def test_a_retried_create_derives_the_same_ids_which_do_not_reveal_its_command_id() -> None:
    first, again = creation(KEY, "p", RANDOM), creation(KEY, "p", RANDOM)
    assert first == again
    assert creation(KEY, "p", RANDOM[::-1]).match_id != first.match_id
    assert creation(b"o" * 32, "p", RANDOM).match_id != first.match_id
    assert creation(KEY, "q", RANDOM).match_id != first.match_id  # another player's
    assert RANDOM not in first.command_id and first.command_id.startswith("create:")


def test_bearer_metadata() -> None:
    assert bearer((("authorization", "Bearer abc"),)) == "abc"
    assert bearer((("x-other", "1"),)) is None
    with pytest.raises(BadToken):
        bearer((("authorization", "Basic abc"),))


def test_a_token_bucket_refills_at_its_rate() -> None:
    quota = Quota(rate=2.0, burst=3)
    assert [quota.take("a", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = quota.take("a", now=0.0)
    assert wait == pytest.approx(0.5)
    assert quota.take("b", now=0.0) == 0.0  # per client
    assert quota.take("a", now=0.5) == 0.0


def test_bounds_name_the_field_never_the_value() -> None:
    with pytest.raises(TooLong) as long:
        bounded("match_id", "x" * 1000, 64)
    assert "match_id" in str(long.value) and "xxxx" not in str(long.value)
    with pytest.raises(TooLong):
        bounded_options({str(i): "v" for i in range(100)})
