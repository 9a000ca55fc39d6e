"""The pure engines in-process: complete random playouts per second, events folded per
second (``evolve`` only, and from protobuf envelopes as every reader folds them).

Playouts per CPU-second (issue 42's "engines fast enough to search",
``engine.playouts_cpu.GAME``) are played as a search bot plays them: its own loop
(``services.bots.search.playout.play_out``) over the engine it plays out with,
``Game.rollout_engine()``, with chance drawn as it draws it. That engine is the game itself,
except Dungeon Drop, whose rollouts use its ROLLOUT physics (the issue allows a faster
physics setting for search rollouts; every recorded drop and flick is FULL).

The same random playouts through the board's command handler (command ids, idempotent
replies, dice and draws by the dice and decks services' HMAC derivation) on the match's own
engine are reported beside them (``engine.playouts_cpu_handler.GAME``): what ``tabletop
simulate`` and the property tests pay, not what a search pays."""

from __future__ import annotations

import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.adapters.folding import created, fold
from services.adapters.game_adapter import messages_for
from services.bots.search.budget import Budget
from services.bots.search.playout import SearchChance, Stopped, play_out
from services.bots.search.rollouts import random_policies
from services.common.envelope import Cause, make_envelope
from services.games.contract import Outcome
from services.games.playout import Playout, play, random_policy
from services.games.registry import all_games, get_game
from tabletop.v1 import envelope_pb2, platform_events_pb2

from .stats import Figure, Floor, figure
from .timing import now

MAX_PLAYOUTS = 100_000


@dataclass
class EngineRun:
    """One game, one run: per-playout rates and per-batch fold rates."""

    game: str
    playout_rates: list[float] = field(default_factory=list)
    #: CPU seconds of this process per playout (the wall-clock rate suffers on a busy machine)
    playout_cpu_s: list[float] = field(default_factory=list)
    #: the same, of playouts as search plays them out (``search_playout``)
    search_cpu_s: list[float] = field(default_factory=list)
    events_per_playout: list[int] = field(default_factory=list)
    evolve_rates: list[float] = field(default_factory=list)
    envelope_rates: list[float] = field(default_factory=list)
    error: str = ""
    envelope_error: str = ""


def players_for(game: str) -> list[str]:
    return [f"player{i + 1}" for i in range(get_game(game).min_players)]


def one_playout(game: str, seed: int, rollout: bool = False) -> Playout:
    """A random playout of ``game`` through the command handler; ``rollout``: on the engine
    search plays out with (``Game.rollout_engine``)."""
    players = players_for(game)
    policies = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}
    engine = get_game(game)
    return play(engine.rollout_engine() if rollout else engine, players, {}, policies, seed)


def search_playout(game: str, seed: int) -> Outcome:
    """A random playout of ``game`` from its opening, as search plays one out
    (``play_out`` on ``Game.rollout_engine``, every seat uniform, chance from one seeded
    ``random.Random`` as ``SearchChance`` draws it)."""
    engine = get_game(game).rollout_engine()
    rng = random.Random(seed)
    opening = engine.fold(engine.setup(players_for(game), {}), engine.initial_state())
    # a time budget, as a search's: every step reads the thread's clock as it does
    allowance = Budget(cpu_seconds=3_600).start()
    ended = play_out(engine, opening, SearchChance({}, rng), random_policies(rng), allowance)
    if isinstance(ended, Stopped):
        raise RuntimeError(f"{game}: a random playout did not end (seed {seed})")
    return ended


def search_cpu_rate(game: str, seconds: float, seed: int) -> float:
    """Random playouts per CPU-second as search plays them out: the figure issue 42's
    targets are of (``engine.playouts_cpu.GAME``; ``tests.bench.engine_ab``)."""
    cpu = _cpu_per_playout(lambda index: search_playout(game, index), seconds, seed * MAX_PLAYOUTS)
    return len(cpu) / sum(cpu)


def _cpu_per_playout(playout: Callable[[int], object], seconds: float, first: int) -> list[float]:
    """CPU seconds of each playout (``playout(seed)``) for ``seconds`` of wall clock (at
    least three)."""
    # not counted: the first playouts of a process pay for imports, content and caches
    # (Crashland's first three took ~0.4 s of CPU here, a second's worth of playouts)
    for index in range(3):
        playout(-1 - index)
    deadline = now() + seconds
    cpu: list[float] = []
    for index in range(MAX_PLAYOUTS):
        if now() >= deadline and index >= 3:
            break
        began = time.process_time()
        playout(first + index)
        cpu.append(time.process_time() - began)
    return cpu


def envelopes_of(game: str, playout: Playout, match_id: str = "bench") -> list[Any]:
    """The board envelopes a match with these events would have (MatchCreated first)."""
    messages = messages_for(game)
    cause = Cause("bench", "bench", "board")
    created = platform_events_pb2.MatchCreated(game=game, players=players_for(game))
    payloads = [created, *(messages.event_to_any(e) for e in playout.events)]
    return [
        make_envelope(
            match_id=match_id, stream="board", sequence=i + 1, payload=p, cause=cause, game=game
        )
        for i, p in enumerate(payloads)
    ]


def evolve_rate(game: str, events: Sequence[Any]) -> float:
    engine = get_game(game)
    state = engine.initial_state()
    began = now()
    for event in events:
        state = engine.evolve(state, event)
    elapsed = now() - began
    return len(events) / elapsed if elapsed > 0 else 0.0


