"""Identity at the edge: signed tokens, quotas and input bounds.

Tokens are JWTs (PyJWT, HS256 with ``TABLETOP_TOKEN_KEY``). A player's session is an
access token (``typ`` access, role player: the player in ``sub``, a short expiry) and a
refresh token (``typ`` refresh: its family and generation, traded once; services/gateway/
players.py). A match's tokens (seat, spectator, creator) carry the match, the role, the
seat, the player or client id (``sub``), a token id and an expiry. They travel as gRPC
metadata ``authorization: Bearer <token>``. Verification is stateless, so every gateway
replica accepts every other replica's tokens; each kind is told by its ``typ``, so none
passes for another (a refresh token is never accepted with a call).
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import jwt

from tabletop.v1 import gateway_pb2

ALGORITHM = "HS256"
ISSUER = "tabletop-gateway"
#: how long a player's access token and refresh token live
ACCESS_TTL_S = 15 * 60
REFRESH_TTL_S = 30 * 24 * 3600
#: the ``typ`` of a session's tokens (a match's tokens have none)
ACCESS, REFRESH = "access", "refresh"
#: who vouched for a player signed in with a device credential
DEVICE_PROVIDER = "device"


class Role(StrEnum):
    CREATOR = "creator"  # may take a free seat of its match; sees as a spectator
    SEAT = "seat"  # acts and sees for one seat
    SPECTATOR = "spectator"  # sees the spectator view
    PLAYER = "player"  # a player's access token: who the caller is, no match of its own


@dataclass(frozen=True)
class Claims:
    match_id: str
    role: Role
    seat: str
    subject: str
    token_id: str
    expires_at: int
    #: the match version that recorded this token's join (0: not a seat join)
    version: int = 0


@dataclass(frozen=True)
class Refresh:
    """A verified refresh token."""

    player: str
    family: str
    generation: int
    expires_at: int
    provider: str


class BadToken(Exception):
    """The presented token is missing, expired, tampered with or malformed."""


#: verified tokens remembered (a client sends the same token with every action)
VERIFIED_KEPT = 10_000


class Tokens:
    def __init__(
        self,
        key: bytes,
        ttl_seconds: int,
        access_ttl_s: int = ACCESS_TTL_S,
        refresh_ttl_s: int = REFRESH_TTL_S,
    ) -> None:
        self._key = key
        self._ttl = ttl_seconds
        self._access_ttl = access_ttl_s
        self._refresh_ttl = refresh_ttl_s
        #: token → its claims, once its signature checked out (PyJWT's decode costs about
        #: a third of a millisecond; the expiry is checked again on every use)
        self._verified: OrderedDict[str, Claims] = OrderedDict()

    def issue(
        self,
        match_id: str,
        role: Role,
        subject: str,
        seat: str = "",
        now: float | None = None,
        token_id: str | None = None,
        version: int = 0,
    ) -> tuple[str, Claims]:
        issued = int(now if now is not None else time.time())
        token_id = token_id or uuid.uuid4().hex
        claims = Claims(match_id, role, seat, subject, token_id, issued + self._ttl, version)
        payload = {
            "iss": ISSUER,
            "sub": subject,
            "jti": claims.token_id,
            "iat": issued,
            "exp": claims.expires_at,
            "m": match_id,
            "r": role.value,
            "s": seat,
            "v": version,
        }
        return jwt.encode(payload, self._key, algorithm=ALGORITHM), claims

    def session(
        self,
        player: str,
        family: str,
        generation: int,
        provider: str = DEVICE_PROVIDER,
        now: float | None = None,
    ) -> gateway_pb2.Session:
        """A player's session: an access token, and the refresh token of ``family`` at
        ``generation`` (services/gateway/players.py ``Sessions`` says which it may trade)."""
        issued = int(now if now is not None else time.time())
        common: dict[str, Any] = {"iss": ISSUER, "sub": player, "iat": issued, "pv": provider}
        access: dict[str, Any] = {
            **common,
            "typ": ACCESS,
            "jti": uuid.uuid4().hex,
            "exp": issued + self._access_ttl,
            "r": Role.PLAYER.value,
            "m": "",
            "s": "",
        }
        refresh: dict[str, Any] = {
            **common,
            "typ": REFRESH,
            "jti": uuid.uuid4().hex,
            "exp": issued + self._refresh_ttl,
            "f": family,
            "g": generation,
        }
        return gateway_pb2.Session(
            player_id=player,
            access_token=jwt.encode(access, self._key, algorithm=ALGORITHM),
            access_expires_at=access["exp"],
            refresh_token=jwt.encode(refresh, self._key, algorithm=ALGORITHM),
            refresh_expires_at=refresh["exp"],
            provider=provider,
        )

    def verify_refresh(self, token: str) -> Refresh:
        """A refresh token's claims; BadToken for anything else (an access token too)."""
        payload = self._payload(token, "the refresh token has expired; sign in again")
        if payload.get("typ") != REFRESH:
            raise BadToken("not a refresh token (RefreshSession takes a session's refresh token)")
        try:
            return Refresh(
                player=str(payload["sub"]),
                family=str(payload["f"]),
                generation=int(payload["g"]),
                expires_at=int(payload["exp"]),
                provider=str(payload.get("pv", DEVICE_PROVIDER)),
            )
        except (KeyError, ValueError, TypeError) as malformed:
            raise BadToken("the token is not valid") from malformed

    def verify(self, token: str) -> Claims:
        claims = self._verified.get(token)
        if claims is not None:
            if time.time() < claims.expires_at:
                self._verified.move_to_end(token)
                return claims
            del self._verified[token]
        claims = self._decode(token)
        self._verified[token] = claims
        while len(self._verified) > VERIFIED_KEPT:
            self._verified.popitem(last=False)
        return claims

    def _payload(self, token: str, expired_reason: str) -> dict[str, Any]:
        try:
            payload: dict[str, Any] = jwt.decode(
                token,
                self._key,
                algorithms=[ALGORITHM],  # never "none", never another algorithm
                issuer=ISSUER,
                options={"require": ["exp", "iat", "sub", "jti", "iss"]},
            )
        except jwt.ExpiredSignatureError as expired:
            raise BadToken(expired_reason) from expired
        except jwt.InvalidTokenError as invalid:
            raise BadToken("the token is not valid") from invalid
        return payload

    def _decode(self, token: str) -> Claims:
        payload = self._payload(
            token, "the token has expired; join again (a player: refresh your session)"
        )
        if payload.get("typ") == REFRESH:
            raise BadToken("a refresh token is traded with RefreshSession, not sent with calls")
        try:
            role = Role(payload["r"])
            if (role == Role.PLAYER) != (payload.get("typ") == ACCESS):
                raise ValueError("a player's token is an access token, and only it")
            return Claims(
                match_id=str(payload["m"]),
                role=role,
                seat=str(payload["s"]),
                subject=str(payload["sub"]),
                token_id=str(payload["jti"]),
                expires_at=int(payload["exp"]),
                version=int(payload.get("v", 0)),
            )
        except (KeyError, ValueError, TypeError) as malformed:
            raise BadToken("the token is not valid") from malformed


