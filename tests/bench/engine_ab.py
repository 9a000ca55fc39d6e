"""Random playouts per CPU-second of one game, two checkouts alternated (an engine A/B).

    python -m tests.bench.engine_ab BASE_DIR NEW_DIR GAME [--rounds 6] [--seconds 4]

Each directory is a checkout with its engines built as it builds them (``make install``
there, or the compiled modules copied in). A round measures both, one after the other in
fresh processes, in alternating order, with ``tests.bench.engine.search_cpu_rate`` (the
figure ``make bench`` reports as ``engine.playouts_cpu.GAME``: playouts as search plays them
out) and the same seed; the report is
each checkout's median and the paired ratios with their sign test (``tests.bench.paired``).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
from pathlib import Path

from .paired import paired

_ONE = """
import importlib.util, sys
game, seconds, seed, fallback = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
try:
    from tests.bench.engine import search_cpu_rate
except ImportError:  # a checkout from before the search's loop: this checkout's copy of it
    spec = importlib.util.spec_from_file_location("contract_loop", fallback)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    search_cpu_rate = module.contract_cpu_rate
print(search_cpu_rate(game, seconds, seed))
"""
#: loaded by path in a process importing another checkout (whose ``tests`` shadow ours)
_CONTRACT_LOOP = Path(__file__).with_name("contract_loop.py")


def measure(checkout: Path, game: str, seconds: float, seed: int) -> float:
    """Playouts per CPU-second of ``game`` in a fresh process importing ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    done = subprocess.run(
        [sys.executable, "-c", _ONE, game, str(seconds), str(seed), str(_CONTRACT_LOOP)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return float(done.stdout.split()[-1])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("base", type=Path)
    parser.add_argument("new", type=Path)
    parser.add_argument("game")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=4.0, help="of playouts per process")
    args = parser.parse_args(argv)
    rates: dict[str, list[float]] = {"base": [], "new": []}
    for round_ in range(args.rounds):
        order = ("base", "new") if round_ % 2 == 0 else ("new", "base")
        for side in order:
            checkout = args.base if side == "base" else args.new
            rates[side].append(measure(checkout, args.game, args.seconds, round_ % 3))
        print(f"round {round_ + 1}: base {rates['base'][-1]:,.1f}, new {rates['new'][-1]:,.1f}")
    base, new = (statistics.median(rates[s]) for s in ("base", "new"))
    rows = {s: [{"playouts/CPU-s": r} for r in rates[s]] for s in rates}
    result = paired(rows["base"], rows["new"], "playouts/CPU-s", higher_is_better=True)
    print(f"{args.game}: base median {base:,.1f}, new median {new:,.1f} playouts per CPU-second")
    print(result.line())


if __name__ == "__main__":
    main()
