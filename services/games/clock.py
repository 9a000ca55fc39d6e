"""A match's time control: the option that sets it, and the clock it runs (pure).

Options (``CreateMatch.options``, next to the game's own): ``clock=live:10m+5s`` (a bank of
ten minutes per seat, five seconds added for each move the seat makes) or
``clock=turn:24h`` (each move within 24 hours of the seat's turn starting), and
``on_timeout=forfeit|bot|pass`` (what a timeout does; forfeit unless given; each game
offers the policies its rules allow: ``policies``).

The clock is platform state of the match, not of the game's rules: it is advanced only at
the end of each recorded command (the envelope marked ``last_in_batch``) with that
envelope's recorded time, so the board and every reader (projector, replay) hold the same
clock. Between two commands the seats the game awaits are charged the time that passed.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

CLOCK_OPTION = "clock"
TIMEOUT_OPTION = "on_timeout"
OPTIONS = (CLOCK_OPTION, TIMEOUT_OPTION)

LIVE, TURN = "live", "turn"
FORFEIT, BOT, PASS = "forfeit", "bot", "pass"

#: per game, what a timeout may do. A pass only where the rulebook has one: Drillit!'s
#: player ends their turn ("stop spending Action Points"); the other rulebooks have no pass.
POLICIES: Mapping[str, tuple[str, ...]] = {
    "crashland": (FORFEIT, BOT),
    "drillit": (FORFEIT, BOT, PASS),
    "dungeon_drop": (FORFEIT, BOT),
    "imperial_miners": (FORFEIT, BOT),
}
#: per game, the action a pass plays (its class name among the seat's legal actions)
PASS_ACTIONS: Mapping[str, str] = {"drillit": "EndTurn"}
#: cooperative games: one seat's forfeit is the team's loss (every seat "lost")
TEAM_GAMES = frozenset({"drillit"})

#: bounds a serious control stays within (a typo like 10000h is refused)
MIN_BANK_S, MAX_BANK_S = 10, 6 * 3600
MAX_INCREMENT_S = 600
MIN_PER_MOVE_S, MAX_PER_MOVE_S = 60, 14 * 86400

_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_DURATION = r"(\d{1,6})([smhd])"
_LIVE = re.compile(rf"live:{_DURATION}(?:\+{_DURATION})?")
_TURN = re.compile(rf"turn:{_DURATION}")


class BadTimeControl(ValueError):
    """An option a player gave that sets no time control; the message says why."""


@dataclass(frozen=True)
class TimeControl:
    mode: str  # LIVE or TURN
    #: live: each seat's bank and what each of its moves adds; turn: the time per move
    bank_s: float = 0.0
    increment_s: float = 0.0
    per_move_s: float = 0.0
    on_timeout: str = FORFEIT

    def describe(self) -> str:
        if self.mode == LIVE:
            return f"live:{_text(self.bank_s)}+{_text(self.increment_s)}"
        return f"turn:{_text(self.per_move_s)}"


def _seconds(number: str, unit: str) -> int:
    return int(number) * _UNITS[unit]


def _text(seconds: float) -> str:
    s = int(seconds)
    for unit in "dhm":
        if s and s % _UNITS[unit] == 0:
            return f"{s // _UNITS[unit]}{unit}"
    return f"{s}s"


def parse(game: str, options: Mapping[str, str]) -> TimeControl | None:
    """The match's time control (None: no clock), or BadTimeControl saying why not."""
    text = options.get(CLOCK_OPTION, "")
    policy = options.get(TIMEOUT_OPTION, "")
    if not text:
        if policy:
            raise BadTimeControl("on_timeout needs a clock (e.g. clock=live:10m+5s)")
        return None
    allowed = POLICIES.get(game, (FORFEIT,))
    policy = policy or FORFEIT
    if policy not in allowed:
        raise BadTimeControl(
            f"on_timeout={policy[:20]} is not offered for this game; choose one of "
            f"{', '.join(allowed)}"
        )
    live, turn = _LIVE.fullmatch(text), _TURN.fullmatch(text)
    if live is not None:
        bank = _seconds(live[1], live[2])
        increment = _seconds(live[3], live[4]) if live[3] else 0
        if not MIN_BANK_S <= bank <= MAX_BANK_S:
            raise BadTimeControl("a live clock's bank is between 10s and 6h")
        if increment > MAX_INCREMENT_S:
            raise BadTimeControl("a live clock adds at most 10m a move")
        return TimeControl(LIVE, bank_s=bank, increment_s=increment, on_timeout=policy)
    if turn is not None:
        per_move = _seconds(turn[1], turn[2])
        if not MIN_PER_MOVE_S <= per_move <= MAX_PER_MOVE_S:
            raise BadTimeControl("a turn-based clock gives between 1m and 14d a move")
        return TimeControl(TURN, per_move_s=per_move, on_timeout=policy)
    raise BadTimeControl(
        "clock is live:BANK+INCREMENT (e.g. live:10m+5s) or turn:TIME (e.g. turn:24h, "
        "turn:3d); units s, m, h, d"
    )


