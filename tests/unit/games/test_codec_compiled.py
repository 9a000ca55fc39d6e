"""The compiled codec (``to_data`` / ``from_data``: one generated function per dataclass
and per type hint) gives exactly the data, JSON bytes and values of the generic walk it
replaced, kept here as the reference, over every state, event and view (each seat and a
spectator) met in seeded playouts of every game, and on shapes the games do not meet."""

from __future__ import annotations

import dataclasses
import enum
import functools
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Union

import pytest

from services.games import codec
from services.games.playout import play, random_policy
from services.games.registry import all_games

SEEDS = (1, 2)


# -- the reference: the generic walk codec.py used before ---------------------------------
_TAG = "$type"

#: values that are their own data (exact types: a str-valued Enum is not one of them)
_PLAIN = frozenset({int, float, str, bool, type(None)})

Encoder = Callable[[Any], Any]


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def reference_to_data(value: Any) -> Any:
    """Encode a value into JSON-compatible data (lists, dicts, scalars)."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    encode = _ENCODERS.get(kind)
    if encode is None:
        encode = _ENCODERS[kind] = _encoder(kind)
    return encode(value)


_ENCODERS: dict[type, Encoder] = {}


def _item(value: Any) -> Any:
    return value if type(value) in _PLAIN else reference_to_data(value)


def _encoder(kind: type) -> Encoder:
    if issubclass(kind, enum.Enum):
        return lambda value: value.value
    if issubclass(kind, bool | int | float | str):
        return lambda value: value
    if dataclasses.is_dataclass(kind):
        tag = kind.__name__
        names = tuple(f.name for f in dataclasses.fields(kind))

        def encode_dataclass(value: Any) -> dict[str, Any]:
            out: dict[str, Any] = {_TAG: tag}
            for name in names:
                field = getattr(value, name)
                out[name] = field if type(field) in _PLAIN else reference_to_data(field)
            return out

        return encode_dataclass
    if issubclass(kind, tuple | list):
        return lambda value: [_item(v) for v in value]
    if issubclass(kind, frozenset | set):
        return lambda value: sorted((_item(v) for v in value), key=repr)
    if issubclass(kind, dict):
        return lambda value: sorted(
            ([_item(k), _item(v)] for k, v in value.items()), key=lambda pair: repr(pair[0])
        )

    def refuse(value: Any) -> Any:
        raise TypeError(f"cannot encode {type(value).__name__}")

    return refuse


def reference_from_data(tp: Any, data: Any) -> Any:
    """Decode ``data`` produced by ``to_data`` back into a value of type ``tp``."""
    return _decoder(tp)(data)


Decoder = Callable[[Any], Any]


def _same(data: Any) -> Any:
    return data


def _refuse(tp: Any) -> Decoder:
    def refuse(data: Any) -> Any:
        raise TypeError(f"cannot decode {tp!r}")

    return refuse


@functools.cache
def _decoder(tp: Any) -> Decoder:
    origin = typing.get_origin(tp)
    if tp is Any or tp in (int, str, bool):
        return _same
    if origin in (Union, types.UnionType):
        return _union_decoder(typing.get_args(tp))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _dataclass_decoder(tp)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp
    if tp is float:
        return float
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            item = _decoder(args[0])
            if item is _same:
                return tuple
            return lambda data: tuple([item(v) for v in data])
        items = tuple(_decoder(a) for a in args)
        return lambda data: tuple([d(v) for d, v in zip(items, data, strict=True)])
    if origin is frozenset:
        (arg,) = typing.get_args(tp)
        item = _decoder(arg)
        return frozenset if item is _same else lambda data: frozenset([item(v) for v in data])
    if origin is dict:
        key, value = (_decoder(a) for a in typing.get_args(tp))
        return lambda data: {key(k): value(v) for k, v in data}
    if tp is type(None):
        return lambda data: None
    return _refuse(tp)


def _dataclass_decoder(cls: type) -> Decoder:
    # Field decoders are looked up on first use, so a dataclass may refer to itself.
    plan: list[tuple[str, Decoder | None]] = []

    def decode(data: Any) -> Any:
        if not plan:
            hints = _hints(cls)
            for f in dataclasses.fields(cls):
                field_decoder = _decoder(hints[f.name])
                plan.append((f.name, None if field_decoder is _same else field_decoder))
        kwargs = {
            name: data[name] if field_decoder is None else field_decoder(data[name])
            for name, field_decoder in plan
            if name in data
        }
        return cls(**kwargs)

    return decode


def _union_decoder(args: tuple[Any, ...]) -> Decoder:
    may_be_none = type(None) in args
    members = [a for a in args if a is not type(None)]
    tagged = {m.__name__: m for m in members if isinstance(m, type)}
    single = _decoder(members[0]) if len(members) == 1 else None
    untagged = [m for m in members if isinstance(m, type) and not dataclasses.is_dataclass(m)]

    def decode(data: Any) -> Any:
        if data is None and may_be_none:
            return None
        if isinstance(data, dict) and _TAG in data:
            member = tagged.get(data[_TAG])
            if member is None:
                raise TypeError(f"{data[_TAG]} is none of {members}")
            return _decoder(member)(data)
        if single is not None:
            return single(data)
        for member in untagged:
            try:
                return _decoder(member)(data)
            except (TypeError, ValueError):
                continue
        raise TypeError(f"cannot decode {data!r} as any of {members}")

    return decode


# -- what the playouts meet ---------------------------------------------------------------
def met_in_playouts(name: str) -> list[Any]:
    """States after every event, the events, and every viewer's view of each state."""
    game = all_games()[name]
    players = [f"p{i}" for i in range(game.min_players)]
    met: list[Any] = []
    for seed in SEEDS:
        policies = {p: random_policy(seed * 10 + i) for i, p in enumerate(players)}
        playout = play(game, players, {}, policies, seed=seed)
        state = game.initial_state()
        met.append(state)
        for event in playout.events:
            state = game.evolve(state, event)
            met += [state, event, *(game.view(state, v) for v in (*players, None))]
    return met


