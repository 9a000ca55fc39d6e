"""The benchmark report's targets and its side-by-side table with boardgame.io: which figure
gets which target, from the peer's figures of the same run or, without them, from the peer's
earlier figures (reported, never asserted)."""

from __future__ import annotations

from tests.bench.boardgameio import PeerLoad, peer_figures
from tests.bench.stats import Figure, figure
from tests.bench.targets import (
    EARLIER_FLATFILE_P99_MS,
    EARLIER_FLATFILE_RATE,
    apply_targets,
    side_by_side,
)


def tabletop(acks20: float, view20_ms: list[float], acks100: float) -> list[Figure]:
    return [
        figure("throughput.acks.c20", "t", "/s", "higher", [[acks20]]),
        figure("latency.view.c20", "v", "ms", "lower", [view20_ms]),
        figure("throughput.acks.c100", "t", "/s", "higher", [[acks100]]),
        figure("latency.view.c100", "v", "ms", "lower", [[300.0]]),
        figure("cpu.stack.c20", "c", "ms", "lower", [[3.0]]),
        figure("engine.playouts.drillit", "e", "/s", "higher", [[1200.0]]),
    ]


def peer_load(storage: str, level: int, moves: int, latency_ms: float) -> PeerLoad:
    return PeerLoad(
        storage,
        level,
        start=0.0,
        end=2.0,
        stamps=[2.0 * i / moves for i in range(moves)],
        latency_ms=[latency_ms] * moves,
        cpu_s={"server": moves * 0.002},
    )


def by_key(figures: list[Figure]) -> dict[str, Figure]:
    return {f.key: f for f in figures}


def test_the_20_match_targets_are_the_peers_flatfile_figures_of_the_same_run() -> None:
    peer = peer_figures(
        [peer_load("flatfile", 20, 800, 30.0), peer_load("memory", 20, 4000, 3.0)], "0.50.2"
    )
    figures = by_key(tabletop(500.0, [10.0] * 50 + [80.0] * 50, 600.0) + peer)
    apply_targets(list(figures.values()))
    acks, view = figures["throughput.acks.c20"], figures["latency.view.c20"]
    assert acks.target is not None and acks.target.value == 400.0  # 800 moves in 2 s
    assert (acks.status, "this run" in acks.target.description) == ("met", True)
    assert view.target is not None and view.target.value == 30.0
    assert view.target_on == "p99" and view.status == "not met"  # p99 of 80 ms vs 30 ms
    assert figures["peer.flatfile.cpu.c20"].median == 2.0


def test_without_the_peer_the_targets_are_its_earlier_figures_and_say_so() -> None:
    figures = by_key(tabletop(500.0, [10.0], 100.0))
    apply_targets(list(figures.values()))
    acks, view = figures["throughput.acks.c20"], figures["latency.view.c20"]
    assert acks.target is not None and acks.target.value == EARLIER_FLATFILE_RATE
    assert view.target is not None and view.target.value == EARLIER_FLATFILE_P99_MS
    assert "did not run" in acks.target.description
    # 100 matches: at least the 20-match throughput, and a p99 bound
    loaded = figures["throughput.acks.c100"]
    assert loaded.target is not None and loaded.target.value == 500.0
    assert loaded.status == "not met"
    assert figures["latency.view.c100"].status == "not met"
    assert figures["cpu.stack.c20"].status == "not met"
    assert figures["engine.playouts.drillit"].status == "met"


def test_the_side_by_side_table_gives_tabletop_as_ratios_to_the_peer() -> None:
    peer = peer_figures([peer_load("flatfile", 20, 800, 30.0)], "0.50.2")
    figures = tabletop(200.0, [60.0], 100.0) + peer
    rows = side_by_side(figures)
    assert len(rows) == 3  # header, rule, the 20-match row
    cells = [c.strip() for c in rows[2].strip("|").split("|")]
    assert cells[0] == "20" and cells[1] == "200" and cells[3] == "400"
    assert cells[4] == "0.50x"  # 200/s against FlatFile's 400/s
    assert cells[8] == "2.00x"  # p99 60 ms against FlatFile's 30 ms
    assert side_by_side(tabletop(1.0, [1.0], 1.0)) == []
