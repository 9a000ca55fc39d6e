"""The view-based bots (``GAME.bots()``) a networked client plays with: over positions from
seeded playouts they pick exactly what the in-process bots of the same seed pick, and every
pick is legal."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

from services.games.contract import ViewPolicy
from services.games.crashland import GAME
from services.games.crashland.bots import greedy_policy
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CrashlandView
from services.games.playout import Policy, play, random_policy
from tests.unit.games.crashland.crashland_given import PLAYER

Position = tuple[CrashlandState, str, Sequence[Any]]
Watch = Callable[[CrashlandState, str, Sequence[Any]], None]
DRIVERS: dict[str, Callable[[int], Policy]] = {"random": random_policy, "greedy": greedy_policy}


def view_policy(name: str, seed: int) -> ViewPolicy:
    return GAME.bots()[name](seed)


def playout(driver: str, seed: int, watch: Watch | None = None) -> list[Position]:
    """Every decision of the seeded match ``driver`` plays (``watch`` sees each one)."""
    positions: list[Position] = []
    inner = DRIVERS[driver](seed)

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        positions.append((state, player, legal))
        if watch is not None:
            watch(state, player, legal)
        return inner(state, player, legal)

    play(GAME, [PLAYER], {}, {PLAYER: choose}, seed)
    return positions


def all_positions() -> Iterator[Position]:
    for seed in range(12):
        yield from playout("random" if seed % 2 else "greedy", seed)


def seen_by(state: CrashlandState, player: str) -> CrashlandView:
    view = GAME.view(state, player)
    assert isinstance(view, CrashlandView)
    return view


@pytest.mark.parametrize("seed", range(16))
def test_view_greedy_picks_what_the_simulation_greedy_picks(seed: int) -> None:
    """Both of one seed consulted at every decision of a match, played by the greedy bot
    (even seeds) or the random one (odd seeds)."""
    by_view = view_policy("greedy", 500 + seed)
    by_state = greedy_policy(500 + seed)
    decisions = 0

    def watch(state: CrashlandState, player: str, legal: Sequence[Any]) -> None:
        nonlocal decisions
        chosen = by_view(seen_by(state, player), player, legal)
        assert chosen in legal
        assert by_state(state, player, legal) == chosen
        decisions += 1

    playout("random" if seed % 2 else "greedy", seed, watch)
    assert decisions > 10


def test_view_random_picks_what_the_simulation_random_picks() -> None:
    by_view, by_state = view_policy("random", 3), random_policy(3)
    for state, player, legal in all_positions():
        assert by_view(seen_by(state, player), player, legal) == by_state(state, player, legal)


def test_view_bots_always_pick_a_legal_action() -> None:
    bots = [view_policy(name, 9) for name in ("random", "greedy")]
    count = 0
    for state, player, legal in all_positions():
        for bot in bots:
            assert bot(seen_by(state, player), player, legal) in legal
        count += 1
    assert count > 300


def test_view_greedy_decides_the_same_on_a_view_read_back_from_protobuf() -> None:
    """What the CLI's network bot gets: the view sent as a message and read back."""
    pytest.importorskip("tabletop.v1.crashland_pb2")
    protoconv = pytest.importorskip("services.adapters.protoconv")
    messages = protoconv.GameMessages(GAME)
    local, remote = view_policy("greedy", 5), view_policy("greedy", 5)
    for state, player, legal in playout("greedy", 4):
        view = seen_by(state, player)
        received = protoconv.read(CrashlandView, messages.view_to_message(view))
        assert remote(received, player, legal) == local(view, player, legal)


def test_the_game_offers_a_random_and_a_greedy_bot() -> None:
    assert set(GAME.bots()) == {"random", "greedy"}