def game_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options the game's rules read (the clock's are the platform's)."""
    return {k: v for k, v in options.items() if k not in OPTIONS}


def forfeit_results(game: str, players: Sequence[str], seat: str) -> dict[str, str]:
    """The results when ``seat`` forfeits: it loses and the others win; in a cooperative
    game the team loses together."""
    if game in TEAM_GAMES:
        return {p: "lost" for p in players}
    return {p: ("lost" if p == seat else "won") for p in players}


@dataclass
class Clock:
    """The seats' time as the recorded commands have left it.

    ``since``: when the last command was recorded; ``awaited``: the seats the game waited
    for from then on. Live: ``banks`` is each seat's time left at ``since``; turn:
    ``started`` is when each awaited seat's move began."""

    control: TimeControl
    banks: dict[str, float] = field(default_factory=dict)
    started: dict[str, float] = field(default_factory=dict)
    awaited: tuple[str, ...] = ()
    since: float = 0.0
    #: seats whose time ran out in the command being recorded (ClockExpired)
    expiring: set[str] = field(default_factory=set)
    #: timeouts recorded so far, per seat
    timeouts: dict[str, int] = field(default_factory=dict)

    @classmethod
    def start(cls, control: TimeControl, players: Sequence[str]) -> Clock:
        return cls(control, banks={p: control.bank_s for p in players})

    def expired(self, seat: str) -> None:
        """A ClockExpired for ``seat`` in the command being recorded."""
        self.expiring.add(seat)
        self.timeouts[seat] = self.timeouts.get(seat, 0) + 1

    def recorded(self, at: float, actor: str, awaited: Sequence[str]) -> None:
        """A command by ``actor`` was recorded at ``at``; the game now awaits ``awaited``."""
        elapsed = max(0.0, at - self.since) if self.awaited else 0.0
        movers = set(self.expiring)
        if actor in self.awaited:
            movers.add(actor)
        if self.control.mode == LIVE:
            for seat in self.awaited:
                self.banks[seat] = max(0.0, self.banks.get(seat, 0.0) - elapsed)
            for seat in self.expiring:
                self.banks[seat] = 0.0
            for seat in movers:
                self.banks[seat] = self.banks.get(seat, 0.0) + self.control.increment_s
        else:
            self.started = {
                seat: (at if seat in movers or seat not in self.started else self.started[seat])
                for seat in awaited
            }
        self.expiring = set()
        self.awaited = tuple(awaited)
        self.since = at

    def facts(self) -> dict[str, Any]:
        """What a stored record keeps of the clock (JSON-safe; its control is the match's
        options): ``from_facts`` reads it back."""
        return {
            "banks": self.banks,
            "started": self.started,
            "awaited": list(self.awaited),
            "since": self.since,
            "expiring": sorted(self.expiring),
            "timeouts": self.timeouts,
        }

    @classmethod
    def from_facts(cls, control: TimeControl, facts: Mapping[str, Any]) -> Clock:
        return cls(
            control,
            banks=dict(facts["banks"]),
            started=dict(facts["started"]),
            awaited=tuple(facts["awaited"]),
            since=float(facts["since"]),
            expiring=set(facts.get("expiring", ())),
            timeouts=dict(facts.get("timeouts", {})),
        )

    def deadline(self, seat: str) -> float | None:
        """When ``seat`` runs out of time (None: the game does not wait for it)."""
        if seat not in self.awaited:
            return None
        if self.control.mode == LIVE:
            return self.since + self.banks.get(seat, 0.0)
        return self.started.get(seat, self.since) + self.control.per_move_s

    def earliest(self) -> tuple[float, str] | None:
        """The next deadline and its seat (the first seat in order on a tie)."""
        due = [(d, s) for s in self.awaited if (d := self.deadline(s)) is not None]
        return min(due) if due else None

    def remaining(self, seat: str, now: float) -> float:
        """``seat``'s time left at ``now`` (live: its bank; turn: of its move)."""
        deadline = self.deadline(seat)
        if deadline is not None:
            return max(0.0, deadline - now)
        if self.control.mode == LIVE:
            return self.banks.get(seat, 0.0)
        return self.control.per_move_s
