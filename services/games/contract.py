"""The contract every game engine follows (docs/DESIGN.md §3).

A game is a *decider*: ``decide`` turns a player's action into events or refuses it,
``evolve`` folds one event into the state, and ``next_step`` says who acts next, which
chance outcome is needed, or that the match is over. Everything here is pure: no I/O,
no clocks, no randomness. Chance is an explicit node (as in OpenSpiel): the engine asks
for dice or cards, the board service (or a seeded simulator) supplies the outcome, and
``resolve`` records that outcome as events, so folding events never needs randomness.

Actions, events, states and views are frozen dataclasses built from ``int``, ``str``,
``bool``, ``float``, ``str``-valued ``Enum``, ``tuple[X, ...]``, ``dict``, ``X | None``
and nested dataclasses (or unions of dataclasses), so ``codec`` can store them as JSON
and the adapters can map them field by field onto protobuf messages.
"""

from __future__ import annotations

import dataclasses
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar, overload

from services.games.frozen import quick_init_all

State = TypeVar("State")

#: a bot that decides from what its seat sees: (view, player, legal actions) → action
ViewPolicy = Callable[[Any, str, Sequence[Any]], Any]


class RuleViolation(Exception):
    """A command the rules refuse in the current state (gRPC FAILED_PRECONDITION).

    ``code`` is a stable machine-readable reason (``NOT_YOUR_TURN``); ``message`` is
    written for the player ("You have no Jetpack pair to spend.").
    """

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class MalformedAction(RuleViolation):
    """A command that can never be legal: unknown option, bad argument (INVALID_ARGUMENT)."""


# --- chance nodes: what the engine asks the dice and decks services for ---------------


@dataclass(frozen=True)
class RollDice:
    """Roll ``count`` dice with ``sides`` faces each."""

    #: the chance service that answers it (see ``Game.chance_services``)
    service: ClassVar[str] = "dice"

    count: int
    sides: int
    purpose: str


@dataclass(frozen=True)
class ShuffleDeck:
    """Form a new face-down draw pile for ``deck`` from ``cards`` in a secret random order.

    Used at setup and to reshuffle a discard pile. The order stays with the decks service;
    the engine only learns the cards as they are drawn.
    """

    service: ClassVar[str] = "decks"

    deck: str
    cards: tuple[str, ...]
    purpose: str


@dataclass(frozen=True)
class DrawCards:
    """Draw the top ``count`` cards of ``deck``'s draw pile."""

    service: ClassVar[str] = "decks"

    deck: str
    count: int
    purpose: str


ChanceRequest = RollDice | ShuffleDeck | DrawCards


@dataclass(frozen=True)
class DiceRolled:
    values: tuple[int, ...]


@dataclass(frozen=True)
class DeckShuffled:
    deck: str
    size: int


@dataclass(frozen=True)
class CardsDrawn:
    deck: str
    cards: tuple[str, ...]


ChanceOutcome = DiceRolled | DeckShuffled | CardsDrawn


# --- what happens next ----------------------------------------------------------------


@dataclass(frozen=True)
class Outcome:
    """How a match ended. ``result`` is per player: ``won``, ``lost`` or ``draw``."""

    results: dict[str, str]
    reason: str
    scores: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class AwaitingPlayers:
    """These players may act now (several at once for simultaneous phases)."""

    players: tuple[str, ...]
    phase: str


@dataclass(frozen=True)
class AwaitingChance:
    request: ChanceRequest


@dataclass(frozen=True)
class Finished:
    outcome: Outcome


Step = AwaitingPlayers | AwaitingChance | Finished


# --- parametric actions (continuous parameters with declared ranges) -------------------


@dataclass(frozen=True)
class ParamRange:
    """A continuous parameter of an action: the dataclass field ``name`` in [low, high]."""

    name: str
    low: float
    high: float
    unit: str = ""


