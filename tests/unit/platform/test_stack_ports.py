"""An ephemeral stack (tests, benchmarks) gets distinct free ports for all its servers."""

from __future__ import annotations

import socket
from pathlib import Path

from services.cli.stack import Stack, free_ports


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(64)
    assert len(set(ports)) == 64
    for port in ports[:8]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # released, so free to take


def test_every_server_of_an_ephemeral_stack_has_a_port_of_its_own(tmp_path: Path) -> None:
    stack = Stack.ephemeral(tmp_path, "t.")
    used = [p for pair in stack.ports.values() for p in pair if p] + [stack.web_port]
    # five gRPC servers (the projector has none), six metrics servers, the web page
    assert len(used) == len(set(used)) == 12
