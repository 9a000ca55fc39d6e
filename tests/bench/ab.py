"""Load-only A/B comparisons: variants of the stack alternated round by round, so that they
share the machine's moments (a load run's figures move ±30% with other work).

``python -m tests.bench.ab --variant base:tree=/work/base --variant new --levels 20,100``

Use an even number of rounds: the order of the variants alternates from round to round
(the one measured second in a round runs slower).

A variant is ``NAME[:KEY=VALUE,...]``: ``tree=PATH`` runs the services from another
checkout (its ``services`` and ``protos`` come first on PYTHONPATH; the bots are this
tree's), ``client=unary`` has the bots use SubmitAction beside WatchMatch instead of
PlayMatch streams, ``loop=uvloop`` runs the bots on uvloop (asyncio's loop by default, as
``make bench`` does), ``broker.NAME=VALUE`` runs the variant's rounds with that dynamic
Kafka broker setting (``tests/bench/broker_configs.py``; restored after each), any other
``KEY=VALUE`` is set in the services' environment (``TABLETOP_`` is added when missing).
Each round starts a fresh ephemeral stack per variant and runs the bots at each level
(warm-up, then the measured window), as ``make bench`` does. Prints, per variant and
level, medians over the rounds: acknowledged actions/s, ack and view p50/p99, and CPU ms
per acknowledged action per process; then, for each variant after the first, its ratio
to the first variant in each round, with a sign test (``tests/bench/paired.py``): how far
to trust the medians. Never part of ``make test``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import uvloop

from services.cli.stack import ORDER

from .bots import LoadResult, run_load
from .broker_configs import broker_configs
from .paired import FIGURES, paired
from .procstat import kafka_pid
from .stats import percentile
from .suite import BENCH_MATCH_IDLE_S, ephemeral_stack

#: a variant's key for a dynamic Kafka broker setting
BROKER_PREFIX = "broker."


@dataclass
class Variant:
    name: str
    env: dict[str, str] = field(default_factory=dict)
    tree: Path | None = None
    #: how the bots act: "play" (PlayMatch streams) or "unary" (SubmitAction + WatchMatch)
    transport: str = "play"
    #: the bots' event loop: "asyncio" or "uvloop"
    loop: str = "asyncio"
    #: dynamic Kafka broker settings for this variant's rounds (name → value)
    broker: dict[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str) -> Variant:
        name, _, spec = text.partition(":")
        variant = cls(name)
        for item in filter(None, spec.split(",")):
            key, _, value = item.partition("=")
            if key == "tree":
                variant.tree = Path(value).resolve()
            elif key == "client":
                variant.transport = value
            elif key == "loop":
                if value not in ("asyncio", "uvloop"):
                    raise argparse.ArgumentTypeError(f"loop={value}: asyncio or uvloop")
                variant.loop = value
            elif key.startswith(BROKER_PREFIX):
                variant.broker[key.removeprefix(BROKER_PREFIX)] = value
            else:
                variant.env[key if key.startswith("TABLETOP_") else f"TABLETOP_{key}"] = value
        return variant

    def stack_env(self) -> dict[str, str]:
        env = dict(self.env)
        if self.tree is not None:
            env["PYTHONPATH"] = f"{self.tree}:{self.tree / 'protos'}"
            # ``python -m`` puts the working directory first on sys.path, ahead of
            # PYTHONPATH: without this the services would import this checkout's code
            env["PYTHONSAFEPATH"] = "1"
        return env


def summary(load: LoadResult) -> dict[str, float]:
    seconds = load.end - load.start
    actions = max(load.actions, 1)
    row = {
        "actions/s": load.actions / seconds,
        "ack p50": percentile(load.ack_ms, 50) if load.ack_ms else float("nan"),
        "ack p99": percentile(load.ack_ms, 99) if load.ack_ms else float("nan"),
        "view p50": percentile(load.view_ms, 50) if load.view_ms else float("nan"),
        "view p99": percentile(load.view_ms, 99) if load.view_ms else float("nan"),
        # a match's start: CreateMatch sent → its view there for the seat's token
        "create p50": percentile(load.create_ms, 50) if load.create_ms else float("nan"),
        # … → the match's first action sent
        "start p50": percentile(load.start_ms, 50) if load.start_ms else float("nan"),
    }
    stack = 0.0
    for process, cpu in sorted(load.cpu_s.items()):
        row[f"cpu {process}"] = cpu / actions * 1000
        if process not in ("bench client", "other", "idle"):
            stack += cpu / actions * 1000
    row["cpu stack"] = stack
    # The bots' CPU per action is the same work in every variant: the stack's over it
    # gauges a change apart from how fast the machine ran in that round.
    client = row.get("cpu bench client", 0.0)
    if client:
        row["cpu stack / client"] = stack / client
    row["refused creates"] = load.creates_refused
    return row


def measure(
    variant: Variant, levels: list[int], warmup: float, duration: float, game: str, seed: int
) -> dict[int, dict[str, float]]:
    prefix = f"ab{uuid.uuid4().hex[:6]}."
    run_dir = Path(tempfile.mkdtemp(prefix=f"tabletop-ab-{variant.name}-"))
    with ephemeral_stack(prefix, run_dir, extra_env=variant.stack_env()) as stack:
        pids: dict[str, int | None] = {name: stack.pid(name) for name in ORDER}
        pids["kafka"] = kafka_pid()

        async def loads() -> dict[int, dict[str, float]]:
            out: dict[int, dict[str, float]] = {}
            for i, level in enumerate(levels):
                if i:
                    await asyncio.sleep(BENCH_MATCH_IDLE_S + 1)
                load = await run_load(
                    stack.addr("gateway"),
                    game,
                    level,
                    duration,
                    warmup,
                    seed=seed,
                    pids=pids,
                    transport=variant.transport,
                )
                out[level] = summary(load)
            return out

        factory = uvloop.new_event_loop if variant.loop == "uvloop" else None
        with (
            broker_configs(stack.kafka, variant.broker),
            asyncio.Runner(loop_factory=factory) as runner,
        ):
            return runner.run(loads())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.ab", description=__doc__)
    parser.add_argument("--variant", action="append", required=True, type=Variant.parse)
    parser.add_argument("--levels", default="20,100")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--game", default="crashland")
    parser.add_argument("--json", type=Path, default=None, help="also write every sample here")
    args = parser.parse_args()
    levels = [int(v) for v in args.levels.split(",")]
    #: variant → level → round → its row (None: that round failed)
    by_round: dict[str, dict[int, list[dict[str, float] | None]]] = {
        v.name: {level: [None] * args.rounds for level in levels} for v in args.variant
    }
    for round_ in range(args.rounds):
        # Every other round in reverse order: the variant measured second in a round ran
        # 2-15% slower with identical code (4 rounds of two same variants: 673 against
        # 640 actions/s, stack CPU 2.22 against 2.37 ms), so a fixed order favours the
        # first. Over an even number of rounds each variant has each place equally often.
        for variant in args.variant if round_ % 2 == 0 else reversed(args.variant):
            try:
                figures = measure(variant, levels, args.warmup, args.duration, args.game, round_)
            except Exception as error:  # a stack that failed to start: say so, go on
                print(f"round {round_ + 1} {variant.name}: failed ({error})", flush=True)
                continue
            for level, row in figures.items():
                by_round[variant.name][level][round_] = row
                brief = ", ".join(
                    f"{k} {row[k]:.1f}" for k in ("actions/s", "view p50", "view p99", "cpu stack")
                )
                print(f"round {round_ + 1} {variant.name} @{level}: {brief}", flush=True)
    samples = {
        name: {level: [r for r in rows if r is not None] for level, rows in levels_.items()}
        for name, levels_ in by_round.items()
    }
    if args.json:
        args.json.write_text(json.dumps(samples, indent=1))
    keys = sorted({k for v in samples.values() for rows in v.values() for r in rows for k in r})
    for level in levels:
        print(f"\n{level} concurrent matches, medians of {args.rounds} rounds")
        print(f"{'':24}" + "".join(f"{v.name:>14}" for v in args.variant))
        for key in keys:
            cells = []
            for variant in args.variant:
                values = [r[key] for r in samples[variant.name].get(level, []) if key in r]
                cells.append(f"{statistics.median(values):14.2f}" if values else f"{'-':>14}")
            print(f"{key:24}" + "".join(cells))
        base = args.variant[0]
        for variant in args.variant[1:]:
            print(f"\n{variant.name} ÷ {base.name}, round by round (each round's pair):")
            for figure, higher_is_better in FIGURES.items():
                result = paired(
                    by_round[base.name][level],
                    by_round[variant.name][level],
                    figure,
                    higher_is_better,
                )
                print(f"  {result.line()}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
