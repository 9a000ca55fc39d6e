"""No view leaks what its viewer may not know: written once, run for every registered game.

Hidden information enters a match only through chance: the order of shuffled piles, and
so which card a draw brings to whom. The test plays each match twice with the same seeds
and the same actions; in the twin, two distinct cards of every shuffled pile swap places.
For each viewer (every seat and the spectator), after every command, the twin's view must
equal the original's until one of the swapped cards has appeared in that viewer's view
(in either run). A view that changes earlier depends on a card its viewer was never shown:
a face-down card, or a card only another seat holds. Views must also never contain a seed
(they are revealed only by the dice and decks services, after the end).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from services.adapters.game_adapter import fill_game_view
from services.games.chance import SeededChance
from services.games.codec import to_data
from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    DeckShuffled,
    Finished,
    Game,
    RuleViolation,
    ShuffleDeck,
    concrete,
)
from services.games.playout import seeds_for
from services.games.registry import all_games
from tabletop.v1 import games_pb2

MATCHES_PER_GAME = 12
MAX_COMMANDS = 400


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, str):
        yield data
    elif isinstance(data, dict):
        for key, value in data.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(data, list | tuple):
        for item in data:
            yield from _strings(item)


class SwappingChance(SeededChance):
    """SeededChance whose piles, once shuffled, have two distinct cards swapped (the twin)."""

    def __init__(self, match_id: str, dice: bytes, decks: bytes, rng: random.Random) -> None:
        super().__init__(match_id, dice, decks)
        self.rng = rng
        self.swapped: set[str] = set()

    def resolve(self, request: Any) -> Any:
        outcome = super().resolve(request)
        if isinstance(request, ShuffleDeck) and isinstance(outcome, DeckShuffled):
            pile = self.decks.piles[request.deck]
            distinct = sorted(set(pile))
            if len(distinct) >= 2:
                a, b = self.rng.sample(distinct, 2)
                i, j = pile.index(a), pile.index(b)
                pile[i], pile[j] = b, a
                self.swapped |= {a, b}
        return outcome


@dataclass
class Run:
    """One match: the views of every viewer after every command."""

    views: list[dict[str, Any]] = field(default_factory=list)
    seen: list[dict[str, set[str]]] = field(default_factory=list)


def _viewers(players: tuple[str, ...]) -> list[str | None]:
    return [*players, None]


def _snapshot(game: Game[Any], state: Any, players: tuple[str, ...], run: Run) -> None:
    views: dict[str, Any] = {}
    seen: dict[str, set[str]] = {}
    for viewer in _viewers(players):
        view = game.view(state, viewer)
        key = viewer or ""
        views[key] = view
        seen[key] = set(_strings(to_data(view)))
    run.views.append(views)
    run.seen.append(seen)


def _play(
    game: Game[Any],
    players: tuple[str, ...],
    chance: SeededChance,
    actions: list[tuple[str, Any]] | None,
    rng: random.Random,
) -> tuple[Run, list[tuple[str, Any]]]:
    """Play (choosing at random) or replay ``actions``; snapshot views after each command."""
    run, played = Run(), []
    state = game.fold(game.setup(players, {}))
    commands = 0
    while commands <= MAX_COMMANDS:
        step = game.next_step(state)
        if isinstance(step, AwaitingChance):
            state = game.fold(game.resolve(state, chance.resolve(step.request)), state)
            continue
        _snapshot(game, state, players, run)  # a command (and its chance) is complete
        if isinstance(step, Finished):
            break
        assert isinstance(step, AwaitingPlayers)
        if actions is None:
            player = step.players[0]
            legal = game.legal_actions(state, player)
            action = concrete(legal[rng.randrange(len(legal))], rng)
        elif commands < len(actions):
            player, action = actions[commands]
            if player not in step.players:
                break  # the twin's public course diverged: nothing left to compare
        else:
            break
        try:
            state = game.fold(game.decide(state, player, action), state)
        except RuleViolation:
            break  # the action was legal only with the original cards
        played.append((player, action))
        commands += 1
    return run, played


def first_leak(game: Game[Any], matches: int = MATCHES_PER_GAME) -> tuple[str | None, int]:
    """The first view that changed with cards its viewer was never shown (None: no leak),
    and how many (viewer, command) views were compared."""
    compared = 0
    for seed in range(matches):
        count = max(game.min_players, min(game.max_players, 2 + seed % 3))
        players = tuple(f"seat{i + 1}" for i in range(count))
        dice, decks = seeds_for(seed)
        original, actions = _play(
            game, players, SeededChance(f"m{seed}", dice, decks), None, random.Random(seed)
        )
        twin_chance = SwappingChance(f"m{seed}", dice, decks, random.Random(-seed - 1))
        twin, _ = _play(game, players, twin_chance, actions, random.Random(seed))
        for viewer in ["", *players]:
            for step, (a, b) in enumerate(zip(original.views, twin.views, strict=False)):
                shown = (original.seen[step][viewer] | twin.seen[step][viewer]) & (
                    twin_chance.swapped
                )
                if shown:
                    break  # this viewer has seen a swapped card: its views may differ now
                if to_data(a[viewer]) != to_data(b[viewer]):
                    return (
                        f"{game.name} seed {seed}: after command {step} the view of "
                        f"{viewer or 'the spectator'} changed with cards it was never shown"
                    ), compared
                compared += 1
    return None, compared


@pytest.mark.parametrize("name", sorted(all_games()))
def test_no_view_depends_on_a_card_its_viewer_was_not_shown(name: str) -> None:
    leak, compared = first_leak(all_games()[name])
    assert leak is None, leak
    assert compared > 50


@dataclass(frozen=True)
class HintedView:
    inner: Any
    hint: int


class LeakyGame:
    """A game whose views carry a hint of the whole state (hidden cards included)."""

    def __init__(self, game: Game[Any]) -> None:
        self._game = game

    def __getattr__(self, name: str) -> Any:
        return getattr(self._game, name)

    def view(self, state: Any, viewer: str | None) -> HintedView:
        return HintedView(self._game.view(state, viewer), hash(repr(state)) % 7)


@pytest.mark.parametrize("name", sorted(all_games()))
def test_the_leak_test_catches_a_view_that_hints_at_hidden_cards(name: str) -> None:
    leak, _ = first_leak(LeakyGame(all_games()[name]), matches=4)  # type: ignore[arg-type]
    assert leak is not None


@pytest.mark.parametrize("name", sorted(all_games()))
def test_no_view_contains_a_seed(name: str) -> None:
    game = all_games()[name]
    for seed in range(MATCHES_PER_GAME):
        players = tuple(f"seat{i + 1}" for i in range(max(game.min_players, 1)))
        dice, decks = seeds_for(seed)
        run, _ = _play(
            game, players, SeededChance(f"m{seed}", dice, decks), None, random.Random(seed)
        )
        secrets = [dice, decks, dice.hex().encode(), decks.hex().encode()]
        for views in run.views:
            for view in views.values():
                wire = fill_game_view(games_pb2.GameView(), name, view).SerializeToString()
                assert not any(s in wire for s in secrets)


def test_the_twin_really_swaps_cards() -> None:
    """The leak test can fail: a view showing a face-down pile differs between the twins."""
    chance = SwappingChance("m", *seeds_for(1), random.Random(0))
    plain = SeededChance("m", *seeds_for(1))
    cards = tuple(f"c{i}" for i in range(8))
    chance.resolve(ShuffleDeck("d", cards, "test"))
    plain.resolve(ShuffleDeck("d", cards, "test"))
    assert chance.decks.piles["d"] != plain.decks.piles["d"]
    assert sorted(chance.decks.piles["d"]) == sorted(plain.decks.piles["d"])
    assert len(chance.swapped) == 2
