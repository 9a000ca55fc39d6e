"""Internal servers accept only their peers: the peer token always, mTLS when configured."""

from __future__ import annotations

import contextlib
import dataclasses
import shutil
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from services.common.config import Config
from services.common.server import GrpcService, peer_channel

PEER = "p" * 40


def _certificates(folder: Path) -> dict[str, str]:
    """A CA and one certificate it signed for 127.0.0.1 (server and client alike)."""

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True, cwd=folder)

    (folder / "san.ext").write_text("subjectAltName=IP:127.0.0.1\n")
    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=test-ca",
        "-keyout", "ca.key", "-out", "ca.crt")  # fmt: skip
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=peer", "-keyout", "peer.key",
        "-out", "peer.csr")  # fmt: skip
    run("x509", "-req", "-in", "peer.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
        "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "peer.crt")  # fmt: skip
    return {name: str(folder / f"{name}") for name in ("ca.crt", "peer.crt", "peer.key")}


def _config(monkeypatch: pytest.MonkeyPatch, **env: str) -> Config:
    monkeypatch.setenv("TABLETOP_SECRET", "s" * 40)
    monkeypatch.setenv("TABLETOP_PEER_TOKEN", PEER)
    monkeypatch.setenv("TABLETOP_GRPC_PORT", "0")
    monkeypatch.setenv("TABLETOP_KAFKA_PASSWORD", "no-broker-here")
    for key, value in env.items():
        monkeypatch.setenv(f"TABLETOP_{key}", value)
    return Config.from_env("dice")


async def _ping(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return b"pong"


@contextlib.asynccontextmanager
async def serving(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> AsyncIterator[tuple[int, Config]]:
    """An internal server (as dice) with mTLS, started on the test's own event loop."""
    if shutil.which("openssl") is None:
        pytest.skip("needs openssl")
    certs = _certificates(tmp_path)
    config = _config(
        monkeypatch, TLS_CERT=certs["peer.crt"], TLS_KEY=certs["peer.key"], TLS_CA=certs["ca.crt"]
    )

    def register(server: grpc.aio.Server) -> list[str]:
        handler = grpc.method_handlers_generic_handler(
            "test.Echo", {"Ping": grpc.unary_unary_rpc_method_handler(_ping)}
        )
        server.add_generic_rpc_handlers((handler,))
        return []

    service = GrpcService(config, register)
    port = await service.start()
    try:
        yield port, config
    finally:
        await service.stop()


async def _call(channel: grpc.aio.Channel) -> Any:
    return await channel.unary_unary("/test.Echo/Ping")(b"ping", timeout=5)


async def test_a_peer_with_certificate_and_token_is_served(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async with (
        serving(monkeypatch, tmp_path) as (port, config),
        peer_channel(f"127.0.0.1:{port}", config) as channel,
    ):
        assert await _call(channel) == b"pong"


async def test_the_wrong_token_is_refused_even_over_mtls(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async with serving(monkeypatch, tmp_path) as (port, config):
        impostor = dataclasses.replace(config, peer_token=b"x" * 40)
        async with peer_channel(f"127.0.0.1:{port}", impostor) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _call(channel)
    assert refused.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def test_a_client_without_a_certificate_cannot_connect(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    async with serving(monkeypatch, tmp_path) as (port, config):
        no_cert = dataclasses.replace(config, tls_cert="", tls_key="")
        async with peer_channel(f"127.0.0.1:{port}", no_cert) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await _call(channel)
        assert refused.value.code() == grpc.StatusCode.UNAVAILABLE
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as plaintext:
            with pytest.raises(grpc.aio.AioRpcError) as plain:
                await _call(plaintext)
        assert plain.value.code() == grpc.StatusCode.UNAVAILABLE
