"""The search's playout loop written against the ``Game`` contract alone, for
``tests.bench.engine_ab`` to measure checkouts from before the search bots the way it
measures later ones (``tests.bench.engine.search_cpu_rate``). Loaded by its path: no
imports from this checkout's ``tests`` or ``services.bots``."""

from __future__ import annotations

import random
import time
from typing import Any

from services.games import contract as c
from services.games.registry import get_game


def contract_cpu_rate(game: str, seconds: float, seed: int) -> float:
    """``search_cpu_rate`` for a checkout from before the search bots: random playouts of
    its engine played as ``services.bots.search.playout.play_out`` plays them (the
    ``Game`` contract's folded steps, chance from one ``random.Random``), written against
    the contract alone so that it runs on any checkout (engines from before issue 42)."""
    base = get_game(game)
    engine = base.rollout_engine() if hasattr(base, "rollout_engine") else base
    players = [f"player{i + 1}" for i in range(base.min_players)]

    def playout(index: int) -> None:
        rng = random.Random(index)
        piles: dict[str, list[str]] = {}
        state = engine.fold(engine.setup(players, {}), engine.initial_state())
        while True:
            step = engine.next_step(state)
            if isinstance(step, c.Finished):
                return
            if isinstance(step, c.AwaitingChance):
                request: Any = step.request
                outcome: Any
                if isinstance(request, c.RollDice):
                    dice = [rng.randint(1, request.sides) for _ in range(request.count)]
                    outcome = c.DiceRolled(tuple(dice))
                elif isinstance(request, c.ShuffleDeck):
                    cards = list(request.cards)
                    rng.shuffle(cards)
                    piles[request.deck] = cards
                    outcome = c.DeckShuffled(request.deck, len(cards))
                else:
                    pile = piles[request.deck]
                    outcome = c.CardsDrawn(request.deck, tuple(pile[: request.count]))
                    del pile[: request.count]
                state = engine.resolve_folded(state, outcome)[1]
                continue
            actor = step.players[0]
            legal = engine.legal_choices(state, actor)
            action = c.concrete(legal[rng.randrange(len(legal))], rng)
            state = engine.decide_folded(state, actor, action)[1]

    for index in range(3):  # imports, content and caches: not counted
        playout(-1 - index)
    cpu: list[float] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or len(cpu) < 3:
        began = time.process_time()
        playout(seed * 100_000 + len(cpu))
        cpu.append(time.process_time() - began)
    return len(cpu) / sum(cpu)
