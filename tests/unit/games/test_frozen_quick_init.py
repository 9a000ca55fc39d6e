"""``quick_init`` replaces a frozen dataclass's ``__init__`` by one storing the instance dict
at once; this checks it against the ``__init__`` ``@dataclass`` wrote, on every class the
engines gave one (all four games loaded): the same fields from the same arguments,
positional or by keyword, the same defaults and default factories, equal and equally
hashed instances, still frozen."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from services.games.frozen import quick_init, quick_inits, reference_init
from services.games.registry import all_games


def _classes() -> tuple[type, ...]:
    all_games()  # every engine's modules imported, so every class is registered
    return quick_inits()


def _reference(cls: type, *args: Any, **kwargs: Any) -> Any:
    made: Any = object.__new__(cls)
    reference_init(cls)(made, *args, **kwargs)
    return made


def _same_fields(a: Any, b: Any) -> bool:
    """The same field names holding the very same objects (or equal fresh defaults)."""
    return (
        type(a) is type(b)
        and a.__dict__.keys() == b.__dict__.keys()
        and all(
            a.__dict__[k] is b.__dict__[k] or a.__dict__[k] == b.__dict__[k] for k in a.__dict__
        )
    )


def test_the_engines_gave_their_events_actions_and_steps_quick_inits() -> None:
    names = {cls.__qualname__ for cls in _classes()}
    assert {"AstronautMoved", "PathPiecePlaced", "Batch", "AwaitingChance", "Hex"} <= names


@pytest.mark.parametrize("cls", _classes(), ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_a_quick_init_stores_what_the_dataclass_init_stores(cls: type) -> None:
    fields = dataclasses.fields(cls)
    values = [object() for _ in fields]
    positional = cls(*values)
    assert _same_fields(positional, _reference(cls, *values))
    assert all(positional.__dict__[f.name] is v for f, v in zip(fields, values, strict=True))
    by_name = {f.name: v for f, v in zip(fields, values, strict=True)}
    assert _same_fields(cls(**by_name), _reference(cls, **by_name))
    assert cls(*values) == _reference(cls, *values)
    assert hash(cls(*values)) == hash(_reference(cls, *values))
    required = {
        f.name: v
        for f, v in zip(fields, values, strict=True)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    defaulted, reference = cls(**required), _reference(cls, **required)
    assert _same_fields(defaulted, reference)
    for f in fields:
        if f.default_factory is not dataclasses.MISSING:  # a fresh value per instance
            assert defaulted.__dict__[f.name] is not cls(**required).__dict__[f.name]
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(positional, fields[0].name, 1)
    with pytest.raises(TypeError):
        cls(*values, object())  # one argument too many, as before


def test_only_a_plain_frozen_dataclass_init_is_replaced() -> None:
    @dataclasses.dataclass
    class Mutable:
        a: int

    @dataclasses.dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a >= 0

    @dataclasses.dataclass(frozen=True)
    class Hidden:
        a: int
        b: int = dataclasses.field(init=False, default=0)

    @dataclasses.dataclass(frozen=True, kw_only=True)
    class Keywords:
        a: int

    for cls in (Mutable, Checked, Hidden, Keywords):
        with pytest.raises(TypeError):
            quick_init(cls)
