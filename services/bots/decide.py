"""A bot's decision, in a worker process: the searches of the stronger levels take most of a
second of CPU each, which in the service's own process would hold its event loop (and the
other seats) up. A decision is a pure function of what is sent: the game, the level, a
seed, and the seat's view and legal actions as the gateway served them (serialised)."""

from __future__ import annotations

import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor

from services.bots.levels import level_policy
from services.bots.network_bot import NetworkBot
from tabletop.v1 import board_pb2, match_pb2


def decide(game: str, level: str, seed: int, seat: str, view: bytes, legal: bytes) -> bytes:
    """The chosen entry (a LegalAction, serialised) among the seat's legal actions."""
    bot = NetworkBot(game, seat, level_policy(game, level, seed), level)
    chosen = bot.choose(
        match_pb2.MatchView.FromString(view), board_pb2.GetLegalActionsReply.FromString(legal)
    )
    return chosen.SerializeToString()


#: how often a worker looks whether the service that started it is still there
PARENT_CHECK_S = 1.0


def _exit_with(parent: int) -> None:
    """A worker outlives a service killed outright (SIGKILL: no shutdown reaches it, and its
    queue never closes), so it watches its parent and ends when it is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def workers(count: int = 0) -> Executor:
    """Processes for decisions (``count`` 0: one per CPU). Spawned, not forked: the parent
    runs gRPC's threads, which a fork would copy in whatever state they were."""
    return ProcessPoolExecutor(
        max_workers=count or os.cpu_count() or 1,
        mp_context=multiprocessing.get_context("spawn"),
        initializer=_exit_with,
        initargs=(os.getpid(),),
    )
