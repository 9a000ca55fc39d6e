"""The dead-letter topic tells which matches are outstanding: a match is listed from its
first dead letter until a ``resolved`` record says it folded whole again."""

from __future__ import annotations

import json
from typing import Any

from services.projector.deadletters import outstanding, resolved


def letter(match_id: str, sequence: int, reason: str = "fold_error") -> dict[str, Any]:
    return {
        "match_id": match_id,
        "stream": "board",
        "sequence": sequence,
        "event_id": f"e{sequence}",
        "event_type": "x.Moved",
        "reason": reason,
        "error": "ValueError: boom",
    }


def test_a_match_is_outstanding_from_its_first_dead_letter_until_resolved() -> None:
    records = [
        (0, letter("a", 3)),
        (1, letter("a", 4)),
        (2, letter("b", 7, "too_large")),
        (3, json.loads(resolved("a", 12))),
    ]
    listed = outstanding(records)
    assert list(listed) == ["b"]
    assert listed["b"].reason == "too_large" and listed["b"].offset == 2


def test_a_match_dead_lettered_again_after_being_resolved_is_listed_again() -> None:
    records = [
        (0, letter("a", 3)),
        (1, letter("a", 4)),
        (2, json.loads(resolved("a", 4))),
        (3, letter("a", 3)),
    ]
    listed = outstanding(records)
    assert listed["a"].offset == 3 and listed["a"].events == 1
    two = outstanding(records[:2])
    assert two["a"].sequence == 3 and two["a"].events == 2 and two["a"].last_offset == 1