def envelope_rate(envelopes: Sequence[envelope_pb2.EventEnvelope]) -> float:
    """Decode (from bytes) and fold, as the projector and replay do."""
    raw = [e.SerializeToString() for e in envelopes]
    began = now()
    decoded = [envelope_pb2.EventEnvelope.FromString(r) for r in raw]
    match = created(decoded[0])
    for envelope in decoded[1:]:
        fold(match, envelope)
    elapsed = now() - began
    return len(raw) / elapsed if elapsed > 0 else 0.0


def measure_game(game: str, seconds: float, seed: int, fold_batches: int) -> EngineRun:
    run = EngineRun(game)
    try:
        # not counted: the first playouts of a process pay for imports, content and caches
        # (Crashland's first three took ~0.4 s of CPU here, a second's worth of playouts)
        for index in range(3):
            one_playout(game, -1 - index)
        deadline = now() + seconds
        playouts: list[Playout] = []
        for index in range(MAX_PLAYOUTS):
            if now() >= deadline and index >= 3:
                break
            began, began_cpu = now(), time.process_time()
            playout = one_playout(game, seed * MAX_PLAYOUTS + index)
            elapsed = now() - began
            run.playout_cpu_s.append(time.process_time() - began_cpu)
            run.playout_rates.append(1 / elapsed if elapsed > 0 else 0.0)
            run.events_per_playout.append(len(playout.events))
            if len(playouts) < fold_batches:
                playouts.append(playout)
        for playout in playouts:
            run.evolve_rates.append(evolve_rate(game, playout.events))
        run.search_cpu_s = _cpu_per_playout(
            lambda index: search_playout(game, index), seconds, seed * MAX_PLAYOUTS
        )
    except Exception:  # a game still being written must not sink the whole suite
        run.error = traceback.format_exc(limit=3)
        return run
    try:
        for playout in playouts:
            run.envelope_rates.append(envelope_rate(envelopes_of(game, playout)))
    except Exception:  # e.g. its protobuf messages are not generated yet
        run.envelope_error = traceback.format_exc(limit=3).strip().splitlines()[-1]
    return run


def measure_engines(seconds: float, seed: int, fold_batches: int) -> list[EngineRun]:
    return [measure_game(name, seconds, seed, fold_batches) for name in sorted(all_games())]


def _compiled_note(game: str) -> str:
    """Which of the game's modules ran compiled (mypyc, ``make install``)."""
    prefix = f"services.games.{game}."
    compiled = sorted(
        name.removeprefix(prefix)
        for name, module in list(sys.modules.items())
        if name.startswith(prefix) and str(getattr(module, "__file__", "")).endswith(".so")
    )
    return f"compiled: {', '.join(compiled)}" if compiled else "pure Python"


def _per_cpu_second(runs: Sequence[Sequence[float]]) -> list[list[float]]:
    """One figure a run: its playouts over the CPU they took."""
    return [[len(cpu) / sum(cpu)] for cpu in runs if sum(cpu)]


def engine_figures(runs: Sequence[EngineRun], noop_rate: float) -> list[Figure]:
    """Playouts/s and fold rates per game; floors from the no-op fold of the same run."""
    by_game: dict[str, list[EngineRun]] = {}
    for run in runs:
        by_game.setdefault(run.game, []).append(run)
    figures: list[Figure] = []
    for game, game_runs in sorted(by_game.items()):
        good = [r for r in game_runs if not r.error]
        if not good:
            continue
        events = [n for r in good for n in r.events_per_playout]
        mean_events = sum(events) / len(events) if events else 0.0
        cpu = sum(s for r in good for s in r.playout_cpu_s)
        playouts = sum(len(r.playout_cpu_s) for r in good)
        figures.append(
            figure(
                f"engine.playouts.{game}",
                f"Complete random playouts per second, {game} (in-process)",
                "/s",
                "higher",
                [r.playout_rates for r in good],
                floor=(
                    Floor(
                        noop_rate / mean_events,
                        f"no-op fold of {mean_events:.0f} events (its mean playout)",
                    )
                    if mean_events and noop_rate
                    else None
                ),
                note=f"{playouts / cpu:,.0f} per CPU-second of the bench process" if cpu else "",
            )
        )
        rollout_physics = get_game(game).rollout_engine() is not get_game(game)
        figures.append(
            figure(
                f"engine.playouts_cpu.{game}",
                f"Complete random playouts per CPU-second, {game} (in-process, as search "
                "plays them out)",
                "/CPU-s",
                "higher",
                # CPU time, so a busy machine slows it less than the per-second rate
                _per_cpu_second([r.search_cpu_s for r in good]),
                note=_compiled_note(game)
                + ("; ROLLOUT physics (recorded drops, flicks: FULL)" if rollout_physics else ""),
            )
        )
        figures.append(
            figure(
                f"engine.playouts_cpu_handler.{game}",
                f"Complete random playouts per CPU-second, {game} (in-process, through the "
                "board's command handler, with the services' dice and draws)",
                "/CPU-s",
                "higher",
                _per_cpu_second([r.playout_cpu_s for r in good]),
                note="FULL physics" if rollout_physics else "",
            )
        )
        figures.append(
            figure(
                f"replay.evolve.{game}",
                f"Events folded per second, {game} engine evolve (in-process)",
                "events/s",
                "higher",
                [r.evolve_rates for r in good],
                floor=Floor(noop_rate, "no-op fold") if noop_rate else None,
            )
        )
        enveloped = [r for r in good if r.envelope_rates]
        if enveloped:
            figures.append(
                figure(
                    f"replay.envelopes.{game}",
                    f"Envelopes decoded + folded per second, {game} (as readers fold, in-process)",
                    "events/s",
                    "higher",
                    [r.envelope_rates for r in enveloped],
                    floor=Floor(noop_rate, "no-op fold") if noop_rate else None,
                )
            )
    return figures
