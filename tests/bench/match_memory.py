"""What a match costs in memory once nobody uses it: per idle match and per finished match,
in each process, before and after the processes let go of what they no longer use.

``python -m tests.bench.match_memory --variant base:tree=PATH --variant new [--rounds 2]``

Variants as in ``tests.bench.ab`` (``tree=PATH`` runs another checkout's services), each
round on a fresh ephemeral stack, the variants alternated. Every stack gets short holding
times (the gateway: finished matches 5 s, idle ones 10 s; the projector, the board,
dice, decks and scoring 10 s), which a checkout without them ignores. In each stack:

1. warm-up: a short closed-loop load and a few idle matches (imports, caches), then the
   holding times pass: the baseline resident memory (VmRSS) of each process;
2. idle: ``--idle`` Drillit matches created, both seats joined, two actions played and
   each seat's view asked for, then nobody acts: memory per idle match right after
   ("held") and once the holding times have passed ("idle");
3. finished: ``--load-s`` of the closed-loop bots (Crashland, 20 matches at once, each
   played to its end and watched while played): memory per finished match once the
   holding times have passed (over the idle step's figure).

Prints each round's figures, then per process the medians and the new ÷ base ratio.
``--traced DIR`` runs the services under tracemalloc (``human/traced_serve.py``; slow, for
where the memory goes, not for the figures) and prints, per process, the lines that grew
most per finished match.
Resident memory: the allocator keeps freed pages, so what a process evicted shows as
memory the next matches reuse rather than as a drop. Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import tempfile
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from services.cli.client import GatewayClient
from services.cli.stack import ORDER

from .ab import Variant
from .bots import run_load
from .human.traced_serve import compare, request
from .procstat import rss_snapshot
from .suite import ephemeral_stack

#: holding times of the measured stacks, and the wait for them to pass (plus the timers)
HOLDING_ENV = {
    "TABLETOP_GATEWAY_FINISHED_HELD_S": "5",
    "TABLETOP_GATEWAY_IDLE_HELD_S": "10",
    "TABLETOP_PROJECTOR_IDLE_HELD_S": "10",
    "TABLETOP_BOARD_IDLE_HELD_S": "10",
    "TABLETOP_DICE_IDLE_HELD_S": "10",
    "TABLETOP_DECKS_IDLE_HELD_S": "10",
    "TABLETOP_SCORING_IDLE_HELD_S": "10",
    "TABLETOP_GATEWAY_MAX_MATCHES_IN_PLAY": "0",
}
SETTLE_S = 25.0
KIB = 1024


def idle_match(client: GatewayClient, rng: random.Random) -> None:
    match_id = client.create("drillit", ["a", "b"], {"difficulty": "easy"})
    client.join_all(match_id, ["a", "b"])
    for _ in range(2):
        legal = client.legal(match_id, "a")
        mover = legal.next.players[0] if legal.next.players else "a"
        if mover != "a":
            legal = client.legal(match_id, mover)
        if not legal.actions:
            break
        choice = legal.actions[rng.randrange(len(legal.actions))]
        client.submit(match_id, mover, choice.action, legal.version)
    for seat in ("a", "b"):
        client.view(match_id, seat, min_version=1)


def idle_matches(gateway: str, count: int, seed: int) -> None:
    def one(i: int) -> None:
        client = GatewayClient(gateway)
        try:
            idle_match(client, random.Random(seed * 100_000 + i))
        finally:
            client.close()

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(count)))


def snapshots(folder: Path | None, number: int) -> None:
    """Each traced service's tracemalloc snapshot ``number`` (waited for, up to a minute)."""
    if folder is None:
        return
    written = [request(folder, name, number) for name in ORDER]
    for _ in range(60):
        if all(path.exists() for path in written):
            return
        time.sleep(1.0)


def measure(
    variant: Variant, idle: int, load_s: float, seed: int, traced: Path | None = None
) -> dict[str, dict[str, float]]:
    prefix = f"mem{uuid.uuid4().hex[:6]}."
    run_dir = Path(tempfile.mkdtemp(prefix=f"tabletop-mem-{variant.name}-"))
    env = {**HOLDING_ENV, **variant.stack_env()}
    with ephemeral_stack(prefix, run_dir, extra_env=env, traced=traced) as stack:
        pids = {name: stack.pid(name) for name in ORDER}
        gateway = stack.addr("gateway")

        def load(seconds: float) -> int:
            result = asyncio.run(run_load(gateway, "crashland", 20, seconds, 0.0, seed=seed))
            return result.matches_finished

        load(8.0)
        idle_matches(gateway, 10, seed + 1)
        time.sleep(SETTLE_S)
        base = rss_snapshot(pids)
        snapshots(traced, 1)
        idle_matches(gateway, idle, seed)
        held = rss_snapshot(pids)
        time.sleep(SETTLE_S)
        after_idle = rss_snapshot(pids)
        snapshots(traced, 2)
        finished = load(load_s)
        time.sleep(SETTLE_S)
        after_finished = rss_snapshot(pids)
        snapshots(traced, 3)
    if traced is not None:
        for name in ORDER:
            for label, first, last, per in (("idle", 1, 2, idle), ("finished", 2, 3, finished)):
                before, after = (traced / f"{name}-{n}.tracemalloc" for n in (first, last))
                if before.exists() and after.exists():
                    print(f"{variant.name} {name}: grew most, per {label} match:")
                    print("\n".join(compare(before, after, per, top=8)), flush=True)
    out: dict[str, dict[str, float]] = {}
    for name in base:
        if name not in after_finished:
            continue
        out[name] = {
            "held KiB/idle match": (held[name] - base[name]) / idle / KIB,
            "KiB/idle match": (after_idle[name] - base[name]) / idle / KIB,
            "KiB/finished match": (after_finished[name] - after_idle[name])
            / max(finished, 1)
            / KIB,
        }
    processes = list(out)
    out["all services"] = {k: sum(out[p][k] for p in processes) for k in out[processes[0]]}
    out["(counts)"] = {"idle matches": idle, "finished matches": finished}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.match_memory", description=__doc__)
    parser.add_argument("--variant", action="append", required=True, type=Variant.parse)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--idle", type=int, default=300)
    parser.add_argument("--load-s", type=float, default=30.0)
    parser.add_argument("--traced", type=Path, default=None)
    args = parser.parse_args()
    rows: dict[str, list[dict[str, dict[str, float]]]] = {v.name: [] for v in args.variant}
    for round_ in range(args.rounds):
        for variant in args.variant if round_ % 2 == 0 else reversed(args.variant):
            figures = measure(variant, args.idle, args.load_s, round_, args.traced)
            rows[variant.name].append(figures)
            for process, row in figures.items():
                shown = ", ".join(f"{k} {v:.1f}" for k, v in row.items())
                print(f"round {round_ + 1} {variant.name} {process}: {shown}", flush=True)
    base = args.variant[0].name
    print(f"\nmedians of {args.rounds} rounds (and ÷ {base})")
    for process in rows[base][0]:
        for key in rows[base][0][process]:
            cells = []
            medians = {}
            for variant in args.variant:
                values = [r[process][key] for r in rows[variant.name] if process in r]
                medians[variant.name] = statistics.median(values) if values else float("nan")
                cells.append(f"{variant.name} {medians[variant.name]:9.1f}")
                if variant.name != base and medians[base]:
                    cells.append(f"(×{medians[variant.name] / medians[base]:.2f})")
            print(f"{process:>14} {key:22} " + "  ".join(cells))


if __name__ == "__main__":
    main()
