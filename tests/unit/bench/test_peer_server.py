"""The peer's server says how it ended when it dies mid-run (its log is kept)."""

from __future__ import annotations

import shutil
from pathlib import Path
from types import SimpleNamespace

from tests.bench.boardgameio import PeerServer


def test_a_server_gone_says_its_exit_code_and_last_line(tmp_path: Path) -> None:
    server = PeerServer(tmp_path, "flatfile")
    try:
        assert server.exited() is None  # never started
        server.process = SimpleNamespace(returncode=None)  # type: ignore[assignment]
        assert server.exited() is None  # running
        server.log.write_text("starting\nError: EMFILE: too many open files\n")
        server.process = SimpleNamespace(returncode=1)  # type: ignore[assignment]
        ended = server.exited()
        assert ended is not None
        assert ended.startswith("the boardgame.io server exited with code 1: Error: EMFILE")
        assert str(server.log) in ended
    finally:
        shutil.rmtree(server.data, ignore_errors=True)
        server.log.unlink(missing_ok=True)
