"""The issue's targets (issue 13), set on the figures once every figure of the run is known,
and the side-by-side table of Tabletop and its peer, boardgame.io.

Two targets are the peer's own figures in the same run: at 20 concurrent matches Tabletop
should move at least as many actions per second as boardgame.io with FlatFile storage, with
a p99 action → view no longer than its p99 move → update. When the peer did not run (e.g.
``--quick``), those two fall back to the peer's figures measured earlier on this machine,
and say so. Targets are reported, never asserted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .stats import Figure, Target

PEER_LEVEL = 20
#: boardgame.io 0.50.2, FlatFile, 20 concurrent matches, measured earlier on this machine
#: (issue 13): used only when the peer did not run
EARLIER_FLATFILE_RATE = 780.0
EARLIER_FLATFILE_P99_MS = 40.0
#: 100 matches: no collapse (p99 bound) and at least the 20-match throughput
LOADED_LEVEL = 100
LOADED_VIEW_P99_MS = 250.0
#: whole stack CPU per acknowledged action (Kafka and every service, not the bots)
STACK_CPU_MS = 2.5
REBUILD_EVENTS_PER_S = 20_000.0
REPLAY_EVENTS_PER_S = 10_000.0
PLAYOUTS_PER_S = {"crashland": 2_000.0, "drillit": 1_000.0}
#: issue 42: engines fast enough for search bots, in playouts per CPU-second
PLAYOUTS_PER_CPU_S = {
    "crashland": 3_000.0,
    "drillit": 1_500.0,
    "imperial_miners": 1_000.0,
    "dungeon_drop": 100.0,
}


def _find(figures: Sequence[Figure], key: str) -> Figure | None:
    return next((f for f in figures if f.key == key), None)


def _finite(value: float | None) -> float | None:
    return value if value is not None and value == value else None


@dataclass(frozen=True)
class Fixed:
    key: str
    target: Target
    on: str = "median"


FIXED = (
    Fixed(
        f"latency.view.c{LOADED_LEVEL}",
        Target(LOADED_VIEW_P99_MS, f"p99 < {LOADED_VIEW_P99_MS:.0f} ms"),
        "p99",
    ),
    Fixed(
        "replay.rebuild.projector",
        Target(REBUILD_EVENTS_PER_S, f"≥ {REBUILD_EVENTS_PER_S:,.0f} events/s"),
    ),
    # the lead's answer to the replay target: the batched RPC (ReplayMatch one step a
    # message is reported next to it, without a target)
    Fixed(
        "replay.gateway.batches",
        Target(REPLAY_EVENTS_PER_S, f"≥ {REPLAY_EVENTS_PER_S:,.0f} events/s"),
    ),
    *(
        Fixed(f"engine.playouts.{game}", Target(rate, f"≥ {rate:,.0f}/s"))
        for game, rate in PLAYOUTS_PER_S.items()
    ),
    *(
        Fixed(f"engine.playouts_cpu.{game}", Target(rate, f"≥ {rate:,.0f}/CPU-s"))
        for game, rate in PLAYOUTS_PER_CPU_S.items()
    ),
)


def apply_targets(figures: Sequence[Figure]) -> None:
    """Set the issue's targets on the figures they concern (in place)."""
    for fixed in FIXED:
        found = _find(figures, fixed.key)
        if found is not None:
            found.target = fixed.target
            found.target_on = "p99" if fixed.on == "p99" else "median"
    for found in figures:
        if found.key.startswith("cpu.stack."):
            found.target = Target(STACK_CPU_MS, f"≤ {STACK_CPU_MS} ms")
    peer_rate = _find(figures, f"peer.flatfile.actions.c{PEER_LEVEL}")
    peer_update = _find(figures, f"peer.flatfile.update.c{PEER_LEVEL}")
    acks = _find(figures, f"throughput.acks.c{PEER_LEVEL}")
    if acks is not None:
        rate = _finite(peer_rate.median) if peer_rate else None
        acks.target = (
            Target(rate, f"≥ boardgame.io FlatFile ({rate:,.0f}/s, this run)")
            if rate
            else Target(
                EARLIER_FLATFILE_RATE,
                f"≥ {EARLIER_FLATFILE_RATE:,.0f}/s (boardgame.io FlatFile measured earlier; "
                "the peer did not run)",
            )
        )
    view = _find(figures, f"latency.view.c{PEER_LEVEL}")
    if view is not None:
        p99 = _finite(peer_update.p99) if peer_update else None
        view.target_on = "p99"
        view.target = (
            Target(p99, f"p99 ≤ boardgame.io FlatFile's ({p99:.1f} ms, this run)")
            if p99
            else Target(
                EARLIER_FLATFILE_P99_MS,
                f"p99 ≤ {EARLIER_FLATFILE_P99_MS:.0f} ms (boardgame.io FlatFile measured "
                "earlier; the peer did not run)",
            )
        )
    loaded = _find(figures, f"throughput.acks.c{LOADED_LEVEL}")
    base = _finite(acks.median) if acks else None
    if loaded is not None and base:
        loaded.target = Target(base, f"≥ the 20-match figure ({base:,.0f}/s)")


