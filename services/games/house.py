"""House choices: the places where a rulebook leaves a choice open, as each content pack
lists them (``house_choices:``), with the clause each one fills."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KINDS = ("house", "reading")


@dataclass(frozen=True)
class HouseChoice:
    """What the implementation does where the rulebook leaves a choice open: ``clause``
    quotes what it fills; ``kind`` is "house" (a rule the rulebook does not give) or
    "reading" (one way to carry out a printed rule where the text allows several)."""

    clause: str
    kind: str
    choice: str


def house_choices(raw: list[dict[str, Any]]) -> tuple[HouseChoice, ...]:
    """The pack's list, refused unless every entry names its clause, kind and choice."""
    choices = tuple(
        HouseChoice(str(c.get("clause", "")), str(c.get("kind", "")), str(c.get("choice", "")))
        for c in raw
    )
    for c in choices:
        if c.kind not in KINDS or not c.clause.strip() or not c.choice.strip():
            raise ValueError(f"a house choice names its clause, kind and choice: {c!r}")
    return choices
