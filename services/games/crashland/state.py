"""The full (secret) state of a Crashland match and ``evolve``, which folds one event in.

``evolve`` never checks a rule: events are facts and carry their results (levels after
a change), so replaying a log needs neither the rules nor randomness.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

from services.games.crashland import events as ev
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Phase, Position, System


@dataclass(frozen=True)
class CrashlandState:
    player: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    phase: Phase = Phase.SETUP
    turn: int = 0
    map_shuffled: bool = False
    #: map card ids row by row, top row first (secret until explored)
    grid: tuple[str, ...] = ()
    explored: frozenset[Position] = frozenset()
    astronaut: Position | None = None
    oxygen: int = CONTENT.start_level
    battery: int = CONTENT.start_level
    located: dict[int, Position] = field(default_factory=dict)
    collected: tuple[int, ...] = ()
    hand: tuple[str, ...] = ()
    deck_ready: bool = False
    #: cards left in the decks service's draw pile, below ``known_top``
    draw_pile: int = 0
    #: cards seen by a Satellite Uplink, on top of the draw pile, top first
    known_top: tuple[str, ...] = ()
    discard: tuple[str, ...] = ()
    cards_moved: int = 0
    flew: bool = False
    #: this turn's (or the last turn's) phase 2 draw
    drawn: tuple[str, ...] = ()
    applied_event: str | None = None
    #: the end of phase 2: keeping or discarding equipment
    checking_hand: bool = False
    #: an uplink in progress: cards to arrange, and how many must still be drawn
    uplink_count: int = 0
    uplink_to_draw: int = 0
    result: str | None = None
    end_reason: str = ""

    def card_at(self, position: Position) -> str:
        return self.grid[position.row * CONTENT.columns + position.column]

    def position_of(self, card: str) -> Position:
        index = self.grid.index(card)
        return Position(index // CONTENT.columns, index % CONTENT.columns)

    def level(self, system: System) -> int:
        return self.oxygen if system is System.OXYGEN else self.battery


def _without(cards: tuple[str, ...], removed: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c for c in cards if c not in removed)


_FIELDS = frozenset(f.name for f in fields(CrashlandState))


def _with(state: CrashlandState, **changes: object) -> CrashlandState:
    """``dataclasses.replace`` without running ``__init__`` again: the instance dict copied
    and updated, about ten times cheaper, and every fold calls it (the state has no
    ``__post_init__`` to skip; the assertion keeps a misspelt field from passing silently,
    which mypy cannot check through ``**changes``)."""
    assert changes.keys() <= _FIELDS, set(changes) - _FIELDS
    new = object.__new__(CrashlandState)
    new.__dict__.update(state.__dict__, **changes)
    return new


def evolve(state: CrashlandState, event: object) -> CrashlandState:
    s = state
    match event:
        case ev.GameStarted(player=player, options=options):
            return _with(s, player=player, options=dict(options))
        case ev.MapShuffled():
            return _with(s, map_shuffled=True)
        case ev.MapDealt(cards=cards):
            return _with(s, grid=cards)
        case ev.CardRevealed(position=position):
            return _with(s, explored=s.explored | {position})
        case ev.AstronautPlaced(position=position):
            return _with(s, astronaut=position)
        case ev.EventDeckShuffled(size=size, reshuffle=reshuffle):
            return _with(s, deck_ready=True, draw_pile=size, discard=() if reshuffle else s.discard)
        case ev.PhaseBegan(phase=phase, turn=turn):
            if phase is Phase.MOVEMENT:
                return _with(
                    s, phase=phase, turn=turn, checking_hand=False, cards_moved=0, flew=False
                )
            if phase is Phase.EVENTS:
                return _with(
                    s, phase=phase, turn=turn, checking_hand=False, drawn=(), applied_event=None
                )
            return _with(s, phase=phase, turn=turn, checking_hand=False)
        case ev.AstronautMoved(destination=dest, oxygen=oxygen, battery=battery):
            return _with(
                s, astronaut=dest, cards_moved=s.cards_moved + 1, oxygen=oxygen, battery=battery
            )
        case ev.FuelTankLocated(number=number, position=position):
            return _with(s, located={**s.located, number: position})
        case ev.FuelTankCollected(number=number):
            return _with(s, collected=(*s.collected, number))
        case ev.MovementEnded():
            return s
        case ev.EventCardsDrawn(cards=cards, from_uplink=from_uplink):
            if from_uplink:
                return _with(s, drawn=s.drawn + cards, known_top=s.known_top[len(cards) :])
            return _with(s, drawn=s.drawn + cards, draw_pile=s.draw_pile - len(cards))
        case ev.EventApplied(card=card, system=system, level=level):
            if system is System.OXYGEN:
                return _with(s, applied_event=card, oxygen=level)
            return _with(s, applied_event=card, battery=level)
        case ev.EventsDiscarded(cards=cards):
            return _with(s, discard=s.discard + cards)
        case ev.EquipmentKept(cards=cards):
            return _with(s, hand=s.hand + cards)
        case ev.HandCheckBegan():
            return _with(s, checking_hand=True)
        case ev.EquipmentDiscarded(card=card):
            return _with(s, hand=_without(s.hand, (card,)), discard=(*s.discard, card))
        case ev.PairSpent(cards=cards):
            return _with(s, hand=_without(s.hand, cards), discard=s.discard + cards)
        case ev.ShelterEntered(oxygen=oxygen, battery=battery):
            return _with(s, oxygen=oxygen, battery=battery)
        case ev.JetpackFlown(destination=dest, battery=battery):
            return _with(
                s, astronaut=dest, battery=battery, flew=s.flew or s.phase is Phase.MOVEMENT
            )
        case ev.SolarRecharged(battery=battery):
            return _with(s, battery=battery)
        case ev.UplinkActivated(count=count, from_deck=from_deck):
            return _with(s, uplink_count=count, uplink_to_draw=from_deck)
        case ev.UplinkCardsDrawn(cards=cards):
            return _with(
                s,
                known_top=s.known_top + cards,
                draw_pile=s.draw_pile - len(cards),
                uplink_to_draw=0,
            )
        case ev.UplinkArranged(order=order):
            return _with(s, known_top=order + s.known_top[len(order) :], uplink_count=0)
        case ev.SystemsChecked():
            return s
        case ev.GameWon(reason=reason):
            return _with(s, phase=Phase.OVER, result="won", end_reason=reason)
        case ev.GameLost(reason=reason):
            return _with(s, phase=Phase.OVER, result="lost", end_reason=reason)
    raise TypeError(f"not a Crashland event: {event!r}")
