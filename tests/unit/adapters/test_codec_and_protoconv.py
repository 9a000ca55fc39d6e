"""Engine dataclasses ↔ JSON data and ↔ protobuf messages."""

from __future__ import annotations

import enum
from dataclasses import dataclass

import pytest

from services.adapters.protoconv import GameMessages
from services.adapters.protogen import camel_case, snake_case
from services.games.codec import from_data, to_data
from services.games.playout import play, random_policy
from services.games.registry import all_games


class Colour(enum.StrEnum):
    RED = "red"


@dataclass(frozen=True)
class Inner:
    x: int


@dataclass(frozen=True)
class Outer:
    name: str
    colour: Colour
    cells: tuple[Inner, ...]
    pair: tuple[int, str]
    where: dict[tuple[int, int], str]
    tags: frozenset[str]
    maybe: Inner | None
    either: Inner | Outer | None = None


def test_codec_round_trips_every_supported_shape() -> None:
    value = Outer(
        "a",
        Colour.RED,
        (Inner(1), Inner(2)),
        (3, "b"),
        {(0, 1): "x"},
        frozenset({"p", "q"}),
        None,
        Inner(5),
    )
    assert from_data(Outer, to_data(value)) == value


def test_equal_values_encode_alike_whatever_order_their_dicts_were_filled_in() -> None:
    def outer(where: dict[tuple[int, int], str], tags: frozenset[str]) -> Outer:
        return Outer("a", Colour.RED, (), (3, "b"), where, tags, None)

    one = outer({(1, 0): "x", (0, 1): "y"}, frozenset({"q", "p"}))
    other = outer({(0, 1): "y", (1, 0): "x"}, frozenset({"p", "q"}))
    assert list(one.where) != list(other.where) and one == other
    assert to_data(one) == to_data(other)  # the compiled encoder of a dataclass
    assert to_data({"b": 1, "a": 2}) == to_data({"a": 2, "b": 1}) == [["a", 2], ["b", 1]]
    assert from_data(Outer, to_data(one)) == one


def test_codec_refuses_what_it_cannot_encode() -> None:
    with pytest.raises(TypeError):
        to_data(object())


def test_names_convert_between_snake_and_camel_case() -> None:
    assert snake_case("SpendDomeShelter") == "spend_dome_shelter"
    assert camel_case("drillit") == "Drillit"


@pytest.mark.parametrize("name", sorted(all_games()))
def test_every_event_and_action_of_a_played_match_round_trips_through_protobuf(name: str) -> None:
    game = all_games()[name]
    messages = GameMessages(game)
    players = [f"p{i}" for i in range(game.min_players)]
    playout = play(game, players, {}, {p: random_policy(i) for i, p in enumerate(players)}, seed=3)
    for event in playout.events:
        assert messages.event_from_any(messages.event_to_any(event)) == event
    state = game.initial_state()
    for event in playout.events[:60]:
        state = game.evolve(state, event)
        for player in players:
            for action in game.legal_actions(state, player):
                assert messages.action_from_message(messages.action_to_message(action)) == action


@pytest.mark.parametrize("name", sorted(all_games()))
def test_every_event_class_has_a_protobuf_message(name: str) -> None:
    messages = GameMessages(all_games()[name])
    for cls in (*messages.game.event_types, *messages.game.action_types):
        assert messages.message_name(cls).startswith("tabletop.v1.")
