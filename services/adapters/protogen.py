"""Writes each game's ``.proto`` from its dataclasses, and ``games.proto`` for all games.

The dataclasses are the one source of truth for a game's messages (docs/CONVENTIONS.md):
every dataclass reachable from ``action_types``, ``event_types`` and ``view_type`` becomes
a message named by ``message_name``, str-valued Enums travel as their values (strings),
class docstrings become comments, and the actions are wrapped in ``<Prefix>Action`` with a
``oneof action``. Field numbers follow declaration order, so reordering, inserting or
removing a dataclass field (anywhere but at the end) renumbers the message and breaks
wire compatibility with stored events and older clients; the diff of the checked-in
``.proto`` shows it at review.

``games.proto``'s ``GameAction`` / ``GameView`` oneofs number the games as
``protos/tabletop/v1/game_numbers.yaml`` records; ``write`` gives a new game the next free
number there, and numbers of games that are gone stay reserved.

    python -m services.adapters.protogen [--out DIR]   (deploy/protos.sh runs it)
"""

from __future__ import annotations

import argparse
import dataclasses
import enum
import functools
import inspect
import re
import sys
import types
import typing
from pathlib import Path
from typing import Any, Union

import yaml

from services.games.contract import Game
from services.games.registry import all_games

PROTO_DIR = Path(__file__).resolve().parents[2] / "protos" / "tabletop" / "v1"
NUMBERS_FILE = "game_numbers.yaml"

_SCALARS: dict[type, str] = {int: "int32", str: "string", bool: "bool", float: "double"}


