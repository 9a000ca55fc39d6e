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


def _exposition(address: str, timeout_s: float) -> str:
    """One metrics endpoint's text ("" if unreachable: it parses as no families)."""
    try:
        with urllib.request.urlopen(f"http://{address}/metrics", timeout=timeout_s) as reply:
            return str(reply.read().decode())
    except OSError:
        return ""


def scrape(address: str, timeout_s: float = 2.0) -> dict[str, MethodTotals]:
    """``{"Service/Method": totals}`` from one metrics endpoint (empty if unreachable)."""
    body = _exposition(address, timeout_s)
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


#: the services' garbage-collection pauses (services/common/heap.py)
GC_PAUSES = "tabletop_gc_pause_seconds"


def gc_buckets(address: str, timeout_s: float = 2.0) -> dict[tuple[str, float], float]:
    """``{(generation, le): cumulative count}`` of one service's GC pauses (empty if
    unreachable or not exported)."""
    body = _exposition(address, timeout_s)
    return {
        (sample.labels["generation"], float(sample.labels["le"])): sample.value
        for family in text_string_to_metric_families(body)
        if family.name == GC_PAUSES
        for sample in family.samples
        if sample.name.endswith("_bucket")
    }


def gc_pauses_between(
    before: Mapping[tuple[str, float], float], after: Mapping[tuple[str, float], float]
) -> dict[str, float]:
    """Full collections in the window (``full``: generation 2 and "all") and the upper
    bound of the longest pause of any generation (``longest_s``: its bucket's bound);
    empty if the service exported none (unreachable, or a build without them)."""
    if not after:
        return {}
    grew = {key: value - before.get(key, 0.0) for key, value in after.items()}
    total = {g: n for (g, le), n in grew.items() if le == float("inf")}
    longest = 0.0
    for generation, count in total.items():
        if count > 0:  # the smallest bound that every pause of the window is under
            bound = min(le for (g, le), n in grew.items() if g == generation and n >= count)
            longest = max(longest, bound)
    return {"full": total.get("2", 0.0) + total.get("all", 0.0), "longest_s": longest}
