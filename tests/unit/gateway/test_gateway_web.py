"""The gateway's web port as an ASGI app: gRPC-Web reaches the same servicer with the same
authorisation, CORS answers the configured origin only, big bodies are refused, the page
gets its security headers, and gRPC-Web calls are counted under the gRPC metric names."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import AsyncIterator, MutableMapping
from pathlib import Path
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from services.common.config import Config
from services.gateway import pictures
from services.gateway.auth import MAX_REQUEST_BYTES, Role, Tokens
from services.gateway.service import GatewayService
from services.gateway.viewstore import ViewStore
from services.gateway.web import web_app
from tabletop.v1 import gateway_pb2, match_pb2

ORIGIN = "https://play.example"
MATCH = "0b0f7a62-0000-4000-8000-000000000001"


@pytest.fixture
def config(monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("TABLETOP_DEV_STACK", "1")
    return Config.from_env("gateway")


@pytest.fixture
async def app(config: Config, tmp_path: Path) -> AsyncIterator[Any]:
    """Built inside the event loop: a grpc.aio channel needs a running loop."""
    (tmp_path / "index.html").write_text("<!doctype html><title>Tabletop</title>")
    scoring = grpc.aio.insecure_channel("127.0.0.1:9")  # never called by these tests
    service = GatewayService([], scoring, ViewStore(), config)

    def register(server: grpc.Server) -> list[str]:
        return service.edge().register(server)

    yield web_app(register, [ORIGIN], str(tmp_path), MAX_REQUEST_BYTES)


async def asgi(
    app: Any, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> tuple[int, dict[str, str], bytes]:
    """One HTTP request through the ASGI app: status, headers (last wins), body."""
    sent: list[dict[str, Any]] = []
    scope = {
        "type": "http",
        "method": method,
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "scheme": "http",
        "http_version": "1.1",
        "server": ("127.0.0.1", 8080),
        "client": ("127.0.0.7", 50123),
        "headers": [
            (k.encode(), v.encode()) for k, v in {"host": "127.0.0.1:8080", **headers}.items()
        ],
    }
    chunks = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive() -> dict[str, Any]:
        if chunks:
            return chunks.pop(0)
        await asyncio.Event().wait()  # the client stays connected
        raise AssertionError

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(scope, receive, send)
    start = next(m for m in sent if m["type"] == "http.response.start")
    out = {k.decode().lower(): v.decode() for k, v in start.get("headers", [])}
    return start["status"], out, b"".join(m.get("body", b"") for m in sent[1:])


def frame(message: Any) -> bytes:
    data: bytes = message.SerializeToString()
    return struct.pack(">BI", 0, len(data)) + data


def grpc_status(headers: dict[str, str], body: bytes) -> tuple[int, str]:
    """The status of a gRPC-Web reply: trailers-only in headers, else the trailer frame."""
    if "grpc-status" in headers:
        return int(headers["grpc-status"]), headers.get("grpc-message", "")
    at, trailers = 0, {}
    while at + 5 <= len(body):
        flag, size = struct.unpack(">BI", body[at : at + 5])
        if flag & 0x80:
            for line in body[at + 5 : at + 5 + size].decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key:
                    trailers[key] = value.strip()
        at += 5 + size
    return int(trailers["grpc-status"]), trailers.get("grpc-message", "")


GRPC_WEB = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}


async def test_a_call_without_a_token_is_refused_as_over_grpc(app: Any) -> None:
    # Exactly GetView's refusal on the gRPC port (tests/integration/test_gateway_auth.py):
    # no token, a match that is not public → UNAUTHENTICATED, and no view.
    status, headers, body = await asgi(
        app,
        "POST",
        "/tabletop.v1.Gateway/GetView",
        GRPC_WEB,
        frame(gateway_pb2.GetViewRequest(match_id=MATCH)),
    )
    assert status == 200
    code, message = grpc_status(headers, body)
    assert code == grpc.StatusCode.UNAUTHENTICATED.value[0]
    assert "token" in message
    for rpc, request in (
        ("GetPicture", gateway_pb2.GetPictureRequest(match_id=MATCH)),
        ("ReplayMatch", gateway_pb2.ReplayMatchRequest(match_id=MATCH)),
        ("VerifyMatch", gateway_pb2.VerifyMatchRequest(match_id=MATCH)),
    ):
        _, headers, body = await asgi(
            app, "POST", f"/tabletop.v1.Gateway/{rpc}", GRPC_WEB, frame(request)
        )
        assert grpc_status(headers, body)[0] == grpc.StatusCode.UNAUTHENTICATED.value[0], rpc


async def test_a_token_for_another_match_or_a_tampered_one_is_refused(
    app: Any, config: Config
) -> None:
    other, _ = Tokens(config.token_key, 60).issue("another-match", Role.SEAT, "s", "ann")
    for token, code in (
        (other, grpc.StatusCode.PERMISSION_DENIED),
        (other[:-4] + "AAAA", grpc.StatusCode.UNAUTHENTICATED),
    ):
        _, headers, body = await asgi(
            app,
            "POST",
            "/tabletop.v1.Gateway/GetPicture",
            {**GRPC_WEB, "authorization": f"Bearer {token}"},
            frame(gateway_pb2.GetPictureRequest(match_id=MATCH)),
        )
        assert grpc_status(headers, body)[0] == code.value[0]


async def test_cors_answers_the_configured_origin_only(app: Any) -> None:
    preflight = {
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization,content-type,x-grpc-web",
    }
    status, headers, _ = await asgi(
        app, "OPTIONS", "/tabletop.v1.Gateway/GetView", {**preflight, "origin": ORIGIN}
    )
    assert status == 200 and headers["access-control-allow-origin"] == ORIGIN
    status, headers, _ = await asgi(
        app,
        "OPTIONS",
        "/tabletop.v1.Gateway/GetView",
        {**preflight, "origin": "https://evil.example"},
    )
    assert status == 400 and "access-control-allow-origin" not in headers
    _, headers, _ = await asgi(
        app,
        "POST",
        "/tabletop.v1.Gateway/GetView",
        {**GRPC_WEB, "origin": "https://evil.example"},
        frame(gateway_pb2.GetViewRequest(match_id=MATCH)),
    )
    assert "access-control-allow-origin" not in headers


async def test_a_body_over_the_limit_is_refused(app: Any) -> None:
    big = b"\0" * (MAX_REQUEST_BYTES + 1)
    status, _, _ = await asgi(
        app,
        "POST",
        "/tabletop.v1.Gateway/GetView",
        {**GRPC_WEB, "content-length": str(len(big))},
        big,
    )
    assert status == 413


async def test_the_page_is_served_with_security_headers(app: Any) -> None:
    status, headers, body = await asgi(app, "GET", "/", {})
    assert status == 200 and b"<title>Tabletop</title>" in body
    assert "default-src 'self'" in headers["content-security-policy"]
    assert headers["x-content-type-options"] == "nosniff"
    status, _, _ = await asgi(app, "GET", "/no-such-file.js", {})
    assert status == 404


async def test_grpc_web_calls_are_counted_with_the_grpc_metric_names(app: Any) -> None:
    labels = {
        "grpc_type": "grpc_web_unary",
        "grpc_service": "tabletop.v1.Gateway",
        "grpc_method": "GetView",
        "grpc_code": "Unauthenticated",
    }
    before = REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0
    await asgi(
        app,
        "POST",
        "/tabletop.v1.Gateway/GetView",
        GRPC_WEB,
        frame(gateway_pb2.GetViewRequest(match_id=MATCH)),
    )
    assert REGISTRY.get_sample_value("grpc_server_handled_total", labels) == before + 1


async def test_a_stream_ends_when_its_client_leaves(tmp_path: Path) -> None:
    """A watcher of a quiet match must not outlive its client (sonora alone would keep the
    servicer's stream until its next message)."""
    events: list[str] = []

    async def quiet(request: bytes, context: Any) -> AsyncIterator[bytes]:
        try:
            yield b"first"
            await asyncio.Event().wait()  # no news for ever
            yield b"never"
        finally:
            events.append("stream closed")

    handler = grpc.method_handlers_generic_handler(
        "test.Quiet",
        {
            "Watch": grpc.unary_stream_rpc_method_handler(
                quiet, request_deserializer=bytes, response_serializer=bytes
            )
        },
    )

    def register(server: grpc.Server) -> list[str]:
        server.add_generic_rpc_handlers((handler,))
        return []

    app = web_app(register, [], str(tmp_path), MAX_REQUEST_BYTES)
    sent: list[dict[str, Any]] = []
    left = asyncio.Event()
    inbox = [{"type": "http.request", "body": frame_bytes(b"hello"), "more_body": False}]

    async def receive() -> dict[str, Any]:
        if inbox:
            return inbox.pop(0)
        await left.wait()
        return {"type": "http.disconnect"}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))
        if message.get("body", b"").endswith(b"first"):
            left.set()  # the client leaves after the first message

    scope = {
        "type": "http",
        "method": "POST",
        "path": "/test.Quiet/Watch",
        "raw_path": b"/test.Quiet/Watch",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1"),
            *[(k.encode(), v.encode()) for k, v in GRPC_WEB.items()],
        ],
        "client": ("127.0.0.7", 50123),
        "server": ("127.0.0.1", 8080),
        "scheme": "http",
        "http_version": "1.1",
        "root_path": "",
    }
    await asyncio.wait_for(app(scope, receive, send), timeout=10)
    assert events == ["stream closed"]
    assert any(m.get("body", b"").endswith(b"first") for m in sent)