def camel_case(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


@functools.cache
def snake_case(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def prefix(game: Game[Any]) -> str:
    return camel_case(game.name)


def message_name(game_prefix: str, cls: type) -> str:
    """``<Prefix>`` + the class name without a leading ``<Prefix>``: Moved → CrashlandMoved,
    CrashlandView → CrashlandView."""
    return game_prefix + cls.__name__.removeprefix(game_prefix)


def former_event_messages(game: Game[Any]) -> dict[str, type]:
    """The message name of each of the game's ``renamed_events`` under its old class name
    (named as the class was) → the event class that reads it now."""
    game_prefix = prefix(game)
    return {
        game_prefix + old.removeprefix(game_prefix): cls for old, cls in game.renamed_events.items()
    }


class UnsupportedType(TypeError):
    """A dataclass field whose type docs/CONVENTIONS.md does not allow on the wire."""


def _optional_inner(tp: Any) -> Any | None:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = typing.get_args(tp)
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1 and len(args) == 2:
            return rest[0]
    return None


def _is_dataclass(tp: Any) -> bool:
    return isinstance(tp, type) and dataclasses.is_dataclass(tp)


def _element(tp: Any, where: str) -> Any:
    """The element type of ``tuple[X, ...]`` or of a fixed tuple of one type."""
    args = typing.get_args(tp)
    if len(args) == 2 and args[1] is Ellipsis:
        return args[0]
    if args and all(a == args[0] for a in args):
        return args[0]
    raise UnsupportedType(f"{where}: tuples must hold one type, not {tp!r}")


class _Schema:
    """The messages of one game, in a stable order (first reached first)."""

    def __init__(self, game: Game[Any]) -> None:
        self.game = game
        self.prefix = prefix(game)
        self.order: list[type] = []
        self.names: dict[str, type] = {}
        for root in (*game.action_types, *game.event_types, game.view_type):
            self._reach(root)
        for name, cls in former_event_messages(game).items():
            if cls not in game.event_types:
                raise UnsupportedType(f"{name} is kept for {cls.__name__}, not an event")
            if name in self.names:
                raise UnsupportedType(
                    f"{name}, an event's former name, is the message of "
                    f"{self.names[name].__name__} too"
                )
        wrapper = f"{self.prefix}Action"
        if wrapper in self.names:
            raise UnsupportedType(
                f"{self.names[wrapper].__name__} would be named {wrapper}, "
                "which is the action wrapper's name; rename the class"
            )

    def _reach(self, cls: type) -> None:
        if cls in self.order:
            return
        if not _is_dataclass(cls):
            raise UnsupportedType(f"{cls!r} in {self.game.name} is not a dataclass")
        name = message_name(self.prefix, cls)
        if name in self.names:
            raise UnsupportedType(
                f"{cls.__module__}.{cls.__name__} and {self.names[name].__module__}."
                f"{self.names[name].__name__} would both be the message {name}"
            )
        self.order.append(cls)
        self.names[name] = cls
        for f in dataclasses.fields(cls):
            self._field_type(typing.get_type_hints(cls)[f.name], f"{cls.__name__}.{f.name}")

    def _value_type(self, tp: Any, where: str) -> str:
        """A scalar or message type (no repetition, no presence)."""
        if _is_dataclass(tp):
            self._reach(tp)
            return message_name(self.prefix, tp)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            if not all(isinstance(m.value, str) for m in tp):
                raise UnsupportedType(f"{where}: {tp.__name__} must be a str-valued Enum")
            return "string"
        if tp in _SCALARS:
            return _SCALARS[tp]
        raise UnsupportedType(f"{where}: {tp!r} is not a wire type (docs/CONVENTIONS.md)")

    def _field_type(self, tp: Any, where: str) -> str:
        """The proto field type (with ``repeated`` / ``optional`` / ``map<…>``)."""
        inner = _optional_inner(tp)
        if inner is not None:
            value = self._value_type(inner, where)
            return value if _is_dataclass(inner) else f"optional {value}"
        origin = typing.get_origin(tp)
        if origin is tuple:
            return f"repeated {self._value_type(_element(tp, where), where)}"
        if origin is dict:
            key, value_tp = typing.get_args(tp)
            if key is not str:
                raise UnsupportedType(f"{where}: map keys must be str, not {key!r}")
            return f"map<string, {self._value_type(value_tp, where)}>"
        return self._value_type(tp, where)

    def message(self, cls: type, name: str = "") -> list[str]:
        """``cls``'s message, under ``name`` when given (an event's former name, whose
        comment says so instead of the class docstring)."""
        hints = typing.get_type_hints(cls)
        current = message_name(self.prefix, cls)
        lines = [f"// The name older logs give {current}: read as it."] if name else _comment(cls)
        name = name or current
        fields = dataclasses.fields(cls)
        if not fields:
            return [*lines, f"message {name} {{}}"]
        lines.append(f"message {name} {{")
        for number, f in enumerate(fields, start=1):
            kind = self._field_type(hints[f.name], f"{cls.__name__}.{f.name}")
            lines.append(f"  {kind} {f.name} = {number};")
        return [*lines, "}"]


def _comment(cls: type) -> list[str]:
    doc = cls.__dict__.get("__doc__") or ""
    if not doc or doc.startswith(f"{cls.__name__}("):  # dataclass's generated signature
        return []
    return [f"// {line}".rstrip() for line in inspect.cleandoc(doc).splitlines()]


def game_proto(game: Game[Any]) -> str:
    schema = _Schema(game)
    actions = list(game.action_types)
    events = [c for c in game.event_types if c not in actions]
    roots = {*actions, *events, game.view_type}
    parts = [c for c in schema.order if c not in roots]
    out = [
        f"// {game.title}: the typed messages of services/games/{game.name}'s actions, events",
        "// and view. GENERATED by services/adapters/protogen.py from the dataclasses: do not",
        "// edit; run `make protos`. Field numbers follow declaration order, so reordering or",
        "// inserting dataclass fields breaks wire compatibility (docs/CONVENTIONS.md).",
        'syntax = "proto3";',
        "",
        "package tabletop.v1;",
    ]

    def section(title: str, classes: list[type], names: list[str] | None = None) -> None:
        out.extend(["", f"// --- {title} " + "-" * (74 - len(title))])
        for cls, name in zip(classes, names or [""] * len(classes), strict=True):
            out.extend(["", *schema.message(cls, name)])

    section("actions", actions)
    out.extend(["", f"message {schema.prefix}Action {{", "  oneof action {"])
    for number, cls in enumerate(actions, start=1):
        out.append(f"    {message_name(schema.prefix, cls)} {snake_case(cls.__name__)} = {number};")
    out.extend(["  }", "}"])
    section("events", events)
    former = former_event_messages(game)
    if former:
        section("events under their former names (older logs)", [*former.values()], [*former])
    section("view", [game.view_type])
    if parts:
        section("parts of actions, events and the view", parts)
    return "\n".join(out) + "\n"


def games_proto(games: dict[str, Game[Any]], numbers: dict[str, int]) -> str:
    present = sorted(games, key=lambda name: numbers[name])
    gone = sorted(n for name, n in numbers.items() if name not in games)
    out = [
        "// Every game's actions and views in one message each. GENERATED by",
        "// services/adapters/protogen.py: do not edit; run `make protos`. The field numbers",
        f"// are recorded in {NUMBERS_FILE}.",
        'syntax = "proto3";',
        "",
        "package tabletop.v1;",
        "",
        *(f'import "tabletop/v1/{name}.proto";' for name in present),
    ]
    wrapped: tuple[tuple[str, str, dict[str, str]], ...] = (
        ("GameAction", "action", {n: f"{prefix(games[n])}Action" for n in present}),
        (
            "GameView",
            "view",
            {n: message_name(prefix(games[n]), games[n].view_type) for n in present},
        ),
    )
    for wrapper, kind, type_of in wrapped:
        out.extend(["", f"// One game's {kind}; the field name is the game's name."])
        out.append(f"message {wrapper} {{")
        if gone:
            out.append(f"  reserved {', '.join(map(str, gone))};")
        out.append("  oneof game {")
        for name in present:
            out.append(f"    {type_of[name]} {name} = {numbers[name]};")
        out.extend(["  }", "}"])
    return "\n".join(out) + "\n"


def read_numbers(directory: Path) -> dict[str, int]:
    path = directory / NUMBERS_FILE
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return {str(k): int(v) for k, v in data.items()}


def numbers_text(numbers: dict[str, int]) -> str:
    lines = [
        "# GameAction / GameView field number of each game (services/adapters/protogen.py).",
        "# `make protos` gives a new game the next free number; never change or reuse one.",
    ]
    lines += [f"{name}: {n}" for name, n in sorted(numbers.items(), key=lambda kv: kv[1])]
    return "\n".join(lines) + "\n"


def with_new_games(numbers: dict[str, int], games: dict[str, Game[Any]]) -> dict[str, int]:
    out = dict(numbers)
    for name in sorted(games):
        if name not in out:
            out[name] = max(out.values(), default=0) + 1
    return out


def generate(games: dict[str, Game[Any]], numbers: dict[str, int]) -> dict[str, str]:
    """File name → text of every generated file."""
    files = {f"{name}.proto": game_proto(game) for name, game in sorted(games.items())}
    files["games.proto"] = games_proto(games, numbers)
    files[NUMBERS_FILE] = numbers_text(numbers)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PROTO_DIR, help="where to write")
    args = parser.parse_args(argv)
    games = all_games()
    recorded = read_numbers(PROTO_DIR)
    numbers = with_new_games(recorded, games)
    files = generate(games, numbers)
    args.out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (args.out / name).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
