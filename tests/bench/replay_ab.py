"""Replay-only A/B: checkouts of the stack alternated round by round on fresh ephemeral
stacks, each round playing ``--concurrent`` Crashland matches for a while, then replaying
``--matches`` of the finished ones ``--repeats`` times through ReplayMatch and
ReplayMatchBatches (as ``make bench`` does). Prints per round and the medians over rounds:
whole-replay ms, steps per second and the board's CPU per replay (the reads of finished
matches are the board's). Never part of ``make test``.

``python -m tests.bench.replay_ab /work/base /work/main``
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import uuid
from pathlib import Path

from .bots import run_load
from .procstat import process_cpu
from .replay import replay_matches
from .suite import BENCH_MATCH_IDLE_S, ephemeral_stack


def _tree_env(tree: Path) -> dict[str, str]:
    # ``python -m`` puts the working directory ahead of PYTHONPATH (see tests.bench.ab)
    return {"PYTHONPATH": f"{tree}:{tree / 'protos'}", "PYTHONSAFEPATH": "1"}


def measure(tree: Path, concurrent: int, matches: int, repeats: int) -> dict[str, float]:
    prefix = f"rab{uuid.uuid4().hex[:6]}."
    run_dir = Path(tempfile.mkdtemp(prefix="tabletop-replay-ab-"))
    with ephemeral_stack(prefix, run_dir, extra_env=_tree_env(tree)) as stack:

        async def run() -> dict[str, float]:
            load = await run_load(stack.addr("gateway"), "crashland", concurrent, 12.0, 2.0)
            ids = list(load.finished_ids)[:matches]
            if not ids:
                raise RuntimeError("no match finished: raise --concurrent or the time")
            await asyncio.sleep(BENCH_MATCH_IDLE_S + 1)  # the load's matches leave play
            board = stack.pid("board")
            before = process_cpu(board) if board is not None else None
            replays = await replay_matches(
                stack.addr("gateway"), ids * repeats, "", stack.pid("gateway")
            )
            after = process_cpu(board) if board is not None else None
            board_ms = float("nan")
            if before is not None and after is not None:
                board_ms = (after - before) * 1000 / (len(ids) * repeats * 2)
            return {
                "ReplayMatch ms": statistics.median(replays.gateway_ms),
                "Batches ms": statistics.median(replays.batched_ms),
                "ReplayMatch events/s": statistics.median(replays.gateway_rates),
                "Batches events/s": statistics.median(replays.batched_rates),
                "board CPU ms per replay": board_ms,
                "steps": statistics.median(replays.steps),
            }

        return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.replay_ab", description=__doc__)
    parser.add_argument("trees", nargs="+", type=Path, help="checkouts whose services to run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--concurrent", type=int, default=40)
    parser.add_argument("--matches", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    trees = [t.resolve() for t in args.trees]
    results: dict[Path, list[dict[str, float]]] = {t: [] for t in trees}
    for round_ in range(args.rounds):
        for tree in trees:
            figures = measure(tree, args.concurrent, args.matches, args.repeats)
            results[tree].append(figures)
            print(round_, tree, {k: round(v, 2) for k, v in figures.items()}, flush=True)
    for tree, rounds in results.items():
        medians = {k: round(statistics.median(r[k] for r in rounds), 2) for k in rounds[0]}
        print("median", tree, medians)


if __name__ == "__main__":
    main()
