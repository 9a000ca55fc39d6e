"""protos/tabletop/v1/drillit.proto follows docs/CONVENTIONS.md: one message per
dataclass reachable from the actions, events and view, with the same field names, and
DrillitAction wrapping every action in a oneof."""

from __future__ import annotations

import dataclasses
import re
import subprocess
import sys
import typing
from pathlib import Path

from services.games.drillit import GAME
from services.games.drillit.view import DrillitView

ROOT = Path(__file__).resolve().parents[4]
PROTO = ROOT / "protos" / "tabletop" / "v1" / "drillit.proto"


def messages() -> dict[str, list[str]]:
    text = PROTO.read_text()
    out = {}
    for name, body in re.findall(r"message (\w+) \{(.*?)\n?\}", text, flags=re.S):
        out[name] = re.findall(r"(\w+) = \d+;", body)
    return out


def reachable() -> set[type]:
    found: set[type] = set()

    def visit(tp: object) -> None:
        if isinstance(tp, type) and dataclasses.is_dataclass(tp):
            if tp in found:
                return
            found.add(tp)
            for hint in typing.get_type_hints(tp).values():
                visit(hint)
        for arg in typing.get_args(tp):
            visit(arg)

    for cls in (*GAME.action_types, *GAME.event_types, DrillitView):
        visit(cls)
    return found


def message_name(cls: type) -> str:
    return cls.__name__ if cls.__name__.startswith("Drillit") else f"Drillit{cls.__name__}"


def test_proto_has_a_message_per_dataclass_with_identical_fields() -> None:
    protos = messages()
    for cls in reachable():
        name = message_name(cls)
        assert name in protos, name
        assert protos[name] == [f.name for f in dataclasses.fields(cls)], name


def test_proto_action_oneof_names_every_action_in_snake_case() -> None:
    text = PROTO.read_text()
    body = text[text.index("message DrillitAction {") :]
    body = body[: body.index("\n}")]
    for cls in GAME.action_types:
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()
        assert f"{message_name(cls)} {snake} = " in body


def test_proto_compiles(tmp_path: Path) -> None:
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "grpc_tools.protoc",
            "-I",
            str(ROOT / "protos"),
            f"--python_out={tmp_path}",
            str(PROTO),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