async def test_a_stream_reply_ends_with_its_status_in_the_trailers(tmp_path: Path) -> None:
    async def two(request: bytes, context: Any) -> AsyncIterator[bytes]:
        yield b"one"
        yield b"two"

    handler = grpc.method_handlers_generic_handler(
        "test.Two",
        {
            "Watch": grpc.unary_stream_rpc_method_handler(
                two, request_deserializer=bytes, response_serializer=bytes
            )
        },
    )

    def register(server: grpc.Server) -> list[str]:
        server.add_generic_rpc_handlers((handler,))
        return []

    app = web_app(register, [], str(tmp_path), MAX_REQUEST_BYTES)
    status, headers, body = await asgi(app, "POST", "/test.Two/Watch", GRPC_WEB, frame_bytes(b""))
    assert status == 200 and grpc_status(headers, body) == (0, "")
    assert b"one" in body and b"two" in body


def frame_bytes(data: bytes) -> bytes:
    return struct.pack(">BI", 0, len(data)) + data


def test_pictures_are_drawn_once_per_match_version_and_viewer(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    drawn: list[tuple[str, int, str]] = []

    def fake_draw(view: match_pb2.MatchView) -> gateway_pb2.Picture:
        drawn.append((view.match_id, view.version, view.viewer))
        return gateway_pb2.Picture(match_id=view.match_id, version=view.version, svg="<svg/>")

    monkeypatch.setattr(pictures, "draw", fake_draw)
    kept = pictures.Pictures(max_entries=2)
    ann = match_pb2.MatchView(match_id="m", version=3, viewer="ann")
    spectator = match_pb2.MatchView(match_id="m", version=3, viewer="")
    assert kept.draw(ann) is kept.draw(ann)
    kept.draw(spectator)  # another viewer: drawn for it, never the seat's picture
    assert drawn == [("m", 3, "ann"), ("m", 3, "")]
    assert kept.get("m", 3, "") is not None and kept.get("m", 4, "ann") is None
    kept.draw(match_pb2.MatchView(match_id="m", version=4, viewer="ann"))  # evicts the oldest
    assert kept.get("m", 3, "ann") is None and kept.get("m", 3, "") is not None
