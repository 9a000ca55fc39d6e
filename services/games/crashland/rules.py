"""Crashland's rules: ``next_step``, ``decide``, ``resolve`` and ``legal_actions``.

Interpretations where the rulebook is open (kept minimal):

- Movement is one card per ``Move``. The turn's first two cards are free; each further
  card costs 1 oxygen or 1 battery, the player's choice, never from a system at 0.
  ``EndMovement`` needs a move this turn ("you must move"); a Jetpack flight in phase 1
  counts as that move but not as cards walked.
- Levels never go below 0 nor above 9; an event's loss stops at 0, a gain at 9.
- A tank is located as soon as both beacons of its number are face up: it lies in the
  column of the up/down beacon and the row of the left/right beacon. It is collected the
  moment the astronaut is on that card after it is located: walking onto it (passing
  through counts, every card is a move onto it), landing there by Jetpack, or standing
  there when the second beacon is revealed.
- The win is a phase-1 condition: on the spaceship card, holding all three tanks, with
  both systems at 1 or more ("without losing all of your oxygen or battery power"). It is
  checked after every phase-1 action and when phase 1 begins (so a phase-3 Jetpack flight
  home wins at the start of the next turn, after the systems check passed).
- The lost events and the applied one go to the discard pile; equipment goes to the hand.
  "You may have no more than three Equipment cards in your hand at the end of the Events
  and Equipment phase. Place any cards you do not wish to keep on the discard pile." Read
  as: at the end of every phase 2 in which the player holds equipment, they may discard
  any equipment cards, old or new, one per ``DiscardEquipment``, and end the phase with
  ``KeepHand``, which is refused while more than three remain. The choice belongs to that
  moment only: no discarding in phases 1 and 3, where cards leave the hand only as a
  spent pair. With an empty hand (or once the last card is discarded) phase 2 ends by
  itself.
- Pairs are spent in phases 1 and 3, any number of times. The two cards spent are the
  first two of that kind in the hand (equal cards). A Jetpack needs 1 battery to fly, to an
  explored card other than the current one. Solar Recharge and Dome Shelter may be spent
  even when the gain is capped.
- Satellite Uplink: the next min(6, cards in the draw pile) cards are seen (the discard pile
  is only reshuffled when drawing) — the known top of the deck first, the rest drawn from
  the decks service; the player then puts them back in an order of their choosing. Later
  draws take the known cards first. With nothing left to see the pair is simply spent.
- Phase 2 draws what the pile has; when it runs out, the discard pile is reshuffled into
  a new draw pile and the rest is drawn from it.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Callable, Iterator, Sequence
from enum import Enum
from typing import Any, Final, TypeVar, overload

from services.games.contract import (
    AwaitingChance,
    AwaitingPlayers,
    CardsDrawn,
    ChanceOutcome,
    DeckShuffled,
    DrawCards,
    Finished,
    MalformedAction,
    Outcome,
    RuleViolation,
    ShuffleDeck,
    Step,
)
from services.games.crashland import actions as act
from services.games.crashland import events as ev
from services.games.crashland.content import CONTENT, MapCard
from services.games.crashland.evolve import _FOLDS
from services.games.crashland.model import (
    Axis,
    Boost,
    Direction,
    Equipment,
    MapKind,
    Payment,
    Phase,
    Position,
)
from services.games.crashland.state import CrashlandState

MAP_DECK = "map"
EVENT_DECK = "events"
E = TypeVar("E", bound=Enum)
T = TypeVar("T")

# Enum members read once: on Python 3.11 every ``Phase.MOVEMENT`` goes through the
# ``__getattr__`` hook of ``EnumType`` (as costly as a function call), and the rules read
# them several times per action. ``Final``: compiled, they are read from C variables, not
# looked up in the module's dict.
_SETUP: Final = Phase.SETUP
_MOVEMENT: Final = Phase.MOVEMENT
_EVENTS: Final = Phase.EVENTS
_SYSTEMS_CHECK: Final = Phase.SYSTEMS_CHECK
_OVER: Final = Phase.OVER
_FREE_PAY: Final = Payment.FREE
_OXYGEN_PAY: Final = Payment.OXYGEN
_BATTERY_PAY: Final = Payment.BATTERY
_SPACESHIP: Final = MapKind.SPACESHIP
_DOME: Final = MapKind.DOME
#: the content's numbers the rules read at every step
_EVENTS_PER_TURN: Final = CONTENT.events_per_turn
_FREE_CARDS: Final = CONTENT.free_cards
_MIN_LEVEL: Final = CONTENT.min_level
_MAP_CARDS: Final = CONTENT.map_cards
_EVENT_CARDS: Final = CONTENT.event_cards
_EQUIPMENT_CARDS: Final = CONTENT.equipment_cards
#: event class -> its fold (evolve.py's table, read from a C variable)
_FOLD_OF: Final = _FOLDS


class _Log:
    """Events being decided, folded as they are added so later rules see their effect."""

    __slots__ = ("events", "state")

    def __init__(self, state: CrashlandState) -> None:
        self.state = state
        self.events: list[object] = []

    def add(self, event: object) -> None:
        self.events.append(event)
        # what ``evolve`` does, without its call (the rules add Crashland events only)
        self.state = _FOLD_OF[type(event)](self.state, event)


# The events every turn makes, built without their ``__init__`` (a Python function): the
# instance dict stored at once, as the folds' ``_with`` does (and Imperial Miners' ``_chain``).
# The fields in the order of the dataclass, all given (these events have no defaults).


def _built(cls: type[T], fields: dict[str, object]) -> T:
    new = object.__new__(cls)
    object.__setattr__(new, "__dict__", fields)  # past the frozen __setattr__
    return new


def _phase_began(phase: Phase, turn: int) -> ev.PhaseBegan:
    return _built(ev.PhaseBegan, {"phase": phase, "turn": turn})


def _card_revealed(position: Position, card: str) -> ev.CardRevealed:
    return _built(ev.CardRevealed, {"position": position, "card": card})


def _astronaut_moved(
    origin: Position,
    destination: Position,
    direction: Direction,
    pay: Payment,
    oxygen: int,
    battery: int,
) -> ev.AstronautMoved:
    fields: dict[str, object] = {
        "origin": origin,
        "destination": destination,
        "direction": direction,
        "pay": pay,
        "oxygen": oxygen,
        "battery": battery,
    }
    return _built(ev.AstronautMoved, fields)


# --- what happens next ------------------------------------------------------------------


class _LastStep:
    """The last state asked about and its step: a command asks for the same state's step
    several times (the caller, legal actions, decide, the handler), and states never change.
    One tuple, replaced whole, so concurrent callers never see a state with another's step.
    (An attribute of a compiled class: a module global is a dict entry, read and written.)"""

    def __init__(self) -> None:
        self.last: tuple[CrashlandState | None, Step | None] = (None, None)


_LAST_STEP: Final = _LastStep()


def next_step(state: CrashlandState) -> Step:
    last, step = _LAST_STEP.last
    if last is state and step is not None:
        return step
    step = _next_step(state)
    _LAST_STEP.last = (state, step)
    return step


#: the steps that never vary (steps are immutable, so one instance serves every match)
_NOT_STARTED = AwaitingPlayers((), Phase.SETUP.value)
_SHUFFLE_MAP = AwaitingChance(ShuffleDeck(MAP_DECK, CONTENT.map_ids, "setup"))
_DEAL_MAP = AwaitingChance(DrawCards(MAP_DECK, len(CONTENT.map_ids), "deal map"))
_SHUFFLE_EVENTS = AwaitingChance(ShuffleDeck(EVENT_DECK, CONTENT.deck_ids, "setup"))
#: the draws of phase 2, by how many cards (1 to the cards per turn)
_DRAW_EVENTS: Final[dict[int, AwaitingChance]] = {
    n: AwaitingChance(DrawCards(EVENT_DECK, n, "events"))
    for n in range(1, CONTENT.events_per_turn + 1)
}


def _next_step(state: CrashlandState) -> Step:
    phase, player = state.phase, state.player
    if phase is _OVER:
        assert player is not None and state.result is not None
        return Finished(
            Outcome(
                results={player: state.result},
                reason=state.end_reason,
                scores={player: len(state.collected)},
            )
        )
    if player is None:
        return _NOT_STARTED
    if phase is _SETUP:
        if not state.map_shuffled:
            return _SHUFFLE_MAP
        if not state.grid:
            return _DEAL_MAP
        return _SHUFFLE_EVENTS
    if state.uplink_to_draw:
        return AwaitingChance(DrawCards(EVENT_DECK, state.uplink_to_draw, "uplink"))
    if state.uplink_count:
        return AwaitingPlayers((player,), "arrange_uplink")
    if phase is _EVENTS and not state.checking_hand:
        need = _EVENTS_PER_TURN - len(state.drawn)
        if state.draw_pile:
            count = min(need, state.draw_pile)
            step = _DRAW_EVENTS.get(count)  # (always there: phase 2 ends once 3 are drawn)
            return step or AwaitingChance(DrawCards(EVENT_DECK, count, "events"))
        return AwaitingChance(ShuffleDeck(EVENT_DECK, state.discard, "reshuffle"))
    return _awaiting(player, phase)


#: player -> phase -> the step of that player's turn in that phase (at most 4096 players;
#: by player, then phase: strings hash once, a (player, phase) key is hashed at every look-up)
_AWAITING: Final[dict[str, dict[Phase, AwaitingPlayers]]] = {}


def _awaiting(player: str, phase: Phase) -> AwaitingPlayers:
    """The step of a player's turn, built once per player and phase (steps are immutable,
    and next_step runs several times per action; dicts, not ``lru_cache``: its wrapper
    costs more than the look-up)."""
    steps = _AWAITING.get(player)
    if steps is None:
        if len(_AWAITING) >= 4096:
            _AWAITING.clear()
        steps = _AWAITING[player] = {}
    step = steps.get(phase)
    if step is None:
        step = steps[phase] = AwaitingPlayers((player,), phase.value)
    return step


# --- chance -----------------------------------------------------------------------------


def resolve(state: CrashlandState, outcome: ChanceOutcome) -> list[object]:
    return resolve_folded(state, outcome)[0]


def resolve_folded(
    state: CrashlandState, outcome: ChanceOutcome
) -> tuple[list[object], CrashlandState]:
    """The events recording ``outcome``, and the state they lead to (folded on the way)."""
    step = next_step(state)
    if not isinstance(step, AwaitingChance):
        raise RuleViolation("NO_CHANCE_PENDING", "No card draw or shuffle is awaited.")
    request = step.request
    log = _Log(state)
    match request, outcome:
        case ShuffleDeck(deck=deck, cards=cards), DeckShuffled(deck=o_deck, size=size) if (
            deck == o_deck and size == len(cards)
        ):
            if deck == MAP_DECK:
                log.add(ev.MapShuffled(size))
            else:
                log.add(ev.EventDeckShuffled(size, reshuffle=state.phase is not _SETUP))
                if state.phase is _SETUP:
                    log.add(_phase_began(_MOVEMENT, 1))
        case DrawCards(deck=deck, count=count), CardsDrawn(deck=o_deck, cards=cards) if (
            deck == o_deck and count == len(cards)
        ):
            if deck == MAP_DECK:
                _deal(log, cards)
            elif state.uplink_to_draw:
                log.add(ev.UplinkCardsDrawn(cards))
            else:
                log.add(ev.EventCardsDrawn(cards, from_uplink=False))
        case _:
            raise RuleViolation("UNEXPECTED_OUTCOME", f"{outcome!r} does not answer {request!r}.")
    if log.state.phase is _EVENTS:  # (what ``_settle`` checks first, without its call)
        _settle(log)
    return log.events, log.state


_SORTED_MAP_IDS = sorted(CONTENT.map_ids)
#: the map deck's one spaceship card (the content pack checks there is exactly one)
(_SHIP,) = (c for c in CONTENT.map_ids if CONTENT.map_cards[c].kind is MapKind.SPACESHIP)


def _deal(log: _Log, cards: tuple[str, ...]) -> None:
    if sorted(cards) != _SORTED_MAP_IDS:
        raise RuleViolation("UNEXPECTED_OUTCOME", "The dealt map is not the map deck.")
    log.add(ev.MapDealt(cards))
    position = _position_of(log.state.grid, _SHIP)
    log.add(ev.CardRevealed(position, _SHIP))
    log.add(ev.AstronautPlaced(position))


def _settle(log: _Log) -> None:
    """Finish phase 2 once its three cards are drawn (or the deck has nothing more)."""
    s = log.state
    if s.phase is not _EVENTS or s.checking_hand or s.uplink_count:
        return
    complete = len(s.drawn) >= _EVENTS_PER_TURN
    if not complete and (s.draw_pile or s.discard):
        return
    events = [c for c in s.drawn if c in _EVENT_CARDS]
    if events:
        top = _EVENT_CARDS[max(events, key=lambda c: _EVENT_CARDS[c].number)]
        level = max(_MIN_LEVEL, s.level(top.system) - top.loss)
        log.add(ev.EventApplied(top.id, top.number, top.system, top.loss, level))
        log.add(ev.EventsDiscarded(tuple(events)))
    equipment = tuple(c for c in s.drawn if c in _EQUIPMENT_CARDS)
    if equipment:
        log.add(ev.EquipmentKept(equipment))
    if log.state.hand:
        log.add(ev.HandCheckBegan())
    else:
        log.add(_phase_began(_SYSTEMS_CHECK, s.turn))


# --- the player's actions ---------------------------------------------------------------


def decide(state: CrashlandState, player: str, action: object) -> list[object]:
    return decide_folded(state, player, action)[0]


def decide_folded(
    state: CrashlandState, player: str, action: object
) -> tuple[list[object], CrashlandState]:
    """The events of ``player`` doing ``action``, and the state they lead to (folded on
    the way, as later rules need their effect)."""
    step = next_step(state)
    if isinstance(step, AwaitingChance):
        raise RuleViolation("AWAITING_CHANCE", "Cards are being drawn or shuffled.")
    decider = _DECIDERS.get(type(action)) or _decider_of(action)
    if state.uplink_count and decider is not _arrange:
        raise RuleViolation("ARRANGE_UPLINK_FIRST", "Put the uplink cards back first.")
    log = _Log(state)
    decider(log, action)
    if log.state.phase is _EVENTS:  # (most actions end outside phase 2: no call for them)
        _settle(log)
    return log.events, log.state


def _decider_of(action: object) -> Callable[[_Log, Any], None]:
    """The decider of an instance of a subclass of an action (the first class it is an
    instance of, in the order of ``ACTION_TYPES``)."""
    for kind, decider in _DECIDERS.items():
        if isinstance(action, kind):
            return decider
    raise MalformedAction("UNKNOWN_ACTION", f"Crashland has no action {action!r}.")


def _as_enum(kind: type[E], value: object, code: str) -> E:
    if type(value) is kind:  # already a member (calling the Enum class is slow)
        return value
    try:
        return kind(value)
    except ValueError:
        raise MalformedAction(code, f"{value!r} is not a {kind.__name__}.") from None


def _in_grid(position: Position) -> bool:
    return 0 <= position.row < CONTENT.rows and 0 <= position.column < CONTENT.columns


def _require_phase(state: CrashlandState, *phases: Phase) -> None:
    if state.phase not in phases:
        names = " or ".join(p.value for p in phases)
        raise RuleViolation("WRONG_PHASE", f"That is only possible in the {names} phase.")


_ROWS: Final = CONTENT.rows
_COLUMNS: Final = CONTENT.columns
#: (row, column, direction) -> the card a step from there leads to, for every step that
#: stays on the map: one Position each (they are immutable), looked up by numbers
_STEPS: dict[tuple[int, int, Direction], Position] = {
    (row, column, d): step
    for row in range(_ROWS)
    for column in range(_COLUMNS)
    for d in Direction
    if 0 <= (step := Position(row, column).step(d)).row < _ROWS and 0 <= step.column < _COLUMNS
}


def _move(log: _Log, action: act.Move) -> None:
    s = log.state
    direction, pay = action.direction, action.pay
    if type(direction) is not Direction:  # (the checks of ``_as_enum``, without its call)
        direction = _as_enum(Direction, direction, "NOT_ORTHOGONAL")
    if type(pay) is not Payment:
        pay = _as_enum(Payment, pay, "UNKNOWN_PAYMENT")
    if s.phase is not _MOVEMENT:
        _require_phase(s, _MOVEMENT)
    origin = s.astronaut
    assert origin is not None
    destination = _STEPS.get((origin.row, origin.column, direction))
    if destination is None:  # a step off the map (the table holds those that stay on it)
        destination = origin.step(direction)
        if not (0 <= destination.row < _ROWS and 0 <= destination.column < _COLUMNS):
            raise RuleViolation("OFF_GRID", f"There is no map card to the {direction.value}.")
    free = s.cards_moved < _FREE_CARDS
    if free and pay is not _FREE_PAY:
        raise RuleViolation("MOVE_IS_FREE", "The first two cards each turn are free.")
    if not free and pay is _FREE_PAY:
        raise RuleViolation("MUST_PAY", "Pay 1 oxygen or 1 battery for this card.")
    oxygen = s.oxygen - (pay is _OXYGEN_PAY)
    battery = s.battery - (pay is _BATTERY_PAY)
    if min(oxygen, battery) < _MIN_LEVEL:
        raise RuleViolation("SYSTEM_EMPTY", f"Your {pay.value} is empty.")
    log.add(_astronaut_moved(origin, destination, direction, pay, oxygen, battery))
    _arrive(log, destination)


def _arrive(log: _Log, position: Position) -> None:
    s = log.state
    if position not in s.explored:
        card = s.grid[position.row * _COLUMNS + position.column]  # s.card_at(position)
        log.add(_card_revealed(position, card))
        number = _MAP_CARDS[card].number
        if number is not None:
            _locate_tank(log, number)
    if log.state.located:
        _collect_tanks(log)
    _check_win(log)


#: the two beacon cards of each tank number
_BEACONS: dict[int, tuple[MapCard, ...]] = {
    number: tuple(c for c in CONTENT.map_cards.values() if c.number == number)
    for number in CONTENT.tank_numbers
}


def _position_of(grid: tuple[str, ...], card: str) -> Position:
    """``CrashlandState.position_of`` (a Python method), here compiled."""
    index = grid.index(card)
    return Position(index // _COLUMNS, index % _COLUMNS)


def _locate_tank(log: _Log, number: int | None) -> None:
    """After a beacon of ``number`` is revealed: its tank is located if both its beacons are
    now face up (a card revealed can only complete its own number's pair)."""
    s = log.state
    if number is None or number in s.located:
        return
    place = {c.axis: _position_of(s.grid, c.id) for c in _BEACONS[number]}
    if all(p in s.explored for p in place.values()):
        row, column = place[Axis.HORIZONTAL].row, place[Axis.VERTICAL].column
        log.add(ev.FuelTankLocated(number, Position(row, column)))


def _collect_tanks(log: _Log) -> None:
    s = log.state
    for number, position in sorted(s.located.items()):
        if number not in s.collected and position == s.astronaut:
            log.add(ev.FuelTankCollected(number, position))


_TANKS = len(CONTENT.tank_numbers)


def _check_win(log: _Log) -> None:
    s = log.state
    if (  # the rarest condition first (every condition is a plain test)
        len(s.collected) == _TANKS
        and s.phase is _MOVEMENT
        and s.astronaut is not None
        and _MAP_CARDS[s.card_at(s.astronaut)].kind is _SPACESHIP
        and min(s.oxygen, s.battery) >= 1
    ):
        log.add(ev.GameWon(s.turn, "all three fuel tanks aboard: lift-off"))


def _end_movement(log: _Log, action: act.EndMovement) -> None:
    s = log.state
    if s.phase is not _MOVEMENT:
        _require_phase(s, _MOVEMENT)
    if not s.cards_moved and not s.flew:
        raise RuleViolation("MUST_MOVE", "You must move before ending the movement phase.")
    log.add(ev.MovementEnded(s.cards_moved))
    log.add(_phase_began(_EVENTS, s.turn))
    known = s.known_top[:_EVENTS_PER_TURN]
    if known:
        log.add(ev.EventCardsDrawn(known, from_uplink=True))


def _require_hand_check(state: CrashlandState) -> None:
    if not state.checking_hand:
        raise RuleViolation(
            "WRONG_PHASE", "Equipment is kept or discarded at the end of the events phase."
        )


def _discard(log: _Log, action: act.DiscardEquipment) -> None:
    s = log.state
    card = action.card
    _require_hand_check(s)
    if card not in s.hand:
        raise RuleViolation("CARD_NOT_IN_HAND", f"You do not hold {card!r}.")
    log.add(ev.EquipmentDiscarded(card))
    if not log.state.hand:
        log.add(_phase_began(_SYSTEMS_CHECK, s.turn))


def _keep(log: _Log, action: act.KeepHand) -> None:
    s = log.state
    _require_hand_check(s)
    if len(s.hand) > CONTENT.hand_limit:
        raise RuleViolation(
            "OVER_HAND_LIMIT",
            f"You may keep no more than {CONTENT.hand_limit} cards; you hold {len(s.hand)}.",
        )
    log.add(_phase_began(_SYSTEMS_CHECK, s.turn))


_PAIR_KIND: dict[type, Equipment] = {
    act.SpendDomeShelter: Equipment.DOME_SHELTER,
    act.SpendJetpack: Equipment.JETPACK,
    act.SpendSolarRecharge: Equipment.SOLAR_RECHARGE,
    act.SpendSatelliteUplink: Equipment.SATELLITE_UPLINK,
}


def pair_in_hand(state: CrashlandState, kind: Equipment) -> tuple[str, ...]:
    """The two cards a pair of ``kind`` would spend, or () without a pair."""
    cards = tuple(c for c in state.hand if CONTENT.equipment_cards[c].kind is kind)
    return cards[:2] if len(cards) >= 2 else ()


def _spend(log: _Log, action: object) -> None:
    s = log.state
    kind = _PAIR_KIND[type(action)]
    label = kind.value.replace("_", " ")
    _require_phase(s, Phase.MOVEMENT, Phase.SYSTEMS_CHECK)
    pair = pair_in_hand(s, kind)
    if not pair:
        raise RuleViolation("NO_PAIR", f"You hold no pair of {label} cards.")
    assert s.astronaut is not None
    cap = CONTENT.max_level
    match action:
        case act.SpendDomeShelter(boost=boost):
            boost = _as_enum(Boost, boost, "UNKNOWN_BOOST")
            if CONTENT.map_cards[s.card_at(s.astronaut)].kind is not MapKind.DOME:
                raise RuleViolation("NOT_ON_DOME", "Dome Shelter needs a dome card to enter.")
            gain = {Boost.OXYGEN: (3, 0), Boost.BATTERY: (0, 3), Boost.BOTH: (2, 2)}[boost]
            log.add(ev.PairSpent(kind, pair))
            log.add(
                ev.ShelterEntered(
                    boost, min(cap, s.oxygen + gain[0]), min(cap, s.battery + gain[1])
                )
            )
        case act.SpendJetpack(destination=destination):
            if not isinstance(destination, Position) or not _in_grid(destination):
                raise MalformedAction("NO_SUCH_CARD", f"{destination!r} is not on the map.")
            if destination not in s.explored:
                raise RuleViolation("UNEXPLORED_CARD", "The Jetpack only flies to explored cards.")
            if destination == s.astronaut:
                raise RuleViolation("ALREADY_THERE", "You are already on that card.")
            if s.battery < 1:
                raise RuleViolation("SYSTEM_EMPTY", "The Jetpack needs 1 battery.")
            log.add(ev.PairSpent(kind, pair))
            log.add(ev.JetpackFlown(s.astronaut, destination, s.battery - 1))
            _arrive(log, destination)
        case act.SpendSolarRecharge():
            log.add(ev.PairSpent(kind, pair))
            log.add(ev.SolarRecharged(min(cap, s.battery + 2)))
        case act.SpendSatelliteUplink():
            count = min(CONTENT.uplink_cards, len(s.known_top) + s.draw_pile)
            log.add(ev.PairSpent(kind, pair))
            log.add(ev.UplinkActivated(count, count - len(s.known_top[:count])))
    _check_win(log)


def _arrange(log: _Log, action: act.ArrangeUplink) -> None:
    s = log.state
    order = action.order
    if not s.uplink_count:
        raise RuleViolation("NO_UPLINK", "There are no uplink cards to arrange.")
    seen = s.known_top[: s.uplink_count]
    if sorted(order) != sorted(seen):
        raise RuleViolation("NOT_THE_SEEN_CARDS", "Arrange exactly the cards the uplink showed.")
    log.add(ev.UplinkArranged(tuple(order)))


def _end_turn(log: _Log, action: act.EndTurn) -> None:
    s = log.state
    if s.phase is not _SYSTEMS_CHECK:
        _require_phase(s, _SYSTEMS_CHECK)
    passed = min(s.oxygen, s.battery) >= 1
    log.add(ev.SystemsChecked(s.oxygen, s.battery, passed))
    if not passed:
        empty = "oxygen" if s.oxygen < 1 else "battery power"
        log.add(ev.GameLost(s.turn, f"systems check failed: out of {empty}"))
        return
    log.add(_phase_began(_MOVEMENT, s.turn + 1))
    _check_win(log)


#: each action's decider, by the action's class (the order of ``ACTION_TYPES``): one dict
#: look-up where a ``match`` tried up to ten class patterns in turn
_DECIDERS: dict[type, Callable[[_Log, Any], None]] = {
    act.Move: _move,
    act.EndMovement: _end_movement,
    act.DiscardEquipment: _discard,
    act.KeepHand: _keep,
    act.SpendDomeShelter: _spend,
    act.SpendJetpack: _spend,
    act.SpendSolarRecharge: _spend,
    act.SpendSatelliteUplink: _spend,
    act.ArrangeUplink: _arrange,
    act.EndTurn: _end_turn,
}

# --- legal actions ----------------------------------------------------------------------
#
# Generated directly from the same conditions ``decide`` checks, in the order the actions
# were always listed (random bots pick by index, so seeded simulations stay the same).
# Deciding every candidate and keeping those not refused gives the same set (a property test
# keeps that reference: tests/unit/games/crashland/test_legal_actions_fast.py), at one
# ``decide`` with its state folds per candidate, which made legal actions most of a playout's
# cost. The enums are listed once (iterating an Enum class is slow), the directions that
# stay on the map are worked out once per card, and pairs are only looked for in a hand of
# two cards or more.

_DIRECTIONS = tuple(Direction)
_PAYMENTS = tuple(Payment)
#: the payments ``_move`` may accept, in the order of ``Payment``, by their code (an index
#: here, ``_payment_code``): none, free, either system, oxygen only, battery only
_PAYS: Final[tuple[tuple[Payment, ...], ...]] = (
    (),
    (Payment.FREE,),
    (Payment.OXYGEN, Payment.BATTERY),
    (Payment.OXYGEN,),
    (Payment.BATTERY,),
)
#: actions are immutable, so one instance of each serves every list
_MOVES = {(d, pay): act.Move(d, pay) for d in _DIRECTIONS for pay in _PAYMENTS}
_END_MOVEMENT = (act.EndMovement(),)
_KEEP_HAND = (act.KeepHand(),)
_END_TURN = (act.EndTurn(),)
_SHELTERS = tuple(act.SpendDomeShelter(boost) for boost in Boost)
_RECHARGE, _UPLINK = (act.SpendSolarRecharge(),), (act.SpendSatelliteUplink(),)
_DOME_SHELTER, _JETPACK = Equipment.DOME_SHELTER, Equipment.JETPACK
_SOLAR_RECHARGE, _SATELLITE_UPLINK = Equipment.SOLAR_RECHARGE, Equipment.SATELLITE_UPLINK


def _payment_code(paying: bool, oxygen: int, battery: int) -> int:
    """The payments ``_move`` accepts (their index in ``_PAYS``): free for the turn's first
    cards, then a system that stays at the minimum or above after paying 1."""
    if not paying:
        return 1 if min(oxygen, battery) >= _MIN_LEVEL else 0
    by_oxygen = min(oxygen - 1, battery) >= _MIN_LEVEL
    by_battery = min(oxygen, battery - 1) >= _MIN_LEVEL
    if by_oxygen:
        return 2 if by_battery else 3
    return 4 if by_battery else 0


_ON_MAP: dict[Position, tuple[Direction, ...]] = {
    Position(row, column): tuple(d for d in _DIRECTIONS if _in_grid(Position(row, column).step(d)))
    for row in range(CONTENT.rows)
    for column in range(CONTENT.columns)
}


def _moves(
    row: int, column: int, pays: tuple[Payment, ...], may_end: bool
) -> tuple[act.Move | act.EndMovement, ...]:
    """Every step off the card at (``row``, ``column``) that stays on the map, paid in each
    of ``pays``, and ``EndMovement`` when the astronaut may end the movement phase."""
    on_map = _ON_MAP[Position(row, column)]
    moves = tuple(_MOVES[direction, pay] for direction in on_map for pay in pays)
    return moves + _END_MOVEMENT if may_end else moves


#: ``_moves`` of every card, payments' code and may-end, made once and read by a number
#: (``_moves_index``), not a cache keyed by a tuple (whose look-up costs more than the list)
_MOVE_LISTS: Final[list[tuple[act.Move | act.EndMovement, ...]]] = [
    _moves(row, column, pays, may_end)
    for row in range(_ROWS)
    for column in range(_COLUMNS)
    for pays in _PAYS
    for may_end in (False, True)
]


def _moves_index(row: int, column: int, code: int, may_end: bool) -> int:
    return ((row * _COLUMNS + column) * len(_PAYS) + code) * 2 + (1 if may_end else 0)


#: hand -> ``_hand_check`` of it (at most 1024 hands: a plain dict, cheaper than
#: ``lru_cache``'s wrapper)
_HAND_CHECKS: Final[dict[tuple[str, ...], tuple[act.DiscardEquipment | act.KeepHand, ...]]] = {}


def _hand_check(hand: tuple[str, ...]) -> tuple[act.DiscardEquipment | act.KeepHand, ...]:
    """The conditions of ``_discard`` and ``_keep``: discard any card held, keep the hand
    when it is within the limit."""
    legal = _HAND_CHECKS.get(hand)
    if legal is None:
        if len(_HAND_CHECKS) >= 1024:
            _HAND_CHECKS.clear()
        discards = tuple(act.DiscardEquipment(card) for card in dict.fromkeys(hand))
        legal = discards + _KEEP_HAND if len(hand) <= CONTENT.hand_limit else discards
        _HAND_CHECKS[hand] = legal
    return legal


@functools.lru_cache(maxsize=1024)
def _arrangements(seen: tuple[str, ...]) -> tuple[act.ArrangeUplink, ...]:
    return tuple(act.ArrangeUplink(order) for order in itertools.permutations(seen))


class _Arrangements(Sequence[act.ArrangeUplink]):
    """``ArrangeUplink`` for every order of the seen cards, in the order of
    ``itertools.permutations``, each built only when it is read (up to 720 of them)."""

    __slots__ = ("_length", "_seen")

    def __init__(self, seen: tuple[str, ...]) -> None:
        self._seen = seen
        self._length = math.factorial(len(seen))

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> act.ArrangeUplink: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[act.ArrangeUplink]: ...

    def __getitem__(self, index: int | slice) -> act.ArrangeUplink | Sequence[act.ArrangeUplink]:
        if isinstance(index, slice):
            return _arrangements(self._seen)[index]
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("arrangement index out of range")
        # the index in the factorial number system: which of the cards left comes next
        left, order = list(self._seen), []
        for n in range(len(left) - 1, -1, -1):
            which, index = divmod(index, math.factorial(n))
            order.append(left.pop(which))
        return act.ArrangeUplink(tuple(order))

    def __iter__(self) -> Iterator[act.ArrangeUplink]:
        return iter(_arrangements(self._seen))


#: hand -> ``_pairs_held`` of it (at most 1024 hands, as ``_HAND_CHECKS``)
_PAIRS_HELD: Final[dict[tuple[str, ...], frozenset[Equipment]]] = {}


def _pairs_held(hand: tuple[str, ...]) -> frozenset[Equipment]:
    """The equipment kinds ``hand`` holds a pair of (``pair_in_hand`` is a pair exactly when
    two cards of that kind are held), worked out once per hand: most hands hold none."""
    held = _PAIRS_HELD.get(hand)
    if held is None:
        if len(_PAIRS_HELD) >= 1024:
            _PAIRS_HELD.clear()
        kinds = [_EQUIPMENT_CARDS[card].kind for card in hand]
        held = _PAIRS_HELD[hand] = frozenset(kind for kind in kinds if kinds.count(kind) >= 2)
    return held


def _turn_actions(state: CrashlandState) -> tuple[object, ...]:
    """The legal actions of the player whose turn it is, outside an uplink."""
    legal: tuple[object, ...] = ()
    phase = state.phase
    astronaut = state.astronaut
    if phase is _MOVEMENT and astronaut is not None:
        moved: int = state.cards_moved
        code = _payment_code(moved >= _FREE_CARDS, state.oxygen, state.battery)
        may_end = bool(moved or state.flew)
        legal = _MOVE_LISTS[_moves_index(astronaut.row, astronaut.column, code, may_end)]
    if state.checking_hand:
        legal += _hand_check(state.hand)
    spending = phase is _MOVEMENT or phase is _SYSTEMS_CHECK
    if spending and astronaut is not None and len(state.hand) >= 2:  # a pair to spend
        held = _pairs_held(state.hand)
        if held:
            legal += _pair_actions(state, astronaut, held)
    if phase is _SYSTEMS_CHECK:
        legal += _END_TURN
    return legal


def _pair_actions(
    state: CrashlandState, astronaut: Position, held: frozenset[Equipment]
) -> tuple[object, ...]:
    """The conditions of ``_spend`` for the kinds of pair held, in the order of the actions."""
    pairs: list[object] = []
    on_dome = _MAP_CARDS[state.card_at(astronaut)].kind is _DOME
    if on_dome and _DOME_SHELTER in held:
        pairs += _SHELTERS
    if state.battery >= 1 and _JETPACK in held:
        pairs += [
            act.SpendJetpack(position)
            for position in sorted(state.explored)
            if position != astronaut and _in_grid(position)
        ]
    if _SOLAR_RECHARGE in held:
        pairs += _RECHARGE
    if _SATELLITE_UPLINK in held:
        pairs += _UPLINK
    return tuple(pairs)


def legal_actions(state: CrashlandState, player: str) -> tuple[object, ...]:
    step = next_step(state)
    if not isinstance(step, AwaitingPlayers) or player not in step.players:
        return ()
    if state.uplink_count:  # every ordering of the seen cards
        return _arrangements(state.known_top[: state.uplink_count])
    return _turn_actions(state)


def legal_choices(state: CrashlandState, player: str) -> Sequence[object]:
    """``legal_actions``, with the uplink's orders (up to 720) built only when read."""
    step = next_step(state)
    if not isinstance(step, AwaitingPlayers) or player not in step.players:
        return ()
    if state.uplink_count:
        return _Arrangements(state.known_top[: state.uplink_count])
    return _turn_actions(state)


def spaceship_position(state: CrashlandState) -> Position | None:
    for card in state.grid:
        if CONTENT.map_cards[card].kind is MapKind.SPACESHIP:
            return state.position_of(card)
    return None
