"""A bare gRPC echo server, run as its own process: the floor of one gRPC hop.

``python -m tests.bench.echo_server PORT_FILE`` binds 127.0.0.1 on a free port, writes the
port to PORT_FILE and echoes request bytes back (no protobuf work: identity serializers),
so a call through it costs what grpc.aio and the loopback cost and nothing else.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import grpc

SERVICE = "tabletop.bench.Echo"
UNARY = f"/{SERVICE}/Echo"


async def _echo(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
    return request


async def serve(port_file: Path, lifetime_s: float = 3600.0) -> None:
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    handler = grpc.method_handlers_generic_handler(
        SERVICE, {"Echo": grpc.unary_unary_rpc_method_handler(_echo)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await asyncio.to_thread(port_file.write_text, str(port))
    # Bounded: the parent stops it, and it never outlives an hour on its own.
    await server.wait_for_termination(timeout=lifetime_s)


if __name__ == "__main__":
    asyncio.run(serve(Path(sys.argv[1])))
