"""Decisions in worker processes (services/bots/decide.py): a decision is the seat's
view and legal actions in, one of those actions out; and a worker ends when the service
that started it is killed outright, rather than live on as an orphan."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from services.adapters.game_adapter import fill_game_view, legal_action_message
from services.bots.decide import decide
from services.games.registry import get_game
from tabletop.v1 import board_pb2, match_pb2
from tests.unit.bots.sampling_kit import decisions

PARENT = """
import os, sys, time
from services.bots.decide import workers
pool = workers(1)
print(pool.submit(os.getpid).result(), flush=True)
time.sleep(60)
"""


def _served(game_name: str) -> tuple[match_pb2.MatchView, board_pb2.GetLegalActionsReply]:
    """A seat's view and legal actions as the gateway serves them, at a real decision."""
    game = get_game(game_name)
    decision = next(d for d in decisions(game_name, 2, 1, {}) if len(d.legal) > 1)
    view = match_pb2.MatchView(game=game_name, viewer=decision.player)
    fill_game_view(view.game_view, game_name, game.view(decision.state, decision.player))
    legal = board_pb2.GetLegalActionsReply(
        actions=[legal_action_message(game, entry) for entry in decision.legal]
    )
    return view, legal


def test_a_decision_is_one_of_the_seats_legal_actions() -> None:
    view, legal = _served("drillit")
    seat, sent = view.viewer, (view.SerializeToString(), legal.SerializeToString())
    chosen = match_pb2.LegalAction.FromString(decide("drillit", "medium", 7, seat, *sent))
    assert chosen.action in [a.action for a in legal.actions]
    again = decide("drillit", "easy", 7, seat, *sent)
    assert match_pb2.LegalAction.FromString(again).action in [a.action for a in legal.actions]


def test_a_worker_ends_when_its_service_is_killed() -> None:
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    worker = 0
    try:
        assert parent.stdout is not None
        worker = int(parent.stdout.readline())
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait(10)
        deadline = time.monotonic() + 10
        while _alive(worker) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not _alive(worker)
    finally:
        if parent.poll() is None:
            parent.kill()
        if worker and _alive(worker):  # the test failed: leave no orphan behind
            os.kill(worker, signal.SIGKILL)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state not in ("Z", "X")
