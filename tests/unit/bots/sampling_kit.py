"""Checks every game's sampler must pass, over the decisions of seeded matches.

At each decision a seat faces in a match played by the game's bots, the sampler is asked
for determinizations from the seat's view and legal actions; each must show the seat the
same view, offer it the same legal actions, and play on to the end of the match with the
game's own engine and the search's chance (its draw piles hold what the engine draws).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from services.bots.search.determinization import Determinization, sampler_for
from services.bots.search.playout import SearchChance
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    Finished,
    Game,
    concrete,
)
from services.games.playout import Policy, play, random_policy
from services.games.registry import get_game


@dataclass(frozen=True)
class Decision:
    state: Any
    player: str
    legal: tuple[Any, ...]


def decisions(
    game_name: str,
    seats: int,
    seed: int,
    options: dict[str, str] | None = None,
    bot: str = "greedy",
) -> list[Decision]:
    """Every decision of one seeded match played by ``bot`` (from views) at every seat."""
    game = get_game(game_name)
    players = [f"player{i + 1}" for i in range(seats)]
    seen: list[Decision] = []

    def policy(seed: int) -> Policy:
        chooser: Policy
        if bot == "random":
            chooser = random_policy(seed)
        else:
            by_view = game.bots()[bot](seed)

            def chooser(state: Any, player: str, legal: Sequence[Any]) -> Any:
                return by_view(game.view(state, player), player, legal)

        def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
            seen.append(Decision(state, player, tuple(legal)))
            return chooser(state, player, legal)

        return choose

    opts = {o.name: o.default for o in game.options} | (options or {})
    play(game, players, opts, {p: policy(seed * 10 + i) for i, p in enumerate(players)}, seed)
    return seen


def played_out(game: Game[Any], determinization: Determinization, rng: random.Random) -> Finished:
    """The sampled state played to its end by uniform choices and the search's chance."""
    chance = SearchChance(determinization.piles, rng)
    state = determinization.state
    for _ in range(20_000):
        step = game.next_step(state)
        if isinstance(step, Finished):
            return step
        if isinstance(step, AwaitingChance):
            state = game.resolve_folded(state, chance.resolve(step.request))[1]
            continue
        assert isinstance(step, AwaitingPlayers)
        player = step.players[0]
        legal = game.legal_actions(state, player)
        action = concrete(legal[rng.randrange(len(legal))], rng)
        state = game.decide_folded(state, player, action)[1]
    raise AssertionError("a sampled state's playout did not end")


def check_sampler(
    game_name: str,
    found: Sequence[Decision],
    samples: int = 2,
    every: int = 1,
    play_out: int = 3,
    pile_sizes: Callable[[Any], dict[str, int]] | None = None,
) -> int:
    """Samples at every ``every``-th decision; the first ``play_out`` of each decision's
    samples are played to the end; ``pile_sizes`` (of the real state) are the sizes the
    chance services' piles have there. Returns the number of decisions checked."""
    game = get_game(game_name)
    sample = sampler_for(game_name)
    rng = random.Random(7)
    checked = 0
    for index, decision in enumerate(found):
        if index % every:
            continue
        view = game.view(decision.state, decision.player)
        for n in range(samples):
            determinization = sample(view, decision.player, decision.legal, rng)
            sampled = determinization.state
            assert game.view(sampled, decision.player) == view, _where(game_name, index)
            assert tuple(game.legal_actions(sampled, decision.player)) == decision.legal, _where(
                game_name, index
            )
            if pile_sizes is not None:
                sizes = {deck: len(cards) for deck, cards in determinization.piles.items()}
                assert sizes == pile_sizes(decision.state), _where(game_name, index)
            if n < play_out:
                played_out(game, determinization, rng)
        checked += 1
    return checked


def _where(game: str, index: int) -> str:
    return f"{game}: the sample at decision {index} differs from what the seat was shown"


def hidden_twins(
    found: Sequence[Decision],
    differs: Callable[[Any, Any], bool],
    game_name: str,
) -> Iterator[tuple[Decision, Decision]]:
    """Pairs of decisions of different matches whose seat is shown the same view and
    offered the same actions while their states differ (``differs``)."""
    game = get_game(game_name)
    by_view: dict[Any, Decision] = {}
    for decision in found:
        key = (decision.player, repr(game.view(decision.state, decision.player)), decision.legal)
        other = by_view.setdefault(key, decision)
        if other is not decision and differs(other.state, decision.state):
            yield other, decision
