"""The engine dataclass ↔ protobuf conversion, measured in one process (CPU time).

``python -m tests.bench.conversion [--rounds N] [--seeds N]`` prints, per game, medians
over the rounds of: µs of CPU to fill a view's message (``GameMessages.view_to_message``),
to read it back (``protoconv.read``, as the CLI bots and pictures do), to decode one event
from its ``Any`` (what every fold does), and ReplayMatchBatches' in-process step (fold,
view and the step's bytes as the gateway draws them, ``tests.bench.replay.fold_with_views``,
for the spectator) in steps/s. The views are the first seat's after every event of seeded
random playouts.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

from services.adapters import protoconv
from services.adapters.game_adapter import messages_for
from services.games.registry import all_games, get_game

from .engine import envelopes_of, one_playout, players_for
from .replay import fold_with_views


def cpu_median(rounds: int, work: Callable[[], object]) -> float:
    spent = []
    for _ in range(rounds):
        began = time.process_time()
        work()
        spent.append(time.process_time() - began)
    return statistics.median(spent)


def measure(name: str, rounds: int, seeds: int) -> str:
    game, messages = get_game(name), messages_for(name)
    viewer = players_for(name)[0]
    views: list[Any] = []
    events: list[Any] = []
    boards: list[list[Any]] = []
    for seed in range(1, seeds + 1):
        playout = one_playout(name, seed)
        state = game.initial_state()
        for event in playout.events:
            state = game.evolve(state, event)
            views.append(game.view(state, viewer))
        events.extend(playout.events)
        boards.append(envelopes_of(name, playout))
    filled = [messages.view_to_message(v) for v in views]
    packed = [messages.event_to_any(e) for e in events]
    steps = sum(len(b) for b in boards)
    fill_s = cpu_median(rounds, lambda: [messages.view_to_message(v) for v in views])
    read_s = cpu_median(rounds, lambda: [protoconv.read(game.view_type, m) for m in filled])
    event_s = cpu_median(rounds, lambda: [messages.event_from_any(p) for p in packed])
    replay_s = cpu_median(rounds, lambda: [fold_with_views(b, "") for b in boards])
    return (
        f"{name:16} {len(views):5} views  fill {fill_s / len(views) * 1e6:6.1f} µs"
        f"  read {read_s / len(views) * 1e6:6.1f} µs"
        f"  event {event_s / len(events) * 1e6:5.1f} µs"
        f"  replay in-process {steps / replay_s:6.0f} steps/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.conversion", description=__doc__)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    for name in sorted(all_games()):
        print(measure(name, args.rounds, args.seeds), flush=True)


if __name__ == "__main__":
    main()
