"""The content pack's fixed facts, and the protobuf messages matching the dataclasses."""

from __future__ import annotations

import copy
import dataclasses
import enum
import re
import types
import typing
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml

from services.adapters.protogen import message_name
from services.games.crashland import GAME
from services.games.crashland import content as pack
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Axis, Equipment, MapKind
from services.games.crashland.view import CrashlandView

PROTO = Path(__file__).parents[4] / "protos" / "tabletop" / "v1" / "crashland.proto"


def test_content_is_labelled_house_content() -> None:
    raw = yaml.safe_load((Path(pack.__file__).parent / "content" / "crashland.yaml").read_text())
    assert raw["house_content"] is True and "House content" in raw["note"]


def test_content_keeps_the_rulebook_numbers() -> None:
    assert (CONTENT.rows, CONTENT.columns) == (5, 6)
    assert len(CONTENT.map_ids) == 30 and len(CONTENT.deck_ids) == 21
    assert (CONTENT.start_level, CONTENT.max_level) == (9, 9)
    assert (CONTENT.free_cards, CONTENT.hand_limit, CONTENT.events_per_turn) == (2, 3, 3)
    assert CONTENT.uplink_cards == 6


def test_content_map_one_spaceship_domes_and_three_beacon_pairs() -> None:
    kinds = Counter(c.kind for c in CONTENT.map_cards.values())
    assert kinds[MapKind.SPACESHIP] == 1 and kinds[MapKind.DOME] >= 1
    pairs = Counter((c.number, c.axis) for c in CONTENT.map_cards.values() if c.number)
    assert set(pairs) == {(n, a) for n in (1, 2, 3) for a in Axis}
    assert set(pairs.values()) == {1}


def test_content_equipment_of_the_four_kinds_in_pairs() -> None:
    kinds = Counter(c.kind for c in CONTENT.equipment_cards.values())
    assert set(kinds) == set(Equipment)
    assert all(count % 2 == 0 for count in kinds.values())


def test_content_refuses_a_second_spaceship() -> None:
    raw = yaml.safe_load((Path(pack.__file__).parent / "content" / "crashland.yaml").read_text())
    broken = copy.deepcopy(raw)
    broken["map"][1]["kind"] = "spaceship"
    with pytest.raises(ValueError, match="spaceship"):
        pack.parse(broken)


# --- protobuf ---------------------------------------------------------------------------


def _dataclasses() -> dict[str, type]:
    found: dict[str, type] = {}

    def visit(tp: Any) -> None:
        if typing.get_origin(tp) is not None:
            for arg in typing.get_args(tp):
                visit(arg)
        elif dataclasses.is_dataclass(tp) and isinstance(tp, type) and tp.__name__ not in found:
            found[tp.__name__] = tp
            for hint in typing.get_type_hints(tp).values():
                visit(hint)

    for cls in (*GAME.action_types, *GAME.event_types, CrashlandView):
        visit(cls)
    return found


def _expected(tp: Any) -> tuple[str, str]:
    """(label, type) of the proto field for a Python field type, per docs/CONVENTIONS.md."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
        _, kind = _expected(inner)
        return ("message" if kind.startswith(".") else "optional", kind)
    if origin is tuple:
        return ("repeated", _expected(typing.get_args(tp)[0])[1])
    if origin is dict:
        return ("map", "")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return ("message", f".tabletop.v1.{message_name('Crashland', tp)}")
    scalar = {int: "int32", str: "string", bool: "bool", float: "double"}
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return ("", "string")
    return ("", scalar[tp])


def _descriptors(tmp_path: Path) -> dict[str, Any]:
    protoc = pytest.importorskip("grpc_tools.protoc")
    from google.protobuf import descriptor_pb2

    out = tmp_path / "crashland.pb"
    root = PROTO.parents[2]
    args = ["protoc", f"-I{root}", f"--descriptor_set_out={out}", str(PROTO.relative_to(root))]
    assert protoc.main(args) == 0
    files = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes())
    (file,) = files.file
    assert file.package == "tabletop.v1" and file.syntax == "proto3"
    return {m.name: m for m in file.message_type}


def test_proto_has_a_message_per_dataclass_with_the_same_fields(tmp_path: Path) -> None:
    from google.protobuf.descriptor_pb2 import FieldDescriptorProto as F

    messages = _descriptors(tmp_path)
    names = {v: k.removeprefix("TYPE_").lower() for k, v in F.Type.items()}
    for name, cls in _dataclasses().items():
        message = messages[message_name("Crashland", cls)]
        hints = typing.get_type_hints(cls)
        assert [f.name for f in message.field] == [f.name for f in dataclasses.fields(cls)]
        for field in message.field:
            label, kind = _expected(hints[field.name])
            got_kind = field.type_name or names[field.type]
            if label == "map":
                assert field.label == F.LABEL_REPEATED and field.type_name.endswith("Entry")
                continue
            assert (field.label == F.LABEL_REPEATED) == (label == "repeated"), field.name
            assert field.proto3_optional == (label == "optional"), (name, field.name)
            assert got_kind == kind, (name, field.name)


def test_proto_action_oneof_lists_every_action(tmp_path: Path) -> None:
    action = _descriptors(tmp_path)["CrashlandAction"]
    assert [o.name for o in action.oneof_decl] == ["action"]
    expected = [re.sub(r"(?<!^)(?=[A-Z])", "_", c.__name__).lower() for c in GAME.action_types]
    assert [f.name for f in action.field] == expected
    assert [f.type_name for f in action.field] == [
        f".tabletop.v1.Crashland{c.__name__}" for c in GAME.action_types
    ]


def test_proto_round_trips_a_played_match_through_the_adapters() -> None:
    pytest.importorskip("tabletop.v1.crashland_pb2")
    protoconv = pytest.importorskip("services.adapters.protoconv")
    from services.games.crashland.actions import ArrangeUplink, SpendJetpack
    from services.games.crashland.bots import greedy_policy
    from services.games.crashland.model import Position
    from services.games.playout import play

    messages = protoconv.GameMessages(GAME)
    for seed in range(3):
        match = play(GAME, ["ann"], {}, {"ann": greedy_policy(seed)}, seed)
        for event in match.events:
            assert protoconv.read(type(event), messages.to_message(event)) == event
        for viewer in ("ann", None):
            view = GAME.view(match.state, viewer)
            assert protoconv.read(CrashlandView, messages.view_to_message(view)) == view
    for action in (SpendJetpack(Position(2, 3)), ArrangeUplink(("event-01", "event-02"))):
        assert messages.action_from_message(messages.action_to_message(action)) == action