def _json(data: Any) -> str:
    return json.dumps(data, separators=(",", ":"))


def _same_value(new: Any, old: Any) -> None:
    """Equal, and of the same types all the way down (== takes 1 for True, a str-Enum
    member for its value)."""
    assert new == old
    assert type(new) is type(old)
    if isinstance(old, dict):
        for key in old:
            _same_value(new[key], old[key])
    elif isinstance(old, (list, tuple, frozenset)) and not isinstance(old, str):
        for a, b in zip(sorted(new, key=repr), sorted(old, key=repr), strict=True):
            _same_value(a, b)
    elif dataclasses.is_dataclass(old):
        for f in dataclasses.fields(old):
            _same_value(getattr(new, f.name), getattr(old, f.name))


@pytest.mark.parametrize("name", sorted(all_games()))
def test_every_value_met_in_playouts_encodes_and_decodes_as_the_generic_walk(name: str) -> None:
    met = met_in_playouts(name)
    assert len(met) > 100
    for value in met:
        data = codec.to_data(value)
        reference = reference_to_data(value)
        _same_value(data, reference)
        assert _json(data) == _json(reference)
        decoded = codec.from_data(type(value), json.loads(_json(data)))
        _same_value(decoded, reference_from_data(type(value), json.loads(_json(reference))))
        _same_value(decoded, value)


@pytest.mark.parametrize("name", sorted(all_games()))
def test_a_state_decoded_after_the_one_before_is_its_plain_decoding_sharing_what_is_equal(
    name: str,
) -> None:
    """``from_data_reusing`` gives what ``from_data`` gives, types and all; a field whose
    data did not change is the state before's own object, one that changed is not."""
    game = all_games()[name]
    players = [f"p{i}" for i in range(game.min_players)]
    playout = play(game, players, {}, {p: random_policy(i) for i, p in enumerate(players)}, seed=3)
    state = game.initial_state()
    before_data = json.loads(_json(codec.to_data(state)))
    before = codec.from_data(type(state), before_data)
    shared = changed = 0
    for event in playout.events:
        state = game.evolve(state, event)
        data = json.loads(_json(codec.to_data(state)))
        decoded = codec.from_data_reusing(type(state), data, before_data, before)
        _same_value(decoded, codec.from_data(type(state), data))
        for f in dataclasses.fields(state):
            ours, theirs = getattr(decoded, f.name), getattr(before, f.name)
            if isinstance(ours, (int, str, float, bool, enum.Enum, type(None))):
                continue  # scalars are their data: nothing to share
            if data[f.name] == before_data[f.name]:
                assert ours is theirs, f.name
                shared += 1
            else:
                assert ours is not theirs, f.name
                changed += 1
        before_data, before = data, decoded
    assert shared and changed