@dataclass(frozen=True)
class ActionTemplate:
    """A family of legal actions: ``example`` with the fields named in ``ranges`` free.

    ``legal_actions`` may list templates beside concrete actions (a flick: which cube is
    fixed, direction and strength are free). A CLI prompts for each range, a bot samples
    them, and ``decide`` must refuse values outside the ranges (``admits`` checks them).
    """

    example: Any
    ranges: tuple[ParamRange, ...]

    def instantiate(self, **values: float) -> Any:
        """The action with these parameters; a parameter over an ``int`` field is rounded."""
        missing = {r.name for r in self.ranges} - set(values)
        if missing:
            raise ValueError(f"missing parameters: {', '.join(sorted(missing))}")
        typed = {
            name: round(value) if type(getattr(self.example, name)) is int else value
            for name, value in values.items()
        }
        return dataclasses.replace(self.example, **typed)

    def sample(self, rng: random.Random) -> Any:
        return self.instantiate(**{r.name: rng.uniform(r.low, r.high) for r in self.ranges})

    def admits(self, action: Any) -> bool:
        """``action`` is this template with every parameter inside its range."""
        if type(action) is not type(self.example):
            return False
        free = {r.name: r for r in self.ranges}
        for f in dataclasses.fields(action):
            value = getattr(action, f.name)
            if f.name in free:
                if not free[f.name].low <= float(value) <= free[f.name].high:
                    return False
            elif value != getattr(self.example, f.name):
                return False
        return True


class Choices(Sequence[Any]):
    """Legal actions in parts, each a sequence of its own (a tuple, or one that builds an
    action only when it is read): the length and one entry cost no more than that entry's
    part. Iterating gives every entry of every part, in order.

    ``last_read`` is the entry the last ``choices[index]`` returned (None before any): the
    action a policy picked, mostly. An engine that handed these choices out for a state
    can tell by identity that an action it is asked to decide in that state is one of them
    (Drillit then skips the checks that could only refuse it)."""

    __slots__ = ("_length", "_parts", "_sizes", "last_read")

    def __init__(self, parts: Sequence[Sequence[Any]]) -> None:
        self._parts = parts
        self._sizes = list(map(len, parts))  # (no comprehension frame: built per decision)
        self._length = sum(self._sizes)
        self.last_read: Any = None

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Any]: ...

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return tuple(self)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("legal action index out of range")
        # (enumerated, not zipped with ``strict=True``: a zip with a keyword is built
        # through its slow constructor, at every decision)
        for part, size in enumerate(self._sizes):
            if index < size:
                entry = self.last_read = self._parts[part][index]
                return entry
            index -= size
        raise AssertionError("unreachable: the sizes add up to the length")

    def __iter__(self) -> Iterator[Any]:
        for part in self._parts:
            yield from part

    def __repr__(self) -> str:
        return f"Choices({tuple(self)!r})"


def concrete(choice: Any, rng: random.Random) -> Any:
    """A legal action from one entry of ``legal_actions`` (templates are sampled)."""
    return choice.sample(rng) if isinstance(choice, ActionTemplate) else choice


def random_view_policy(seed: int) -> ViewPolicy:
    """The bot every game has: uniform over legal actions, templates sampled uniformly."""
    rng = random.Random(seed)

    def choose(view: Any, player: str, legal: Sequence[Any]) -> Any:
        return concrete(legal[rng.randrange(len(legal))], rng)

    return choose


# --- how a legal action shows on the game's picture ------------------------------------


@dataclass(frozen=True)
class PictureAxis:
    """How one parameter of an ``ActionTemplate`` is read off a pointer on the picture:
    ``value = offset + scale * measure``. The measure is the pointer's ``x`` or ``y`` where
    it is released (picture units), or the ``angle`` (degrees counter-clockwise from the
    picture's x axis, as seen: y up) or ``length`` (picture units) of a drag from where it
    began. A client clamps the value into the parameter's range (an angle wraps)."""

    measure: str  # x | y | angle | length
    scale: float = 1.0
    offset: float = 0.0


