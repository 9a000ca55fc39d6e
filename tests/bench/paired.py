"""How far to trust an A/B: each round's ratio of a variant to the base, and a sign test.

The machine's speed drifts from minute to minute by more than most changes move a figure
(two 6- and 8-round comparisons of the same two variants once gave 6 of 6 rounds ahead and
3 of 8). Medians over the rounds hide that; the rounds, paired, show it: a round's two
variants share its minutes, so their ratio keeps the change and drops most of the drift,
and the count of rounds in which the variant came out ahead says whether the ratios lean
one way by more than chance would.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: the figures a comparison reports, and whether a higher value is better
FIGURES: dict[str, bool] = {
    "actions/s": True,
    "view p50": False,
    "view p99": False,
    "cpu stack": False,
    "create p50": False,
    "start p50": False,
}


@dataclass(frozen=True)
class Paired:
    """One figure of one variant against the base, round by round."""

    figure: str
    #: variant ÷ base in each round that measured both (in round order)
    ratios: tuple[float, ...]
    #: rounds in which the variant was better (a tie counts for neither)
    ahead: int
    behind: int

    @property
    def median(self) -> float:
        return statistics.median(self.ratios) if self.ratios else math.nan

    @property
    def p_value(self) -> float:
        """Two-sided sign test: how likely a split at least this uneven is when the change
        does nothing (each round as likely to come out either way)."""
        return sign_test(self.ahead, self.behind)

    def line(self) -> str:
        if not self.ratios:
            return f"{self.figure:12} no paired rounds"
        low, high = min(self.ratios), max(self.ratios)
        return (
            f"{self.figure:12} x{self.median:.3f} (rounds x{low:.3f}..x{high:.3f}), "
            f"better in {self.ahead} of {self.ahead + self.behind}, sign test p={self.p_value:.2f}"
        )


def sign_test(ahead: int, behind: int) -> float:
    n = ahead + behind
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(ahead, behind) + 1)) / (1 << n)
    return min(1.0, 2 * tail)


def paired(
    base: Sequence[dict[str, float] | None],
    other: Sequence[dict[str, float] | None],
    figure: str,
    higher_is_better: bool,
) -> Paired:
    """``base`` and ``other``: one row per round (None for a round that failed), in the
    same round order."""
    ratios: list[float] = []
    ahead = behind = 0
    for b, o in zip(base, other, strict=True):
        if b is None or o is None or figure not in b or figure not in o or not b[figure]:
            continue
        ratio = o[figure] / b[figure]
        if math.isnan(ratio):
            continue
        ratios.append(ratio)
        if ratio != 1.0:
            better = ratio > 1.0 if higher_is_better else ratio < 1.0
            ahead += better
            behind += not better
    return Paired(figure, tuple(ratios), ahead, behind)
