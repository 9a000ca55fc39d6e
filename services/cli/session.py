"""A player's credential on the client side, in one place for the CLI, bots, benches and
tests: a device secret made once and kept, the session (access and refresh tokens) the
gateway gave for it, and the interceptors that sign every call with the access token.

The first call signs up (Authenticate with a new device secret); an access token about to
expire is refreshed (RefreshSession), and a refused refresh (reused, expired, another
replica closed it) signs in again with the same secret, so the player stays the same. A
call that carries its own ``authorization`` (a seat or spectator token) is left alone.

``Credential.load(path)`` keeps it in a JSON file readable by its owner only (the CLI's:
``$TABLETOP_CREDENTIALS``, else ``$XDG_CONFIG_HOME/tabletop/credentials.json``); without
a path it lives as long as the process (a bench's or a test's player).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from tabletop.v1 import gateway_pb2, gateway_pb2_grpc

#: an access token this close to its expiry is refreshed before a call
REFRESH_MARGIN_S = 60
#: calls that make sessions carry none
_SESSION_METHODS = (
    "/tabletop.v1.Gateway/Authenticate",
    "/tabletop.v1.Gateway/RefreshSession",
)


def default_path() -> Path:
    configured = os.environ.get("TABLETOP_CREDENTIALS")
    if configured:
        return Path(configured)
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config) / "tabletop" / "credentials.json"


@dataclass
class Credential:
    """A device secret and, per gateway address, the newest session it got there."""

    secret: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    sessions: dict[str, gateway_pb2.Session] = field(default_factory=dict)
    path: Path | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    #: one sign-in at a time on asyncio (concurrent first calls share it); made on first
    #: use, in the loop that uses it
    _async_lock: asyncio.Lock | None = field(default=None, repr=False)

    @classmethod
    def load(cls, path: Path | None) -> Credential:
        """The credential kept at ``path`` (a new one, written there, if none is)."""
        if path is None or not path.exists():
            credential = cls(path=path)
            credential.save()
            return credential
        data = json.loads(path.read_text())
        sessions = {
            address: gateway_pb2.Session(**fields)
            for address, fields in data.get("sessions", {}).items()
        }
        return cls(secret=str(data["secret"]), sessions=sessions, path=path)

    def save(self) -> None:
        if self.path is None:
            return
        data: dict[str, Any] = {
            "secret": self.secret,
            "sessions": {
                address: {
                    "player_id": s.player_id,
                    "access_token": s.access_token,
                    "access_expires_at": s.access_expires_at,
                    "refresh_token": s.refresh_token,
                    "refresh_expires_at": s.refresh_expires_at,
                    "provider": s.provider,
                }
                for address, s in self.sessions.items()
            },
        }
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(data, out)

    def usable(self, address: str, now: float | None = None) -> gateway_pb2.Session | None:
        """The session at ``address`` while its access token has a while to live."""
        session = self.sessions.get(address)
        now = time.time() if now is None else now
        if session is None or session.access_expires_at - REFRESH_MARGIN_S <= now:
            return None
        return session

    def refreshable(self, address: str, now: float | None = None) -> str | None:
        session = self.sessions.get(address)
        now = time.time() if now is None else now
        if session is None or session.refresh_expires_at - REFRESH_MARGIN_S <= now:
            return None
        return session.refresh_token

    def keep(self, address: str, session: gateway_pb2.Session) -> None:
        self.sessions[address] = session
        self.save()

    def sign_in_request(self) -> gateway_pb2.AuthenticateRequest:
        return gateway_pb2.AuthenticateRequest(
            device=gateway_pb2.DeviceCredential(secret=self.secret)
        )

    # -- synchronous (the CLI's grpc channel) ----------------------------------------------
    def access_token(self, channel: grpc.Channel, address: str) -> str:
        """A usable access token at ``address``: signing up, refreshing as needed."""
        with self._lock:
            session = self.usable(address)
            if session is not None:
                return session.access_token
            stub = gateway_pb2_grpc.GatewayStub(channel)
            refresh = self.refreshable(address)
            fresh: gateway_pb2.Session | None = None
            if refresh is not None:
                try:
                    fresh = stub.RefreshSession(
                        gateway_pb2.RefreshSessionRequest(refresh_token=refresh), timeout=30
                    )
                except grpc.RpcError as error:
                    if error.code() != grpc.StatusCode.UNAUTHENTICATED:
                        raise
            if fresh is None:
                fresh = stub.Authenticate(self.sign_in_request(), timeout=30)
            self.keep(address, fresh)
            return fresh.access_token

    # -- asyncio (grpc.aio channels) ---------------------------------------------------------
    async def access_token_async(self, channel: grpc.aio.Channel, address: str) -> str:
        session = self.usable(address)
        if session is not None:
            return session.access_token
        if self._async_lock is None:
            self._async_lock = asyncio.Lock()
        async with self._async_lock:
            session = self.usable(address)
            if session is not None:
                return session.access_token
            stub = gateway_pb2_grpc.GatewayStub(channel)
            refresh = self.refreshable(address)
            fresh: gateway_pb2.Session | None = None
            if refresh is not None:
                try:
                    fresh = await stub.RefreshSession(
                        gateway_pb2.RefreshSessionRequest(refresh_token=refresh), timeout=30
                    )
                except grpc.aio.AioRpcError as error:
                    if error.code() != grpc.StatusCode.UNAUTHENTICATED:
                        raise
            if fresh is None:
                fresh = await stub.Authenticate(self.sign_in_request(), timeout=30)
            self.keep(address, fresh)
            return fresh.access_token


def _signed(metadata: Any, token: str) -> list[tuple[str, str | bytes]]:
    return [*(metadata or ()), ("authorization", f"Bearer {token}")]


def _carries_token(metadata: Any) -> bool:
    return any(key == "authorization" for key, _ in metadata or ())


# -- synchronous channels ------------------------------------------------------------------
class _Details(grpc.ClientCallDetails):  # type: ignore[misc]
    def __init__(self, details: Any, metadata: Any) -> None:
        self.method = details.method
        self.timeout = details.timeout
        self.metadata = metadata
        self.credentials = details.credentials
        self.wait_for_ready = getattr(details, "wait_for_ready", None)
        self.compression = getattr(details, "compression", None)


class _SignCalls(
    grpc.UnaryUnaryClientInterceptor,  # type: ignore[misc]
    grpc.UnaryStreamClientInterceptor,  # type: ignore[misc]
    grpc.StreamUnaryClientInterceptor,  # type: ignore[misc]
    grpc.StreamStreamClientInterceptor,  # type: ignore[misc]
):
    def __init__(self, token: Callable[[], str]) -> None:
        self._token = token

    def _details(self, details: Any) -> Any:
        if details.method in _SESSION_METHODS or _carries_token(details.metadata):
            return details
        return _Details(details, _signed(details.metadata, self._token()))

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return continuation(self._details(details), request)

    def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._details(details), requests)

    def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return continuation(self._details(details), requests)


def signed_in(channel: grpc.Channel, address: str, credential: Credential) -> grpc.Channel:
    """``channel`` with every gateway call signed as ``credential``'s player."""
    return grpc.intercept_channel(
        channel, _SignCalls(lambda: credential.access_token(channel, address))
    )


