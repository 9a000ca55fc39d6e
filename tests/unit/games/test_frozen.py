"""quick_init: the same frozen dataclass, made without its generated __init__."""

from __future__ import annotations

import dataclasses

import pytest

from services.games.frozen import quick_init


@dataclasses.dataclass(frozen=True)
class Plain:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()


@quick_init
@dataclasses.dataclass(frozen=True)
class Quick:
    a: int
    b: str = "x"
    c: tuple[int, ...] = ()


def test_the_same_object_as_the_generated_init_makes() -> None:
    for args, kwargs in (
        ((1,), {}),
        ((1, "y"), {}),
        ((), {"a": 2, "c": (3,)}),
        ((4, "z", (5,)), {}),
    ):
        quick, plain = Quick(*args, **kwargs), Plain(*args, **kwargs)  # type: ignore[arg-type]
        assert dataclasses.asdict(quick) == dataclasses.asdict(plain)
        assert repr(quick).replace("Quick", "Plain") == repr(plain)
        assert quick == Quick(*args, **kwargs)  # type: ignore[arg-type]
        assert hash(quick) == hash(Quick(*args, **kwargs))  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        Quick(1).a = 2  # type: ignore[misc]
    with pytest.raises(TypeError):
        Quick()  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        Quick(1, d=2)  # type: ignore[call-arg]


def test_classes_it_cannot_stand_in_for_are_refused() -> None:
    @dataclasses.dataclass(frozen=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a

    @dataclasses.dataclass(frozen=True)
    class Factory:
        a: list[int] = dataclasses.field(default_factory=list)

    @dataclasses.dataclass
    class Mutable:
        a: int

    for cls in (Checked, Factory, Mutable):
        with pytest.raises(TypeError):
            quick_init(cls)
