"""What the edge accepts of a request: a message that parses, whose every string is
printable text.

A request arrives as bytes and is parsed here, not by gRPC: a message that does not parse
(a string field with invalid UTF-8, a truncated field...) would otherwise fail before any
handler runs and reach the client as UNKNOWN naming a Python class. Every string of every
field, nested messages and maps included, must then be printable (``str.isprintable``: no
control characters, no NUL, no format characters such as the bidirectional overrides that
make a name read backwards, no line or paragraph separators); a refusal names the field,
never its value.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import message
from google.protobuf.descriptor import FieldDescriptor


class BadInput(ValueError):
    """The request cannot be taken (the message names the field, never the value)."""


def parse(decode: Any, raw: bytes) -> Any:
    """The request ``raw`` holds, every string in it printable."""
    try:
        request = decode(raw)
    except message.DecodeError as error:
        raise BadInput("the request is not a valid message (a text field must be UTF-8)") from error
    check_texts(request)
    return request


#: how each field is checked: its kind, by field (descriptors are few and live forever)
_OTHER, _TEXT, _TEXTS, _MESSAGE, _MESSAGES, _MAP = range(6)
_kinds: dict[Any, int] = {}


def _kind(field: Any) -> int:
    kind = _kinds.get(field)
    if kind is None:
        if field.type == FieldDescriptor.TYPE_STRING:
            kind = _TEXTS if field.is_repeated else _TEXT
        elif field.type != FieldDescriptor.TYPE_MESSAGE:
            kind = _OTHER
        elif field.message_type.GetOptions().map_entry:
            kind = _MAP
        else:
            kind = _MESSAGES if field.is_repeated else _MESSAGE
        _kinds[field] = kind
    return kind


def check_texts(request: message.Message, path: str = "") -> None:
    """Every string in ``request`` printable (BadInput naming the first that is not)."""
    for field, value in request.ListFields():
        kind = _kind(field)
        if kind == _TEXT:
            if not value.isprintable():
                _refuse(path + field.name)
        elif kind == _TEXTS:
            for text in value:
                if not text.isprintable():
                    _refuse(path + field.name)
        elif kind == _MESSAGE:
            check_texts(value, f"{path}{field.name}.")
        elif kind == _MESSAGES:
            for item in value:
                check_texts(item, f"{path}{field.name}.")
        elif kind == _MAP:
            for key, item in value.items():
                if isinstance(key, str) and not key.isprintable():
                    _refuse(f"{path}{field.name} (a key)")
                if isinstance(item, str):
                    if not item.isprintable():
                        _refuse(path + field.name)
                elif isinstance(item, message.Message):
                    check_texts(item, f"{path}{field.name}.")


def _refuse(field: str) -> None:
    raise BadInput(
        f"{field} must be printable text (no control, formatting or bidirectional characters)"
    )


def _printable(field: str, text: str) -> None:
    if not text.isprintable():
        _refuse(field)


def check_name(field: str, name: str) -> None:
    """A name people read (a seat, a display name): printable, and not blank."""
    _printable(field, name)
    if name and not name.strip():
        raise BadInput(f"{field} must not be blank")
