"""Uniform integers from a ``random.Random``, drawn exactly as its ``randrange`` draws them
but in one Python call instead of three: playouts and searches draw at every step."""

from __future__ import annotations

import random
from collections.abc import Callable


def below(rng: random.Random) -> Callable[[int], int]:
    """``rng.randrange(n)`` for ``n > 0``, the same numbers from the same state
    (``Random._randbelow_with_getrandbits``, CPython's draw: k bits, rejected past n)."""
    getrandbits = rng.getrandbits

    def draw(n: int) -> int:
        if n <= 0:
            raise ValueError(f"nothing to draw from: {n} choices")
        k = n.bit_length()
        index = getrandbits(k)
        while index >= n:
            index = getrandbits(k)
        return index

    return draw
