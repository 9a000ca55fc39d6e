"""What code derives from an immutable object, kept by the object's identity.

States share what a fold did not change, and views reuse their cells and card faces
(``frozen.reused``): what was derived from such an object once (its view, its encoding)
holds as long as the object does, and finding it by identity costs one dict lookup."""

from __future__ import annotations

from typing import Generic, TypeVar

V = TypeVar("V")
D = TypeVar("D")


class ByIdentity(Generic[V]):
    """Values kept by their objects' identity. Each entry holds its object alive, so its
    id cannot be taken by another object meanwhile; at ``limit`` entries all go (the
    next lookups derive again)."""

    __slots__ = ("_kept", "_limit")

    def __init__(self, limit: int) -> None:
        self._kept: dict[int, tuple[object, V]] = {}
        self._limit = limit

    def get(self, key: object, default: D) -> V | D:
        found = self._kept.get(id(key))
        return found[1] if found is not None and found[0] is key else default

    def put(self, key: object, value: V) -> V:
        if len(self._kept) >= self._limit:
            self._kept.clear()
        self._kept[id(key)] = (key, value)
        return value

    def __len__(self) -> int:
        return len(self._kept)
