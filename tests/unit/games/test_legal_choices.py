"""``legal_choices`` (what in-process playouts hand their policies) lists the legal actions
of ``legal_actions``, in the same order, some built only when read: Crashland's uplink
orders, Drillit's Excavate actions, Imperial Miners' keeps, chosen cards and placements.
Compared entry by entry, read by index (as a random policy reads them) and iterated, on
every decision of seeded matches of every game."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import pytest

from services.games.contract import Game
from services.games.crashland import actions as crashland_actions
from services.games.crashland.rules import _Arrangements
from services.games.drillit import actions as drillit_actions
from services.games.imperial_miners import actions as imperial_miners_actions
from services.games.playout import Policy, play, random_policy
from services.games.registry import all_games


def _compare(game: Game[Any], state: Any, player: str, kinds: set[type]) -> None:
    legal = game.legal_actions(state, player)
    choices = game.legal_choices(state, player)
    assert len(choices) == len(legal)
    assert [choices[i] for i in range(len(choices))] == list(legal)
    assert tuple(choices) == legal
    if legal:
        assert choices[-1] == legal[-1] and choices[-len(legal)] == legal[0]
        assert tuple(choices[1:3]) == legal[1:3]
    for index in (len(legal), -len(legal) - 1):
        with pytest.raises(IndexError):
            choices[index]
    kinds.update(type(a) for a in legal if not isinstance(choices, tuple))


@pytest.mark.parametrize("name", sorted(all_games()))
def test_legal_choices_are_the_legal_actions_in_order_on_every_decision(name: str) -> None:
    game = all_games()[name]
    kinds: set[type] = set()
    decisions = 0
    for seed in range({"crashland": 150, "dungeon_drop": 6}.get(name, 30)):
        players = [f"p{i + 1}" for i in range(game.min_players + seed % 2)][: game.max_players]
        random = {p: random_policy(seed * 7 + i) for i, p in enumerate(players)}

        def policy(
            state: Any, player: str, legal: Sequence[Any], random: dict[str, Policy] = random
        ) -> Any:
            nonlocal decisions
            _compare(game, state, player, kinds)
            decisions += 1
            return random[player](state, player, legal)

        play(game, players, {}, dict.fromkeys(players, policy), seed)
    assert decisions > 50
    lazy: dict[str, set[type]] = {
        "crashland": {crashland_actions.ArrangeUplink},
        "drillit": {drillit_actions.Excavate},
        "imperial_miners": {
            imperial_miners_actions.KeepCards,
            imperial_miners_actions.ChooseCard,
            imperial_miners_actions.PlaceCard,
        },
    }
    # the lazily built actions were among those compared
    assert lazy.get(name, set()) <= kinds


@pytest.mark.parametrize("cards", range(7))
def test_uplink_orders_by_index_are_the_permutations_in_order(cards: int) -> None:
    seen = tuple(f"c{i}" for i in range(cards)) + (("c0",) if cards > 3 else ())
    orders = _Arrangements(seen)
    expected = [crashland_actions.ArrangeUplink(o) for o in itertools.permutations(seen)]
    assert [orders[i] for i in range(len(orders))] == expected == list(orders)
