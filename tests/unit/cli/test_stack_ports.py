"""An ephemeral stack (tests, benchmarks) gets distinct free ports for all its servers."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from services.cli import stack as stack_module
from services.cli.stack import Stack, free_ports, listen_range


def test_free_ports_are_distinct_and_bindable() -> None:
    ports = free_ports(64)
    assert len(set(ports)) == 64
    for port in ports[:8]:
        with socket.socket() as s:
            s.bind(("127.0.0.1", port))  # released, so free to take


def test_ports_are_picked_below_the_kernels_ephemeral_range() -> None:
    # an outgoing connection (a started service's Kafka client) takes ports from that range
    # only, so it cannot take a port picked for a server that starts later
    low = int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    ports = free_ports(16)
    assert all(p < low for p in ports)
    assert all(p in listen_range() for p in ports)


def _bindable(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("", port))
        except OSError:
            return False
        return True


def test_a_port_a_server_listens_on_is_not_picked(monkeypatch: pytest.MonkeyPatch) -> None:
    first = next(p for p in listen_range() if _bindable(p) and _bindable(p + 1))
    monkeypatch.setattr(stack_module, "listen_range", lambda: range(first, first + 2))
    with socket.socket() as server:
        server.bind(("127.0.0.1", first))
        server.listen()
        assert free_ports(1) == [first + 1]


def test_with_no_room_below_the_ephemeral_range_the_kernel_picks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "range").write_text("1024\t65535\n")
    monkeypatch.setattr(stack_module, "_EPHEMERAL_RANGE", tmp_path / "range")
    assert len(listen_range()) == 0
    ports = free_ports(4)
    assert len(set(ports)) == 4


def test_every_server_of_an_ephemeral_stack_has_a_port_of_its_own(tmp_path: Path) -> None:
    stack = Stack.ephemeral(tmp_path, "t.")
    used = [p for pair in stack.ports.values() for p in pair if p] + [stack.web_port]
    # six gRPC servers (the projector has none), seven metrics servers, the web page
    assert len(used) == len(set(used)) == 14
