"""The game protos are generated from the dataclasses (services/adapters/protogen.py): the
checked-in files are what the generator writes, the naming rule has one form, unsupported
field types are refused by name, and game numbers are stable."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from services.adapters import protogen
from services.games.contract import ChanceOutcome, Game, Step
from services.games.crashland.events import AstronautMoved
from services.games.crashland.view import CrashlandView
from services.games.registry import all_games


def test_checked_in_protos_are_what_the_generator_writes() -> None:
    numbers = protogen.read_numbers(protogen.PROTO_DIR)
    assert protogen.with_new_games(numbers, all_games()) == numbers, "run make protos"
    for name, text in protogen.generate(all_games(), numbers).items():
        assert (protogen.PROTO_DIR / name).read_text() == text, f"{name}: run make protos"


def test_message_names_get_the_prefix_once() -> None:
    assert protogen.message_name("Crashland", CrashlandView) == "CrashlandView"
    assert protogen.message_name("Crashland", AstronautMoved) == "CrashlandAstronautMoved"


class Colour(enum.Enum):
    RED = "red"


class Level(enum.Enum):
    LOW = 1


@dataclasses.dataclass(frozen=True)
class Part:
    """A part.

    Two lines."""

    size: int


@dataclasses.dataclass(frozen=True)
class Poke:
    colour: Colour
    part: Part | None
    parts: tuple[Part, ...]
    pair: tuple[int, int]
    note: str | None
    tally: dict[str, Part]


@dataclasses.dataclass(frozen=True)
class Poked:
    force: float


@dataclasses.dataclass(frozen=True)
class BadKey:
    counts: dict[int, str]


@dataclasses.dataclass(frozen=True)
class BadEnum:
    level: Level


@dataclasses.dataclass(frozen=True)
class BadTuple:
    mixed: tuple[int, str]


def toy(
    actions: tuple[type, ...], name: str = "toy_box", renamed: Mapping[str, type] | None = None
) -> Game[None]:
    class Toy(Game[None]):
        title = "Toy"
        rules_version = "1"
        min_players = max_players = 1
        action_types = actions
        event_types = (Poked,)
        view_type = Part
        renamed_events = renamed or {}

        def initial_state(self) -> None:
            return None

        def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
            return []

        def evolve(self, state: None, event: Any) -> None:
            return None

        def next_step(self, state: None) -> Step:
            raise NotImplementedError

        def decide(self, state: None, player: str, action: Any) -> list[Any]:
            return []

        def resolve(self, state: None, outcome: ChanceOutcome) -> list[Any]:
            return []

        def legal_actions(self, state: None, player: str) -> tuple[Any, ...]:
            return ()

        def view(self, state: None, viewer: str | None) -> Any:
            return Part(0)

    Toy.name = name
    return Toy()


def test_every_allowed_shape_has_its_proto_field() -> None:
    text = protogen.game_proto(toy((Poke,)))
    assert "message ToyBoxPoke {" in text
    for line in (
        "string colour = 1;",
        "ToyBoxPart part = 2;",
        "repeated ToyBoxPart parts = 3;",
        "repeated int32 pair = 4;",
        "optional string note = 5;",
        "map<string, ToyBoxPart> tally = 6;",
        "double force = 1;",
        "ToyBoxPoke poke = 1;",
    ):
        assert f"  {line}\n" in text, line
    assert "// A part.\n//\n// Two lines.\nmessage ToyBoxPart {" in text
    assert "message ToyBoxPoked {" in text and "// Poked(" not in text


@pytest.mark.parametrize(
    ("action", "complaint"),
    [
        (BadKey, "BadKey.counts: map keys must be str"),
        (BadEnum, "BadEnum.level: Level must be a str-valued Enum"),
        (BadTuple, "BadTuple.mixed: tuples must hold one type"),
    ],
)
def test_unsupported_field_types_are_refused_by_field(action: type, complaint: str) -> None:
    with pytest.raises(protogen.UnsupportedType, match=complaint):
        protogen.game_proto(toy((action,)))


def test_a_renamed_event_keeps_its_former_message_with_the_same_fields() -> None:
    text = protogen.game_proto(toy((Poke,), renamed={"Prodded": Poked}))
    current = text.index("message ToyBoxPoked {")
    former = text.index(
        "// The name older logs give ToyBoxPoked: read as it.\nmessage ToyBoxProdded {\n"
        "  double force = 1;\n}\n"
    )
    assert current < former


@pytest.mark.parametrize(
    ("renamed", "complaint"),
    [
        ({"Poke": Poked}, "ToyBoxPoke, an event's former name, is the message of Poke too"),
        ({"Prodded": Part}, "ToyBoxProdded is kept for Part, not an event"),
    ],
)
def test_a_former_name_must_be_free_and_kept_for_an_event(
    renamed: dict[str, type], complaint: str
) -> None:
    with pytest.raises(protogen.UnsupportedType, match=complaint):
        protogen.game_proto(toy((Poke,), renamed=renamed))


def test_a_new_game_gets_the_next_number_and_a_gone_one_stays_reserved() -> None:
    games = {"toy_box": toy((Poke,))}
    numbers = protogen.with_new_games({"crashland": 1, "drillit": 2}, games)
    assert numbers == {"crashland": 1, "drillit": 2, "toy_box": 3}
    text = protogen.games_proto(games, numbers)
    assert "  reserved 1, 2;\n" in text
    assert "    ToyBoxAction toy_box = 3;\n" in text
    assert "    ToyBoxPart toy_box = 3;\n" in text
