"""A message kept in step with a dataclass that changes a little at a time.

A replay draws a view after every event, and one event changes few of a view's parts (a
Crashland move: the astronaut, one or two of 30 cells, a counter). Filling the whole message
afresh (``protoconv.fill``) each step walks every part; ``Refill`` compares the new
dataclass with the one it last filled and fills again only the fields that differ: a part
(a nested dataclass) that was there before is refilled the same way, and of a list of
dataclasses that kept its length only the elements that differ. Parts are compared by
identity first (the engines' views share what did not change), then by equality.

Like ``protoconv``'s fill, the comparison of each (dataclass, message type) pair is worked
out once from the type hints and compiled into one plain function. The message ``Refill``
keeps equals what ``fill`` makes of the same dataclass.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from google.protobuf import message

from services.adapters.protoconv import _compile, _element_descriptor, _fields, _filler, fill

#: ``refill(msg, new, old)``: ``msg`` holds what ``fill`` made of ``old``; afterwards, of ``new``
Refiller = Callable[[Any, Any, Any], None]

_REFILLERS: dict[tuple[type, Any], Refiller] = {}


def refiller(cls: type, descriptor: Any) -> Refiller:
    """The function that turns a message filled from one ``cls`` into one filled from
    another, writing only what differs."""
    found = _REFILLERS.get((cls, descriptor))
    return found if found is not None else _build_refiller(cls, descriptor, set())


def _build_refiller(cls: type, descriptor: Any, building: set[tuple[type, Any]]) -> Refiller:
    key = (cls, descriptor)
    if key in _REFILLERS:
        return _REFILLERS[key]
    if key in building:  # a dataclass that reaches itself: call its refiller once it exists
        return lambda msg, new, old: _REFILLERS[key](msg, new, old)
    building.add(key)
    namespace: dict[str, Any] = {}
    lines = ["def refill(m, o, p):", "    pass"]
    for i, f in enumerate(_fields(cls, descriptor)):
        n, filler, again = f.name, f"f{i}", f"r{i}"
        if f.is_message:
            element = _element_descriptor(f)
            namespace[filler] = _filler(f.value, element)
            namespace[again] = _build_refiller(f.value, element, building)
        out = "x._value_" if f.is_enum else "x"
        lines.append(f"    x = o.{n}; y = p.{n}")
        if f.container == "tuple" and f.is_message:
            # element by element (each compared once): what is kept, refilled, added or cut
            lines += ["    if x is not y:", f"        t = m.{n}; k = min(len(x), len(y))"]
            lines += ["        for j in range(k):", "            a = x[j]; b = y[j]"]
            lines += [f"            if a is not b and a != b: {again}(t[j], a, b)"]
            lines += ["        if len(y) > k:", "            del t[k:]", "        else:"]
            lines += ["            add = t.add", f"            for a in x[k:]: {filler}(add(), a)"]
            continue
        lines.append("    if x is not y and x != y:")
        if not f.container and f.is_message:
            lines += ["        if x is None:", f'            m.ClearField("{n}")']
            lines += ["        elif y is None:", f"            t = m.{n}; t.SetInParent()"]
            lines += [f"            {filler}(t, x)", "        else:"]
            lines.append(f"            {again}(m.{n}, x, y)")
        elif not f.container and f.optional:
            lines += [f'        if x is None: m.ClearField("{n}")', f"        else: m.{n} = {out}"]
        elif not f.container:
            lines.append(f"        m.{n} = {out}")
        elif f.container == "tuple":
            items = "[x._value_ for x in x]" if f.is_enum else "x"
            lines += [f"        t = m.{n}", "        del t[:]", f"        t.extend({items})"]
        elif f.is_message:
            lines += [f'        m.ClearField("{n}")', "        if x:", f"            t = m.{n}"]
            lines.append(f"            for k, a in x.items(): {filler}(t[k], a)")
        else:
            value = "a._value_" if f.is_enum else "a"
            lines += [f'        m.ClearField("{n}")', "        if x:", f"            t = m.{n}"]
            lines.append(f"            for k, a in x.items(): t[k] = {value}")
    built: Refiller = _compile("\n".join(lines), namespace, "refill")
    _REFILLERS[key] = built
    return built


class Refill:
    """``message`` as ``fill`` makes it of the dataclass last given to ``update``."""

    def __init__(self, msg: message.Message) -> None:
        self.message = msg
        self._last: Any = None
        self._refill: Refiller | None = None

    def update(self, obj: Any) -> message.Message:
        last, self._last = self._last, obj
        if last is obj:
            return self.message
        if last is None or type(last) is not type(obj):
            self.message.Clear()
            self._refill = refiller(type(obj), self.message.DESCRIPTOR)
            return fill(self.message, obj)
        assert self._refill is not None
        self._refill(self.message, obj, last)
        return self.message
