"""The compiled converters (``protoconv.fill`` / ``read``, one generated function per
dataclass and message type) give exactly the messages and dataclasses of the generic,
field-by-field walk they replaced, kept here as the reference, over every view (each seat
and a spectator), event and legal action met in seeded playouts of every game."""

from __future__ import annotations

import dataclasses
import enum
import random
import types
import typing
from collections.abc import Iterator
from typing import Any, Union

import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message, message_factory

from services.adapters.protoconv import GameMessages, fill, read
from services.games.contract import ActionTemplate, concrete
from services.games.playout import play, random_policy
from services.games.registry import all_games

SEEDS = (1, 2)


# -- the reference: the generic walk protoconv used before --------------------------------
def _optional_inner(tp: Any) -> Any | None:
    if typing.get_origin(tp) in (Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if len(args) == 1 and len(typing.get_args(tp)) == 2:
            return args[0]
    return None


def _scalar_out(value: Any) -> Any:
    return value.value if isinstance(value, enum.Enum) else value


def reference_fill(msg: Any, obj: Any) -> Any:
    msg.SetInParent()
    for f in dataclasses.fields(obj):
        fd: Any = msg.DESCRIPTOR.fields_by_name[f.name]
        value = getattr(obj, f.name)
        if value is None:
            continue
        is_message = fd.message_type is not None
        if is_message and fd.message_type.GetOptions().map_entry:
            target = getattr(msg, f.name)
            value_fd = fd.message_type.fields_by_name["value"]
            for k, v in value.items():
                if value_fd.message_type is not None:
                    reference_fill(target[k], v)
                else:
                    target[k] = _scalar_out(v)
        elif fd.is_repeated:
            target = getattr(msg, f.name)
            for item in value:
                if is_message:
                    reference_fill(target.add(), item)
                else:
                    target.append(_scalar_out(item))
        elif is_message:
            reference_fill(getattr(msg, f.name), value)
        else:
            setattr(msg, f.name, _scalar_out(value))
    return msg


def reference_read(cls: type, msg: Any) -> Any:
    hints = typing.get_type_hints(cls)
    kwargs: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        fd = msg.DESCRIPTOR.fields_by_name[f.name]
        tp = hints[f.name]
        inner = _optional_inner(tp)
        if inner is not None:
            if fd.has_presence and not msg.HasField(fd.name):
                kwargs[f.name] = None
                continue
            tp = inner
        value = getattr(msg, fd.name)
        origin = typing.get_origin(tp)
        if origin is dict:
            kwargs[f.name] = {k: _convert(typing.get_args(tp)[1], v) for k, v in value.items()}
        elif origin is tuple:
            args = typing.get_args(tp)
            if len(args) == 2 and args[1] is Ellipsis:
                kwargs[f.name] = tuple(_convert(args[0], v) for v in value)
            else:
                kwargs[f.name] = tuple(_convert(a, v) for a, v in zip(args, value, strict=True))
        else:
            kwargs[f.name] = _convert(tp, value)
    return cls(**kwargs)


def _convert(tp: Any, value: Any) -> Any:
    if dataclasses.is_dataclass(tp):
        return reference_read(typing.cast(type, tp), value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    return tp(value)


# -- what the playouts meet ---------------------------------------------------------------
@dataclasses.dataclass
class Met:
    views: list[Any] = dataclasses.field(default_factory=list)
    events: list[Any] = dataclasses.field(default_factory=list)
    actions: list[Any] = dataclasses.field(default_factory=list)


def met_in_playouts(name: str) -> Met:
    game = all_games()[name]
    players = [f"p{i}" for i in range(game.min_players)]
    met = Met()
    rng = random.Random(0)
    for seed in SEEDS:
        policies = {p: random_policy(seed * 10 + i) for i, p in enumerate(players)}
        playout = play(game, players, {}, policies, seed=seed)
        met.events.extend(playout.events)
        state = game.initial_state()
        for index, event in enumerate(playout.events):
            state = game.evolve(state, event)
            met.views.extend(game.view(state, viewer) for viewer in (*players, None))
            if index % 3 == 0:
                for player in players:
                    met.actions.extend(concrete(a, rng) for a in game.legal_actions(state, player))
    return met


@pytest.fixture(scope="module", params=sorted(all_games()))
def game_met(request: pytest.FixtureRequest) -> Iterator[tuple[GameMessages, Met]]:
    name: str = request.param
    yield GameMessages(all_games()[name]), met_in_playouts(name)


def _same(new: message.Message, old: message.Message) -> None:
    assert new == old
    assert new.SerializeToString(deterministic=True) == old.SerializeToString(deterministic=True)


def test_views_convert_to_the_reference_messages_and_back(
    game_met: tuple[GameMessages, Met],
) -> None:
    messages, met = game_met
    assert met.views
    view_type = messages.game.view_type
    for view in met.views:
        msg = messages.view_to_message(view)
        reference = reference_fill(type(msg)(), view)
        _same(msg, reference)
        assert read(view_type, msg) == reference_read(view_type, reference) == view


def test_events_convert_to_the_reference_messages_and_back(
    game_met: tuple[GameMessages, Met],
) -> None:
    messages, met = game_met
    assert met.events
    for event in met.events:
        packed = messages.event_to_any(event)
        msg = messages.to_message(event)
        _same(msg, reference_fill(type(msg)(), event))
        assert messages.event_from_any(packed) == reference_read(type(event), msg) == event


def test_actions_convert_to_the_reference_messages_and_back(
    game_met: tuple[GameMessages, Met],
) -> None:
    messages, met = game_met
    assert met.actions
    for action in met.actions:
        assert not isinstance(action, ActionTemplate)
        wrapper = messages.action_to_message(action)
        inner = getattr(wrapper, wrapper.WhichOneof("action") or "")
        _same(inner, reference_fill(type(inner)(), action))
        assert messages.action_from_message(wrapper) == reference_read(type(action), inner)
        assert messages.action_from_message(wrapper) == action


# -- shapes the games may not meet: a dataclass that reaches itself, presence, fixed tuples --
class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclasses.dataclass(frozen=True)
class Node:
    name: str
    colour: Colour
    weight: int | None
    point: tuple[int, int]
    children: tuple[Node, ...]
    labels: dict[str, Colour]
    best: Node | None = None


def _node_message_class() -> type[message.Message]:
    """``Node``'s message, built in a pool of its own (no generated module needed)."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="protoconv_test.proto", package="t", syntax="proto3"
    )
    node = proto.message_type.add(name="Node")
    entry = node.nested_type.add(name="LabelsEntry")
    entry.options.map_entry = True
    string, int32, msg = (
        descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
        descriptor_pb2.FieldDescriptorProto.TYPE_INT32,
        descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
    )
    one, many = (
        descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
        descriptor_pb2.FieldDescriptorProto.LABEL_REPEATED,
    )
    entry.field.add(name="key", number=1, type=string, label=one)
    entry.field.add(name="value", number=2, type=string, label=one)
    node.oneof_decl.add(name="_weight")
    node.field.add(name="name", number=1, type=string, label=one)
    node.field.add(name="colour", number=2, type=string, label=one)
    node.field.add(
        name="weight", number=3, type=int32, label=one, oneof_index=0, proto3_optional=True
    )
    node.field.add(name="point", number=4, type=int32, label=many)
    node.field.add(name="children", number=5, type=msg, label=many, type_name=".t.Node")
    node.field.add(name="labels", number=6, type=msg, label=many, type_name=".t.Node.LabelsEntry")
    node.field.add(name="best", number=7, type=msg, label=one, type_name=".t.Node")
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return message_factory.GetMessageClass(pool.FindMessageTypeByName("t.Node"))


def test_a_dataclass_that_reaches_itself_converts_like_the_reference() -> None:
    leaf = Node("leaf", Colour.BLUE, 0, (0, 0), (), {})
    tree = Node("root", Colour.RED, None, (1, -2), (leaf, leaf), {"a": Colour.BLUE}, best=leaf)
    node_message = _node_message_class()
    msg: Any = fill(node_message(), tree)
    _same(msg, reference_fill(node_message(), tree))
    assert msg.children[0].HasField("weight") and not msg.HasField("weight")
    assert read(Node, msg) == reference_read(Node, msg) == tree


def test_a_fixed_tuple_of_the_wrong_length_is_refused_as_malformed() -> None:
    node_message = _node_message_class()
    msg: Any = fill(node_message(), Node("n", Colour.RED, None, (1, 2), (), {}))
    msg.point.append(3)
    with pytest.raises(ValueError, match=r"Node\.point holds 2 values, not 3"):
        read(Node, msg)


def test_an_unknown_enum_value_is_refused_as_malformed() -> None:
    node_message = _node_message_class()
    msg: Any = fill(node_message(), Node("n", Colour.RED, None, (1, 2), (), {}))
    msg.colour = "green"
    with pytest.raises(ValueError, match="green"):
        read(Node, msg)


@dataclasses.dataclass(frozen=True)
class CheckedNode:
    """``Node`` with a check of its own: its reader must call its ``__init__``."""

    name: str
    colour: Colour
    weight: int | None
    point: tuple[int, int]
    children: tuple[CheckedNode, ...]
    labels: dict[str, Colour]
    best: CheckedNode | None = None

    def __post_init__(self) -> None:
        if self.name == "bad":
            raise ValueError("a bad name")


def test_a_reader_builds_what_the_constructor_builds_and_runs_post_init() -> None:
    node_message = _node_message_class()
    tree = Node("root", Colour.RED, 3, (1, 2), (Node("a", Colour.BLUE, None, (0, 0), (), {}),), {})
    built = read(Node, fill(node_message(), tree))
    assert built == tree and built.__dict__ == tree.__dict__
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.name = "other"
    msg: Any = fill(node_message(), tree)
    assert read(CheckedNode, msg).children[0].name == "a"
    msg.children[0].name = "bad"
    with pytest.raises(ValueError, match="a bad name"):
        read(CheckedNode, msg)


def test_reused_elements_and_fresh_ones_of_the_same_or_other_content_fill_alike() -> None:
    """Crashland's cells and card faces are reused objects whose encoding is kept by
    identity (``frozen.reused``): a fresh object of the same content gives the same message,
    and one of other content is never taken for a kept one."""
    game = all_games()["crashland"]
    messages = GameMessages(game)
    views = [v for v in met_in_playouts("crashland").views if v.cells and v.discard_pile]
    assert views
    for view in views[:: max(1, len(views) // 20)]:
        kept = messages.view_to_message(view)
        fresh = dataclasses.replace(
            view,
            cells=tuple(dataclasses.replace(c) for c in view.cells),
            discard_pile=tuple(dataclasses.replace(c) for c in view.discard_pile),
        )
        _same(messages.view_to_message(fresh), kept)
        other = dataclasses.replace(
            view,
            cells=tuple(dataclasses.replace(c, astronaut=not c.astronaut) for c in view.cells),
            discard_pile=tuple(dataclasses.replace(c, number=99) for c in view.discard_pile),
        )
        msg = messages.view_to_message(other)
        _same(msg, reference_fill(type(msg)(), other))
        assert msg != kept
        # the very tuples again, after others: their joined encodings are kept by identity
        _same(messages.view_to_message(view), kept)
