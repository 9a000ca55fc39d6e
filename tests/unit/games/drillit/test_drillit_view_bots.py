"""The view-based bots (``GAME.bots()``) a networked client plays with: over positions from
seeded playouts they pick exactly what the simulation bots pick, the greedy one decides the
same on the public state rebuilt from a view as on the engine's full state (it needs no
hidden information), and every pick is legal."""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from services.games.contract import ViewPolicy
from services.games.drillit import GAME
from services.games.drillit import actions as act
from services.games.drillit import events as ev
from services.games.drillit.bots import BOTS, Greedy, greedy_view_policy
from services.games.drillit.content import CONTENT
from services.games.drillit.public_state import UNSHOWN, public_state
from services.games.drillit.state import DrillitState
from services.games.drillit.view import DrillitView
from services.games.playout import Policy, play
from tests.unit.games.drillit.drillit_given import on_turn

#: (seed, seats, difficulty, distance): every seat count (1 and 5 in the house variant),
#: difficulty and distance; odd seeds put the Exit piece on option 2
CELLS = [
    (
        seed,
        1 + seed % 5,
        ("easy", "medium", "hard")[seed % 3],
        ("short", "medium", "long")[seed % 4 % 3],
    )
    for seed in range(10)
]

Position = tuple[DrillitState, str, Sequence[Any]]


def view_policy(name: str, seed: int) -> ViewPolicy:
    return GAME.bots()[name](seed)


def seats(count: int) -> tuple[str, ...]:
    return tuple(f"p{i + 1}" for i in range(count))


def match_options(seed: int, count: int, difficulty: str, distance: str) -> dict[str, str]:
    options = {"difficulty": difficulty, "distance": distance, "exit": "12"[seed % 2]}
    if not GAME.min_players <= count <= GAME.max_players:
        options["player_count_variant"] = "house"
    return options


def playout(
    bot: str, seed: int, count: int, difficulty: str, distance: str, watch: Any = None
) -> list[Position]:
    """Every decision of a seeded match played by ``bot`` (``watch`` sees each one)."""
    positions: list[Position] = []

    def recording(inner: Policy) -> Policy:
        def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
            positions.append((state, player, legal))
            chosen = inner(state, player, legal)
            if watch is not None:
                watch(state, player, legal, chosen)
            return chosen

        return choose

    players = seats(count)
    policies = {p: recording(BOTS[bot](seed * 31 + i)) for i, p in enumerate(players)}
    options = match_options(seed, count, difficulty, distance)
    play(GAME, players, options, policies, seed, match_id=f"view-bots-{seed}")
    return positions


def all_positions() -> Iterator[Position]:
    for seed, count, difficulty, distance in CELLS:
        for bot in ("random", "greedy"):
            yield from playout(bot, seed, count, difficulty, distance)


def seen_by(state: DrillitState, player: str) -> DrillitView:
    view = GAME.view(state, player)
    assert isinstance(view, DrillitView)
    return view


def without_unshown(state: DrillitState) -> DrillitState:
    """``state`` with what no view shows at its defaults, the Armor in room order."""
    defaults = DrillitState()
    hidden = {name: getattr(defaults, name) for name in UNSHOWN}
    return dataclasses.replace(
        state, **hidden, armor_destroyed=tuple(sorted(state.armor_destroyed))
    )


def test_public_state_is_the_state_minus_what_views_do_not_show() -> None:
    count = 0
    for state, player, _ in all_positions():
        for viewer in (player, None):
            assert public_state(GAME.view(state, viewer)) == without_unshown(state)
        count += 1
    assert count > 500
    assert {"event_deck", "staged", "shuffled_decks"} <= UNSHOWN


def lockstep(driver: str, seed: int, count: int, difficulty: str, distance: str) -> int:
    """Play a match with ``driver``; at each decision three greedy bots of the seat's seed
    must agree: the view-based one, the state-based one simulations use, and the decision
    run directly on the engine's full state (hidden information included)."""
    players = seats(count)
    by_view = {p: view_policy("greedy", seed + i) for i, p in enumerate(players)}
    by_state = {p: BOTS["greedy"](seed + i) for i, p in enumerate(players)}
    full = {p: Greedy(random.Random(seed + i)) for i, p in enumerate(players)}
    decisions = 0

    def watch(state: DrillitState, player: str, legal: Sequence[Any], _: Any) -> None:
        nonlocal decisions
        chosen = by_view[player](seen_by(state, player), player, legal)
        assert chosen in legal
        assert by_state[player](state, player, legal) == chosen
        assert full[player].decide(state, player, legal) == chosen
        decisions += 1

    playout(driver, seed, count, difficulty, distance, watch)
    return decisions


@pytest.mark.parametrize(("seed", "count", "difficulty", "distance"), CELLS)
@pytest.mark.parametrize("driver", ["greedy", "random"])
def test_view_greedy_picks_what_the_simulation_greedy_and_the_full_state_greedy_pick(
    seed: int, count: int, difficulty: str, distance: str, driver: str
) -> None:
    seeds = (seed, 100 + seed, 200 + seed)
    decisions = sum(lockstep(driver, s, count, difficulty, distance) for s in seeds)
    assert decisions > 30


def test_view_random_picks_what_the_simulation_random_picks() -> None:
    by_view = view_policy("random", 7)
    by_state = BOTS["random"](7)
    for state, player, legal in playout("greedy", 3, 3, "easy", "short"):
        chosen = by_view(seen_by(state, player), player, legal)
        assert chosen == by_state(state, player, legal)


def test_view_bots_always_pick_a_legal_action() -> None:
    bots = {name: view_policy(name, 11) for name in ("random", "greedy")}
    for state, player, legal in all_positions():
        for bot in bots.values():
            assert bot(seen_by(state, player), player, legal) in legal


def test_view_greedy_decides_the_same_on_a_view_read_back_from_protobuf() -> None:
    """What the CLI's network bot gets: the view sent as a message and read back."""
    pytest.importorskip("tabletop.v1.drillit_pb2")
    protoconv = pytest.importorskip("services.adapters.protoconv")
    messages = protoconv.GameMessages(GAME)
    local, remote = view_policy("greedy", 5), view_policy("greedy", 5)
    for state, player, legal in playout("greedy", 4, 4, "medium", "long"):
        view = seen_by(state, player)
        received = protoconv.read(DrillitView, messages.view_to_message(view))
        assert remote(received, player, legal) == local(view, player, legal)


def test_the_game_offers_a_random_and_a_greedy_bot() -> None:
    assert set(GAME.bots()) == {"random", "greedy"}


def test_greedy_takes_plan_b_only_when_the_exit_piece_is_cut_off() -> None:
    exit_1 = CONTENT.layouts["short"].exits["1"]
    around = [ev.AbyssOpened(c) for c in exit_1.neighbours() if c in CONTENT.layouts["short"].cells]
    open_state = on_turn("ann")
    cut_off = on_turn("ann", *around)
    bot = greedy_view_policy(0)
    legal_open = GAME.legal_actions(open_state, "ann")
    legal_cut = GAME.legal_actions(cut_off, "ann")
    assert act.TakePlanB() in legal_open and act.TakePlanB() in legal_cut
    assert bot(seen_by(open_state, "ann"), "ann", legal_open) != act.TakePlanB()
    assert bot(seen_by(cut_off, "ann"), "ann", legal_cut) == act.TakePlanB()
