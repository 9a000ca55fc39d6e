"""Cheaper construction of frozen dataclasses (events, actions, chance steps, replies).

A frozen dataclass's generated ``__init__`` stores each field through
``object.__setattr__`` (its own ``__setattr__`` refuses): one call per field, and a
playout builds thousands of events, actions and steps. ``quick_init`` gives such a class an
``__init__`` that stores the instance dict whole instead: the same parameters, defaults
and default factories, the same fields and values, and the instance as frozen as before
(``__setattr__`` and ``__delattr__`` still refuse). It is about twice as fast.

Only a plain field-storing ``__init__`` is replaced: a class with ``__post_init__``,
``init=False`` or keyword-only fields, ``InitVar``s, slots or an ``__init__`` of its own is
refused. The replacement is compiled from text, as the dataclass's own is (file name
``<string>``), so ``codec`` still recognises it as an ``__init__`` that only stores fields.
``reference_init`` keeps the dataclass's own, which tests compare it with.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

T = TypeVar("T", bound=type)

#: class -> the ``__init__`` its ``@dataclass`` wrote
_REFERENCE: dict[type, Callable[..., None]] = {}


class _Missing:
    """The default of a parameter whose field has a default factory."""

    def __repr__(self) -> str:
        return "<factory default>"


_MISSING = _Missing()


def reference_init(cls: type) -> Callable[..., None]:
    """The ``__init__`` ``@dataclass`` wrote for ``cls`` (before ``quick_init``)."""
    return _REFERENCE[cls]


def quick_inits() -> tuple[type, ...]:
    """Every class given a quick ``__init__`` so far."""
    return tuple(_REFERENCE)


def quick_init(cls: T) -> T:
    """Give the frozen dataclass ``cls`` an ``__init__`` storing its instance dict at once."""
    if cls in _REFERENCE:
        return cls
    params = getattr(cls, "__dataclass_params__", None)
    if params is None or not params.frozen or not params.init:
        raise TypeError(f"{cls.__name__} is not a frozen dataclass with an __init__")
    if "__slots__" in cls.__dict__ or hasattr(cls, "__post_init__"):
        raise TypeError(f"{cls.__name__}'s __init__ does more than store its fields")
    init = cls.__dict__.get("__init__")
    code = getattr(init, "__code__", None)
    if init is None or code is None or code.co_filename != "<string>":
        raise TypeError(f"{cls.__name__} has an __init__ of its own")
    fields = dataclasses.fields(cls)
    parameters = list(inspect.signature(init).parameters.values())[1:]
    if [p.name for p in parameters] != [f.name for f in fields] or any(
        not f.init or f.kw_only or p.kind is not p.POSITIONAL_OR_KEYWORD
        for f, p in zip(fields, parameters, strict=True)
    ):
        raise TypeError(f"{cls.__name__}'s __init__ does more than store its fields")
    namespace: dict[str, Any] = {"_qi_set": object.__setattr__, "_qi_missing": _MISSING}
    arguments: list[str] = []
    items: list[str] = []
    for f in fields:
        name = f.name
        if f.default is not dataclasses.MISSING:
            namespace[f"_qi_default_{name}"] = f.default
            arguments.append(f"{name}=_qi_default_{name}")
            items.append(f"{name!r}: {name}")
        elif f.default_factory is not dataclasses.MISSING:
            namespace[f"_qi_factory_{name}"] = f.default_factory
            arguments.append(f"{name}=_qi_missing")
            items.append(f"{name!r}: _qi_factory_{name}() if {name} is _qi_missing else {name}")
        else:
            arguments.append(name)
            items.append(f"{name!r}: {name}")
    if not fields:
        return cls  # the dataclass's own __init__ does nothing already
    source = (
        f"def __init__(self, {', '.join(arguments)}):\n"
        f"    _qi_set(self, '__dict__', {{{', '.join(items)}}})\n"
    )
    exec(compile(source, "<string>", "exec"), namespace)
    quick = namespace["__init__"]
    quick.__qualname__ = f"{cls.__qualname__}.__init__"
    quick.__module__ = cls.__module__
    quick.__doc__ = init.__doc__
    _REFERENCE[cls] = init
    type.__setattr__(cls, "__init__", quick)
    return cls


def quick_init_all(classes: Iterable[type]) -> None:
    """``quick_init`` each of ``classes``."""
    for cls in classes:
        quick_init(cls)


def reused(cls: T) -> T:
    """Mark ``cls`` as one whose instances the code making them reuses, one per content
    (a view's map cells and card faces): adapters may then cache what they derive from an
    instance by its identity. A hint only: an instance made afresh is merely not found."""
    type.__setattr__(cls, "__reused__", True)
    return cls


def is_reused(cls: type) -> bool:
    return bool(cls.__dict__.get("__reused__", False))