def bearer(metadata: tuple[tuple[str, str | bytes], ...] | None) -> str | None:
    """The token of an ``authorization: Bearer …`` header; None without one."""
    for key, value in metadata or ():
        if key == "authorization" and isinstance(value, str):
            scheme, _, token = value.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise BadToken("authorization must be 'Bearer <token>'")
            return token.strip()
    return None


@dataclass(frozen=True)
class Creation:
    """The ids a create derives from the client's command id with the gateway's key: a
    retried create is the same match (and gets its creator token again), yet ids stay
    unguessable (a private match's id is its invitation) and the client's command id, which
    proves the retry, never appears in any log."""

    match_id: str
    #: the board's command id (the correlation id of the match's creation event)
    command_id: str
    #: the creator's client id when it presents no token
    subject: str
    #: the id of the seat token when the create takes a seat (a retry issues the same)
    join_id: str


def creation(key: bytes, player: str, command_id: str) -> Creation:
    """The ids of ``player``'s create ``command_id`` (another player's same command id is
    another match)."""
    own = f"{player}:{command_id}"
    digest = hmac.new(key, f"create:{own}".encode(), hashlib.sha256).digest()
    seat = hmac.new(key, f"create-seat:{own}".encode(), hashlib.sha256).digest()
    return Creation(
        match_id=str(uuid.UUID(bytes=digest[:16], version=4)),
        command_id=f"create:{digest[16:].hex()}",
        subject=digest[16:24].hex(),
        join_id=seat[:16].hex(),
    )


# -- quotas ------------------------------------------------------------------------------
class TokenBucket:
    """``rate`` tokens per second up to ``burst``; each call takes one."""

    def __init__(self, rate: float, burst: float, now: float) -> None:
        self.rate = rate
        self.burst = burst
        self.level = burst
        self.at = now

    def take(self, now: float) -> float:
        """0 if allowed, else the seconds until one token is there."""
        self.level = min(self.burst, self.level + (now - self.at) * self.rate)
        self.at = now
        if self.level >= 1:
            self.level -= 1
            return 0.0
        return (1 - self.level) / self.rate if self.rate > 0 else 3600.0


class Quota:
    """One token bucket per client identity (bounded: the least recently used go first)."""

    def __init__(self, rate: float, burst: float, max_clients: int = 100_000) -> None:
        self._rate = rate
        self._burst = burst
        self._max = max_clients
        self._buckets: OrderedDict[str, TokenBucket] = OrderedDict()

    def take(self, client: str, now: float | None = None) -> float:
        """0 if the client may go on, else how many seconds it should wait."""
        now = time.monotonic() if now is None else now
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = self._buckets[client] = TokenBucket(self._rate, self._burst, now)
            if len(self._buckets) > self._max:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(client)
        return bucket.take(now)


# -- input bounds ------------------------------------------------------------------------
#: the longest id (match, command, seat) and display name, in characters
MAX_ID = 64
MAX_NAME = 40
MAX_SEATS = 16
MAX_OPTIONS = 32
MAX_OPTION_KEY = 40
MAX_OPTION_VALUE = 200
MAX_GAME = 40
MAX_PAGE_TOKEN = 128
#: the largest request the gateway accepts (bytes); an action is a few hundred
MAX_REQUEST_BYTES = 64 * 1024


class TooLong(Exception):
    """A field is longer than allowed (the message names the field, never the value)."""


def bounded(field: str, value: str, limit: int) -> str:
    if len(value) > limit:
        raise TooLong(f"{field} is longer than {limit} characters")
    return value


def bounded_names(field: str, values: list[str], count: int, limit: int) -> list[str]:
    if len(values) > count:
        raise TooLong(f"{field} has more than {count} entries")
    for value in values:
        bounded(field, value, limit)
    return values


def bounded_options(options: dict[str, str]) -> dict[str, str]:
    if len(options) > MAX_OPTIONS:
        raise TooLong(f"options has more than {MAX_OPTIONS} entries")
    for key, value in options.items():
        bounded("an option name", key, MAX_OPTION_KEY)
        bounded("an option value", value, MAX_OPTION_VALUE)
    return options
