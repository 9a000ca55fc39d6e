"""A minimal gRPC-Web client over HTTP/1.1 (urllib), for testing the gateway's web port
exactly as a browser calls it: framed protobuf, status in headers or trailers."""

from __future__ import annotations

import struct
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from google.protobuf.message import Message

M = TypeVar("M", bound=Message)


@dataclass
class WebReply(Generic[M]):
    messages: list[M]
    status: int
    message: str
    metadata: dict[str, str] = field(default_factory=dict)

    @property
    def one(self) -> M:
        assert self.status == 0, (self.status, self.message)
        return self.messages[0]


def _frames(body: bytes) -> list[tuple[int, bytes]]:
    out, at = [], 0
    while at + 5 <= len(body):
        flag, size = struct.unpack(">BI", body[at : at + 5])
        out.append((flag, body[at + 5 : at + 5 + size]))
        at += 5 + size
    return out


def call(
    base_url: str,
    method: str,
    request: Message,
    reply_type: type[M],
    token: str = "",
    origin: str = "",
    timeout: float = 30.0,
) -> WebReply[M]:
    """POST ``/tabletop.v1.Gateway/<method>``; every reply message and the final status."""
    payload = request.SerializeToString()
    headers = {"content-type": "application/grpc-web+proto", "x-grpc-web": "1"}
    if token:
        headers["authorization"] = f"Bearer {token}"
    if origin:
        headers["origin"] = origin
    http = urllib.request.Request(
        urllib.parse.urljoin(base_url, f"/tabletop.v1.Gateway/{method}"),
        data=struct.pack(">BI", 0, len(payload)) + payload,
        headers=headers,
        method="POST",
    )
    with urllib.request.urlopen(http, timeout=timeout) as response:
        body = response.read()
        metadata = {k.lower(): v for k, v in response.headers.items()}
    messages: list[M] = []
    for flag, data in _frames(body):
        if flag & 0x80:
            for line in data.decode().split("\r\n"):
                key, _, value = line.partition(":")
                if key:
                    metadata[key.strip().lower()] = value.strip()
        else:
            reply = reply_type()
            reply.ParseFromString(data)
            messages.append(reply)
    return WebReply(
        messages,
        int(metadata["grpc-status"]),  # a reply without a status is broken
        urllib.parse.unquote(metadata.get("grpc-message", "")),
        metadata,
    )
