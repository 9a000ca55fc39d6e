"""The engine A/B measures both checkouts in turn and reports their medians and the paired
ratio (a tiny run: one round of Crashland, the checkout against itself)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.bench import engine_ab

ROOT = Path(__file__).resolve().parents[3]


def test_a_round_measures_both_checkouts_and_pairs_them(
    capsys: pytest.CaptureFixture[str],
) -> None:
    engine_ab.main([str(ROOT), str(ROOT), "crashland", "--rounds", "1", "--seconds", "0.05"])
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("round 1: base ") and ", new " in out[0]
    assert out[1].startswith("crashland: base median ")
    assert out[2].startswith("playouts/CPU-s") and "of 1" in out[2]


def test_a_failed_measurement_is_an_error_not_a_figure() -> None:
    with pytest.raises(subprocess.CalledProcessError):
        engine_ab.measure(ROOT, "no_such_game", 0.05, 0)