# -- asyncio channels ----------------------------------------------------------------------
class AsyncSigner:
    """``credential``'s player at the gateway at ``address``, for grpc.aio callers: the
    metadata a call is signed with (``await signer.metadata()``; for a bench that signs its
    creates and joins only), or ``channel()``, whose every call is signed."""

    def __init__(
        self,
        address: str,
        credential: Credential | None = None,
        channel: grpc.aio.Channel | None = None,
    ) -> None:
        """``channel``: a plain channel to the gateway to sign in on (else its own, made
        when first needed: an intercepted channel would sign the sign-in itself)."""
        self.address = address
        self.credential = credential if credential is not None else Credential()
        self._raw = channel
        self._own = channel is None

    async def metadata(self) -> tuple[tuple[str, str], ...]:
        if self._raw is None:
            self._raw = grpc.aio.insecure_channel(self.address)
        token = await self.credential.access_token_async(self._raw, self.address)
        return (("authorization", f"Bearer {token}"),)

    async def details(self, details: Any) -> Any:
        if details.method in _SESSION_METHODS or _carries_token(details.metadata):
            return details
        return grpc.aio.ClientCallDetails(
            details.method,
            details.timeout,
            grpc.aio.Metadata(*(details.metadata or ()), *await self.metadata()),
            details.credentials,
            details.wait_for_ready,
        )

    def channel(self, **options: Any) -> grpc.aio.Channel:
        """An insecure aio channel to the gateway whose calls are signed as the player."""
        interceptors = [
            kind(self) for kind in (_UnaryUnary, _UnaryStream, _StreamUnary, _StreamStream)
        ]
        return grpc.aio.insecure_channel(self.address, interceptors=interceptors, **options)

    async def close(self) -> None:
        if self._own and self._raw is not None:
            await self._raw.close()


class _Signs:
    def __init__(self, signer: AsyncSigner) -> None:
        self._signer = signer


class _UnaryUnary(_Signs, grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(await self._signer.details(details), request)


class _UnaryStream(_Signs, grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(await self._signer.details(details), request)


class _StreamUnary(_Signs, grpc.aio.StreamUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_stream_unary(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(await self._signer.details(details), requests)


class _StreamStream(_Signs, grpc.aio.StreamStreamClientInterceptor):  # type: ignore[misc]
    async def intercept_stream_stream(self, continuation: Any, details: Any, requests: Any) -> Any:
        return await continuation(await self._signer.details(details), requests)
