"""How long a search may think: CPU seconds of the thread that searches (a shared machine
or a busy service must not make a bot weaker or slower than its level says), or a fixed
number of iterations (reproducible to the last choice, for tests and comparisons)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    #: CPU seconds of the searching thread per decision (None: no time limit)
    cpu_seconds: float | None = None
    #: search iterations per decision (None: no count limit)
    iterations: int | None = None

    def __post_init__(self) -> None:
        if self.cpu_seconds is None and self.iterations is None:
            raise ValueError("a budget needs cpu_seconds or iterations")
        if self.cpu_seconds is not None and self.cpu_seconds <= 0:
            raise ValueError("cpu_seconds must be positive")
        if self.iterations is not None and self.iterations <= 0:
            raise ValueError("iterations must be positive")

    def start(self) -> Allowance:
        return Allowance(self)


class Allowance:
    """One decision's budget being spent."""

    __slots__ = ("_left", "deadline")

    def __init__(self, budget: Budget) -> None:
        self._left = budget.iterations if budget.iterations is not None else -1
        #: when it ends, on ``time.thread_time``'s clock (infinity: never)
        self.deadline = (
            time.thread_time() + budget.cpu_seconds if budget.cpu_seconds is not None else math.inf
        )

    def another(self) -> bool:
        """Whether one more iteration may start (and, if so, counts it)."""
        if self._left == 0 or self.expired():
            return False
        self._left -= 1
        return True

    def expired(self) -> bool:
        """The time is up (an iteration under way stops and is not counted)."""
        return time.thread_time() >= self.deadline