# -- side by side ----------------------------------------------------------------------------
def _cell(found: Figure | None, on: str = "median", digits: int = 0) -> str:
    value = _finite(None if found is None else (found.median if on == "median" else found.p99))
    return "—" if value is None else f"{value:,.{digits}f}"


def _times(ours: Figure | None, theirs: Figure | None, on: str = "median") -> str:
    mine = _finite(None if ours is None else (ours.median if on == "median" else ours.p99))
    peer = _finite(None if theirs is None else (theirs.median if on == "median" else theirs.p99))
    return "—" if mine is None or not peer else f"{mine / peer:.2f}x"


def side_by_side(figures: Sequence[Figure]) -> list[str]:
    """Markdown rows: Tabletop's figures next to boardgame.io's, as ratios."""
    levels = sorted({int(f.key.rsplit(".c", 1)[1]) for f in figures if f.key.startswith("peer.")})
    if not levels:
        return []
    lines = [
        "| Matches | Tabletop actions/s | bgio memory | bgio FlatFile | Tabletop ÷ FlatFile "
        "| Tabletop view p50 / p99 ms | bgio memory p50 / p99 | bgio FlatFile p50 / p99 "
        "| p99 ÷ FlatFile's | CPU ms/action: Tabletop stack | bgio memory | bgio FlatFile |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for level in levels:
        acks = _find(figures, f"throughput.acks.c{level}")
        view = _find(figures, f"latency.view.c{level}")
        cpu = _find(figures, f"cpu.stack.c{level}")
        peer = {
            storage: {
                kind: _find(figures, f"peer.{storage}.{kind}.c{level}")
                for kind in ("actions", "update", "cpu")
            }
            for storage in ("memory", "flatfile")
        }
        lines.append(
            f"| {level} | {_cell(acks)} | {_cell(peer['memory']['actions'])} "
            f"| {_cell(peer['flatfile']['actions'])} "
            f"| {_times(acks, peer['flatfile']['actions'])} "
            f"| {_cell(view, digits=1)} / {_cell(view, 'p99', 1)} "
            f"| {_cell(peer['memory']['update'], digits=1)} / "
            f"{_cell(peer['memory']['update'], 'p99', 1)} "
            f"| {_cell(peer['flatfile']['update'], digits=1)} / "
            f"{_cell(peer['flatfile']['update'], 'p99', 1)} "
            f"| {_times(view, peer['flatfile']['update'], 'p99')} "
            f"| {_cell(cpu, digits=2)} | {_cell(peer['memory']['cpu'], digits=2)} "
            f"| {_cell(peer['flatfile']['cpu'], digits=2)} |"
        )
    return lines
