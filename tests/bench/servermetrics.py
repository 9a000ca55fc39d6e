"""Server-side time per gRPC method, from every service's Prometheus endpoint
(``grpc_server_handling_seconds`` sum and count), read before and after a load window:
how long each hop of an action takes inside its server, and how many calls an action makes."""

from __future__ import annotations

import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families

#: the board's time per action, however SubmitCommand came (a call of its own or on a stream)
COMMAND_SECONDS = "tabletop_board_command_seconds"
#: long-lived streams carrying many calls (tabletop.v1.Calls): their handling time is their
#: lifetime (the calls they carry are counted under their own methods)
STREAMS_OF_COMMANDS = frozenset({"bidi_stream"})


@dataclass(frozen=True)
class MethodTotals:
    seconds: float
    calls: float


def scrape(address: str, timeout_s: float = 2.0) -> dict[str, MethodTotals]:
    """``{"Service/Method": totals}`` from one metrics endpoint (empty if unreachable)."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=timeout_s) as reply:
            body = reply.read().decode()
    except OSError:
        return {}
    sums: dict[str, float] = {}
    counts: dict[str, float] = {}
    for family in text_string_to_metric_families(body):
        if family.name not in ("grpc_server_handling_seconds", COMMAND_SECONDS):
            continue
        for sample in family.samples:
            suffix = sample.name.rsplit("_", 1)[-1]
            if suffix not in ("sum", "count"):
                continue
            if sample.labels.get("grpc_type") in STREAMS_OF_COMMANDS:
                continue  # a stream's lifetime, not a call's time
            if family.name == COMMAND_SECONDS:
                key = "Board/(each action, either RPC)"
            else:
                service = sample.labels.get("grpc_service", "?").rsplit(".", 1)[-1]
                key = f"{service}/{sample.labels.get('grpc_method', '?')}"
            target = sums if suffix == "sum" else counts
            target[key] = target.get(key, 0.0) + sample.value
    return {k: MethodTotals(sums.get(k, 0.0), counts.get(k, 0.0)) for k in counts}


def scrape_all(addresses: Mapping[str, str]) -> dict[str, dict[str, MethodTotals]]:
    return {name: scrape(address) for name, address in addresses.items()}


def per_method(
    before: Mapping[str, Mapping[str, MethodTotals]],
    after: Mapping[str, Mapping[str, MethodTotals]],
    actions: int,
) -> dict[str, dict[str, float]]:
    """``{"process Service/Method": {"mean_ms", "calls_per_action"}}`` for the window."""
    out: dict[str, dict[str, float]] = {}
    for process, methods in after.items():
        for method, totals in methods.items():
            prior = before.get(process, {}).get(method, MethodTotals(0.0, 0.0))
            calls = totals.calls - prior.calls
            if calls <= 0:
                continue
            out[f"{process} {method}"] = {
                "mean_ms": 1000 * (totals.seconds - prior.seconds) / calls,
                "calls_per_action": calls / actions if actions else 0.0,
            }
    return dict(sorted(out.items()))
