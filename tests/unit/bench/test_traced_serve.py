"""The capacity run's tracemalloc diagnostics: snapshots asked for by file, and the lines
whose memory grew between two of them."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from tests.bench.human.traced_serve import compare, request


def grow(kept: list[bytearray], count: int) -> None:
    for _ in range(count):
        kept.append(bytearray(10_000))


def test_compare_names_the_line_that_grew_and_its_share_per_match(tmp_path: Path) -> None:
    kept: list[bytearray] = []
    tracemalloc.start(4)
    try:
        tracemalloc.take_snapshot().dump(str(tmp_path / "a"))
        grow(kept, 100)
        tracemalloc.take_snapshot().dump(str(tmp_path / "b"))
    finally:
        tracemalloc.stop()
    lines = compare(tmp_path / "a", tmp_path / "b", per=100)
    assert lines, "the growth was not found"
    top = lines[0]
    assert "test_traced_serve.py" in top  # where the bytearrays were made
    per_match = float(top.split("(")[1].split("B per")[0])
    assert 10_000 <= per_match < 11_000


def test_a_request_is_a_whole_file_naming_the_snapshot(tmp_path: Path) -> None:
    written = request(tmp_path, "gateway", 2)
    assert (tmp_path / "gateway.request").read_text() == "2"
    assert written == tmp_path / "gateway-2.tracemalloc"
    assert not (tmp_path / "gateway.request.tmp").exists()
