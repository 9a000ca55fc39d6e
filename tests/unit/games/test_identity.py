"""ByIdentity: values found by their object's identity only, bounded."""

from __future__ import annotations

from services.games.identity import ByIdentity


def test_a_value_is_found_by_its_object_not_by_an_equal_one() -> None:
    kept: ByIdentity[str] = ByIdentity(8)
    key = (1, 2)
    assert kept.put(key, "drawn") == "drawn"
    assert kept.get(key, None) == "drawn"
    assert kept.get(tuple([1, 2]), None) is None  # equal, not the same object
    assert kept.get((3,), "absent") == "absent"


def test_the_entries_go_once_the_limit_is_reached() -> None:
    kept: ByIdentity[int] = ByIdentity(2)
    keys = [(i,) for i in range(3)]
    for i, key in enumerate(keys):
        kept.put(key, i)
    assert len(kept) == 1
    assert kept.get(keys[2], None) == 2
    assert kept.get(keys[0], None) is None
