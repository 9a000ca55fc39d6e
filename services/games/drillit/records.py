"""Building the rules' frozen records (events, actions, Path pieces laid) in compiled code.

A frozen dataclass given a quick ``__init__`` by ``services.games.frozen.quick_init`` is
built by storing its fields, in order, as its instance dict. Called from compiled code, the
class runs that ``__init__``, a Python function (a frame per record); ``made`` fills the
instance dict itself, compiled: the same instance, for the few records the rules build at
nearly every decision."""

from __future__ import annotations

from typing import Any, Final

_new: Final = object.__new__


def made(cls: type, fields: dict[str, Any]) -> Any:
    """An instance of ``cls``, a frozen dataclass with a quick ``__init__``, whose instance
    dict holds ``fields``: every field of the class, in the order of its fields, as that
    ``__init__`` stores them (a record missing one would not even print: the seeded
    playouts' digest, which prints every event, would tell)."""
    record: Any = _new(cls)
    # (its dict filled in place, past the frozen __setattr__, as ``evolve.copied`` fills a
    # state's: a call of object.__setattr__ to set it whole costs more)
    attributes: dict[str, Any] = record.__dict__
    attributes.update(fields)
    return record
