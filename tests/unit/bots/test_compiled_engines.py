"""The compiled engine modules (mypyc, ``make install``) and their Python sources play the
same matches: seeded playouts of every compiled game give the same events both ways. The
sources run in a subprocess that imports no extension module of ``services``."""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from services.games.playout import play, random_policy
from services.games.registry import get_game

ROOT = Path(__file__).resolve().parents[3]
GAMES = {"crashland": 1, "drillit": 3, "imperial_miners": 2, "dungeon_drop": 2}
SEEDS = range(6)

_PURE = '''
import importlib.abc, importlib.util, sys
from pathlib import Path

class SourcesOnly(importlib.abc.MetaPathFinder):
    """Finds services' modules as .py files, never as compiled extensions."""
    def find_spec(self, fullname, path, target=None):
        if fullname != "services" and not fullname.startswith("services."):
            return None
        base = Path.cwd().joinpath(*fullname.split("."))
        if (base / "__init__.py").exists():
            return importlib.util.spec_from_file_location(
                fullname, base / "__init__.py", submodule_search_locations=[str(base)])
        if base.with_suffix(".py").exists():
            return importlib.util.spec_from_file_location(fullname, base.with_suffix(".py"))
        return None

sys.meta_path.insert(0, SourcesOnly())
'''


def _digest(name: str, seats: int) -> str:
    game = get_game(name)
    players = [f"player{i + 1}" for i in range(seats)]
    h = hashlib.sha256()
    for seed in SEEDS:
        policies = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}
        h.update(repr(play(game, players, {}, policies, seed).events).encode())
    return h.hexdigest()


def test_sources_and_compiled_modules_play_the_same_matches() -> None:
    import services.games.crashland.rules as rules
    import services.games.drillit.tunnels as tunnels

    if not all(m.__file__ and m.__file__.endswith(".so") for m in (rules, tunnels)):
        pytest.skip("the engines are not compiled here (make install PURE=1, or make pure)")
    script = (
        _PURE
        + "import services.games.crashland.rules as r\n"
        + "assert r.__file__.endswith('.py'), r.__file__\n"
        + "from tests.unit.bots.test_compiled_engines import _digest\n"
        + "".join(f"print(_digest({n!r}, {s}))\n" for n, s in GAMES.items())
    )
    pure = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert pure == [_digest(name, seats) for name, seats in GAMES.items()]


def test_a_compiled_engine_imports_outside_the_checkout(tmp_path: Path) -> None:
    """The console scripts run from any folder: the modules' shared runtime library must
    be found through the ``services`` package, not the checkout's root."""
    import services.games.crashland.rules as rules

    if not (rules.__file__ or "").endswith(".so"):
        pytest.skip("the engines are not compiled here (make install PURE=1, or make pure)")
    imported = subprocess.run(
        [sys.executable, "-c", "import services.games.crashland.rules as r; print(r.__file__)"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert imported.returncode == 0, imported.stderr[-2000:]
    assert imported.stdout.strip().endswith(".so")