@dataclass(frozen=True)
class Bag:
    leaves: tuple[Leaf, ...] = ()


@dataclass(frozen=True)
class OtherBag:
    leaves: tuple[Leaf, ...] = ()


def test_nothing_is_shared_with_another_kind_of_value_or_with_data_missing_the_field() -> None:
    data = {"leaves": [{"x": 1, "ratio": 0.25}]}
    other = OtherBag((Leaf(1, 0.25),))
    decoded = codec.from_data_reusing(Bag, data, data, other)
    _same_value(decoded, Bag((Leaf(1, 0.25),)))
    assert decoded.leaves is not other.leaves
    bag = Bag((Leaf(1, 0.25),))
    decoded = codec.from_data_reusing(Bag, data, {}, bag)  # written before the field
    _same_value(decoded, bag)
    assert decoded.leaves is not bag.leaves


# -- shapes the games may not meet ----------------------------------------------------------
class Colour(enum.StrEnum):
    RED = "red"
    BLUE = "blue"


@dataclass(frozen=True)
class Leaf:
    x: int
    ratio: float = 0.5


@dataclass(frozen=True)
class Marked(Leaf):
    """A subclass of a dataclass held where its base is hinted."""

    mark: str = "m"


@dataclass(frozen=True)
class Checked:
    n: int

    def __post_init__(self) -> None:
        if self.n < 0:
            raise ValueError("negative")


@dataclass(frozen=True)
class Tree:
    name: str
    colour: Colour
    children: tuple[Tree, ...]
    point: tuple[int, int]
    where: dict[tuple[int, int], Colour]
    tags: frozenset[str]
    leaf: Leaf | None
    either: Leaf | Checked | None = None
    labels: dict[str, tuple[Colour, ...]] = field(default_factory=dict)
    anything: Any = None
    maybe_colour: Colour | None = None
    single: tuple[int] = (0,)


def _tree(subclass: bool = False) -> Tree:
    """With ``subclass``, a leaf is a ``Marked``: it encodes (tagged with its own name),
    but neither walk decodes it as a ``Leaf``."""
    inner = Marked(3, 1.0, "z") if subclass else Leaf(3, 1.0)
    leaf = Tree("leaf", Colour.BLUE, (), (1, 2), {}, frozenset(), inner)
    return Tree(
        # a str field holding a str-Enum member, a float field holding an int
        Colour.RED,
        Colour.RED,
        (leaf, leaf),
        (3, 4),
        {(0, 1): Colour.RED, (2, 3): Colour.BLUE},
        frozenset({"b", "a", "it's"}),
        Leaf(1, 2),
        Checked(7),
        {"k": (Colour.BLUE, Colour.RED)},
        {"free": [1, 2]},
        Colour.BLUE,
        (9,),
    )


def test_shapes_the_games_do_not_meet_encode_and_decode_as_the_generic_walk() -> None:
    marked = _tree(subclass=True)
    _same_value(codec.to_data(marked), reference_to_data(marked))
    assert _json(codec.to_data(marked)) == _json(reference_to_data(marked))
    tree = _tree()
    data = codec.to_data(tree)
    _same_value(data, reference_to_data(tree))
    back = codec.from_data(Tree, json.loads(_json(data)))
    _same_value(back, reference_from_data(Tree, json.loads(_json(data))))


def test_data_missing_a_field_decode_with_its_default_as_before() -> None:
    data = json.loads(_json(codec.to_data(_tree())))
    del data["labels"], data["single"]
    _same_value(codec.from_data(Tree, data), reference_from_data(Tree, data))
    assert codec.from_data(Tree, data).labels == {}


def test_a_dataclass_with_post_init_is_still_checked_when_decoded() -> None:
    with pytest.raises(ValueError, match="negative"):
        codec.from_data(Checked, {"$type": "Checked", "n": -1})


def test_a_fixed_tuple_of_the_wrong_length_is_refused_when_decoded() -> None:
    with pytest.raises(ValueError):
        codec.from_data(tuple[int, int], [1, 2, 3])
