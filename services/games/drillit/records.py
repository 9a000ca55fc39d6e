"""Building the rules' frozen records (events, actions, Path pieces laid) in compiled code.

A frozen dataclass given a quick ``__init__`` by ``services.games.frozen.quick_init`` is
built by storing its fields, in order, as its instance dict. Called from compiled code, the
class runs that ``__init__``, a Python function (a frame per record); ``made`` stores the
dict itself, in two calls of C functions: the same instance, for the few records the rules
build at nearly every decision."""

from __future__ import annotations

from typing import Any, Final

_new: Final = object.__new__
_set: Final = object.__setattr__


def made(cls: type, fields: dict[str, Any]) -> Any:
    """An instance of ``cls``, a frozen dataclass with a quick ``__init__``, whose instance
    dict is ``fields``: every field of the class, in the order of its fields, as that
    ``__init__`` stores them (a record missing one would not even print: the seeded
    playouts' digest, which prints every event, would tell)."""
    record: Any = _new(cls)
    _set(record, "__dict__", fields)
    return record