@dataclass(frozen=True)
class Described:
    """A legal action as the player who may take it sees it (``Game.describe``).

    ``label`` names it as a player would say it. ``targets`` are the ids of the elements
    of ``Game.picture`` (of the same view) the player picks to make it, in the order they
    would pick them; ``affects`` the ids of elements it would change (a client shows them
    while it is offered). For a template, ``axes`` says how a pointer on the picture sets
    each parameter (by name); a parameter without one is set some other way."""

    label: str
    targets: tuple[str, ...] = ()
    affects: tuple[str, ...] = ()
    axes: Mapping[str, PictureAxis] = field(default_factory=dict)


# --- options a match is created with ---------------------------------------------------


@dataclass(frozen=True)
class OptionSpec:
    """One match option (``CreateMatch.options``): CLIs offer it, ``setup`` validates it."""

    name: str
    default: str
    help: str
    #: the allowed values; empty means free text that ``setup`` validates
    choices: tuple[str, ...] = ()


# --- the engine -----------------------------------------------------------------------


class Game(ABC, Generic[State]):
    """One game's rules. Subclasses are stateless; every method is a pure function."""

    name: ClassVar[str]
    title: ClassVar[str]
    rules_version: ClassVar[str]
    min_players: ClassVar[int]
    max_players: ClassVar[int]
    #: every action and event class this game uses, for adapters and codecs
    action_types: ClassVar[tuple[type, ...]]
    event_types: ClassVar[tuple[type, ...]]
    #: the dataclass ``view`` returns (the wire message is generated from it)
    view_type: ClassVar[type]
    #: the options ``setup`` understands, with their defaults
    options: ClassVar[tuple[OptionSpec, ...]] = ()
    #: the chance services its chance nodes ask (each request's ``service``): a match
    #: commits to a seed with these and reveals it at the end, and with no other (a seed
    #: nothing was drawn from verifies nothing, and costs its service two appends a match)
    chance_services: ClassVar[frozenset[str]] = frozenset({"dice", "decks"})
    #: event classes under the names older logs gave them (old class name → the class that
    #: reads those events now, with the same fields): each old name keeps its message, so
    #: stored and exported logs still fold (docs/CONVENTIONS.md, "Renaming an event")
    renamed_events: ClassVar[Mapping[str, type]] = {}
    #: the event classes that show a player something no one could know before (a face-
    #: down card turned, secret choices revealed, a physical outcome): a seat's command
    #: that records one cannot be taken back (services/board/undo.py). Chance outcomes
    #: (``resolve``'s events) count without being listed. None: not declared, and then
    #: every event counts, so nothing of the game is ever taken back.
    revealing_events: ClassVar[frozenset[type] | None] = None

    @abstractmethod
    def initial_state(self) -> State:
        """The state before the first event (no match set up yet)."""

    @abstractmethod
    def setup(self, players: Sequence[str], options: Mapping[str, str]) -> list[Any]:
        """Events that open a match, or MalformedAction for bad players or options."""

    @abstractmethod
    def evolve(self, state: State, event: Any) -> State:
        """Fold one event into the state. Never refuses: events are facts."""

    @abstractmethod
    def next_step(self, state: State) -> Step:
        """Who acts next, which chance outcome is needed, or the end."""

    @abstractmethod
    def decide(self, state: State, player: str, action: Any) -> list[Any]:
        """Events for ``player`` doing ``action``, or raise RuleViolation / MalformedAction.

        Asked only for a match in play and one of its players: the command handler refuses
        the rest (MATCH_OVER, NOT_A_PLAYER; docs/CONVENTIONS.md, "Who refuses what")."""

    @abstractmethod
    def resolve(self, state: State, outcome: ChanceOutcome) -> list[Any]:
        """Events recording the outcome of the pending chance node."""

    @abstractmethod
    def legal_actions(self, state: State, player: str) -> tuple[Any, ...]:
        """Every action ``player`` may take now (empty when it is not their turn).

        Entries are concrete actions or ``ActionTemplate``s for parametric actions."""

    def legal_choices(self, state: State, player: str) -> Sequence[Any]:
        """``legal_actions``, the same entries in the same order, as a sequence that may
        build an entry only when it is read (``Choices``): a random policy reads the
        length and one entry. In-process playouts hand this to their policies."""
        return self.legal_actions(state, player)

    @abstractmethod
    def view(self, state: State, viewer: str | None) -> Any:
        """What ``viewer`` may see (``None``: a spectator). Hidden information never leaks."""

    def reveals(self, event: Any) -> bool:
        """``event`` shows a player something no one could know before it (see
        ``revealing_events``): a command that records one cannot be taken back."""
        revealing = self.revealing_events
        return revealing is None or type(event) in revealing

    def statistics(self, state: State) -> dict[str, float]:
        """Numbers worth keeping about a match (damage …), for scoring; ``turns`` is the one
        simulation reports average."""
        return {}

    # -- hooks the platform's clients use (CLI, bots, simulations, pictures) ------------

    def bots(self) -> Mapping[str, Callable[[int], ViewPolicy]]:
        """View-based bots by name (``random``, ``greedy`` …): seed → policy."""
        return {"random": random_view_policy}

    def render(self, view: Any) -> str:
        """The view as legible terminal text."""
        return repr(view)

    def picture(self, view: Any) -> str | None:
        """The view drawn as an SVG document, for games that have one."""
        return None

    def seat_summaries(self, state: State) -> list[dict[str, str | float]]:
        """One row per seat of a finished match for simulation reports: ``seat``, ``won``
        (1.0/0.0), ``score`` and any categorical columns (faction, race …) to group by."""
        return []

    # -- helpers built on the abstract methods --------------------------------------

    def fold(self, events: Sequence[Any], state: State | None = None) -> State:
        current = self.initial_state() if state is None else state
        for event in events:
            current = self.evolve(current, event)
        return current

    def decide_folded(self, state: State, player: str, action: Any) -> tuple[list[Any], State]:
        """``decide``, and the state after its events. An engine that folds its events as it
        decides them overrides this (and ``resolve_folded``) to return that state, so the
        command handler does not fold every event a second time."""
        events = self.decide(state, player, action)
        return events, self.fold(events, state)

    def resolve_folded(self, state: State, outcome: ChanceOutcome) -> tuple[list[Any], State]:
        """``resolve``, and the state after its events (see ``decide_folded``)."""
        events = self.resolve(state, outcome)
        return events, self.fold(events, state)

    def rollout_engine(self) -> Game[State]:
        """The engine search bots play their rollouts with: the same rules and states,
        its bots (``bots``) included, where a game's own simulation is costly a coarser one
        (Dungeon Drop's physics). Nothing it decides is ever recorded. Default: this one."""
        return self

    def outcome(self, state: State) -> Outcome | None:
        step = self.next_step(state)
        return step.outcome if isinstance(step, Finished) else None

    def describe_action(self, action: Any) -> str:
        """A short human label for an action, for menus and logs."""
        return repr(action)

    def describe(self, view: Any, action: Any) -> Described:
        """``action`` (a template's example, for a template) as the player whose ``view``
        this is names it and picks it on ``picture(view)``. Games with a picture override
        it; by default the label is ``describe_action``'s and nothing is picked."""
        return Described(self.describe_action(action))


quick_init_all(
    (
        RollDice,
        ShuffleDeck,
        DrawCards,
        DiceRolled,
        DeckShuffled,
        CardsDrawn,
        Outcome,
        AwaitingPlayers,
        AwaitingChance,
        Finished,
    )
)
