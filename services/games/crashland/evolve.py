"""``evolve``, which folds one event into a Crashland state (compiled: every event of every
match comes here, and the rules fold each event they decide on).

``evolve`` never checks a rule: events are facts and carry their results (levels after
a change), so replaying a log needs neither the rules nor randomness.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from services.games.crashland import events as ev
from services.games.crashland.model import Phase, System

if TYPE_CHECKING:  # (state.py re-exports the fold table, which the tests read there)
    from services.games.crashland.state import CrashlandState

# Enum members read once (reading ``Phase.X`` goes through ``EnumType.__getattr__`` on 3.11;
# ``Final``: compiled, they are read from C variables, not the module's dict)
_MOVEMENT: Final = Phase.MOVEMENT
_EVENTS: Final = Phase.EVENTS
_OVER: Final = Phase.OVER
_OXYGEN: Final = System.OXYGEN


def _without(cards: tuple[str, ...], removed: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(c for c in cards if c not in removed)


def _with(state: CrashlandState, **changes: object) -> CrashlandState:
    """``dataclasses.replace`` without running ``__init__`` again: the instance dict merged
    with the changes (one ``|``, a fifth cheaper than a copy and an update), about ten times
    cheaper, and every fold calls it (the state has no
    ``__post_init__`` to skip). mypy cannot check the names in ``**changes``: a test folds
    every event of many matches and checks each state has exactly the state's fields
    (tests/unit/games/crashland/test_folded_decisions.py), so a misspelt one cannot pass."""
    new = object.__new__(type(state))
    # past the frozen __setattr__ (compiled: a direct PyObject_GenericSetAttr)
    object.__setattr__(new, "__dict__", state.__dict__ | changes)
    return new


def evolve(state: CrashlandState, event: object) -> CrashlandState:
    fold = _FOLDS.get(type(event))
    if fold is None:
        raise TypeError(f"not a Crashland event: {event!r}")
    return fold(state, event)


# One function per event, found by the event's class: a ``match`` over 27 class patterns
# tried them in turn and cost as much as the copy itself.


def _match_set_up(s: CrashlandState, e: ev.MatchSetUp) -> CrashlandState:
    return _with(s, player=e.player, options=dict(e.options))


def _map_shuffled(s: CrashlandState, e: ev.MapShuffled) -> CrashlandState:
    return _with(s, map_shuffled=True)


def _map_dealt(s: CrashlandState, e: ev.MapDealt) -> CrashlandState:
    return _with(s, grid=e.cards)


def _card_revealed(s: CrashlandState, e: ev.CardRevealed) -> CrashlandState:
    return _with(s, explored=s.explored | {e.position})


def _astronaut_placed(s: CrashlandState, e: ev.AstronautPlaced) -> CrashlandState:
    return _with(s, astronaut=e.position)


def _event_deck_shuffled(s: CrashlandState, e: ev.EventDeckShuffled) -> CrashlandState:
    return _with(s, deck_ready=True, draw_pile=e.size, discard=() if e.reshuffle else s.discard)


def _phase_began(s: CrashlandState, e: ev.PhaseBegan) -> CrashlandState:
    phase, turn = e.phase, e.turn
    if phase is _MOVEMENT:
        return _with(s, phase=phase, turn=turn, checking_hand=False, cards_moved=0, flew=False)
    if phase is _EVENTS:
        return _with(s, phase=phase, turn=turn, checking_hand=False, drawn=(), applied_event=None)
    return _with(s, phase=phase, turn=turn, checking_hand=False)


def _astronaut_moved(s: CrashlandState, e: ev.AstronautMoved) -> CrashlandState:
    return _with(
        s,
        astronaut=e.destination,
        cards_moved=s.cards_moved + 1,
        oxygen=e.oxygen,
        battery=e.battery,
    )


def _fuel_tank_located(s: CrashlandState, e: ev.FuelTankLocated) -> CrashlandState:
    return _with(s, located={**s.located, e.number: e.position})


def _fuel_tank_collected(s: CrashlandState, e: ev.FuelTankCollected) -> CrashlandState:
    return _with(s, collected=(*s.collected, e.number))


def _unchanged(s: CrashlandState, e: object) -> CrashlandState:
    return s


def _event_cards_drawn(s: CrashlandState, e: ev.EventCardsDrawn) -> CrashlandState:
    cards = e.cards
    if e.from_uplink:
        return _with(s, drawn=s.drawn + cards, known_top=s.known_top[len(cards) :])
    return _with(s, drawn=s.drawn + cards, draw_pile=s.draw_pile - len(cards))


def _event_applied(s: CrashlandState, e: ev.EventApplied) -> CrashlandState:
    if e.system is _OXYGEN:
        return _with(s, applied_event=e.card, oxygen=e.level)
    return _with(s, applied_event=e.card, battery=e.level)


def _events_discarded(s: CrashlandState, e: ev.EventsDiscarded) -> CrashlandState:
    return _with(s, discard=s.discard + e.cards)


def _equipment_kept(s: CrashlandState, e: ev.EquipmentKept) -> CrashlandState:
    return _with(s, hand=s.hand + e.cards)


def _hand_check_began(s: CrashlandState, e: ev.HandCheckBegan) -> CrashlandState:
    return _with(s, checking_hand=True)


def _equipment_discarded(s: CrashlandState, e: ev.EquipmentDiscarded) -> CrashlandState:
    return _with(s, hand=_without(s.hand, (e.card,)), discard=(*s.discard, e.card))


def _pair_spent(s: CrashlandState, e: ev.PairSpent) -> CrashlandState:
    return _with(s, hand=_without(s.hand, e.cards), discard=s.discard + e.cards)


def _shelter_entered(s: CrashlandState, e: ev.ShelterEntered) -> CrashlandState:
    return _with(s, oxygen=e.oxygen, battery=e.battery)


def _jetpack_flown(s: CrashlandState, e: ev.JetpackFlown) -> CrashlandState:
    return _with(s, astronaut=e.destination, battery=e.battery, flew=s.flew or s.phase is _MOVEMENT)


def _solar_recharged(s: CrashlandState, e: ev.SolarRecharged) -> CrashlandState:
    return _with(s, battery=e.battery)


def _uplink_activated(s: CrashlandState, e: ev.UplinkActivated) -> CrashlandState:
    return _with(s, uplink_count=e.count, uplink_to_draw=e.from_deck)


def _uplink_cards_drawn(s: CrashlandState, e: ev.UplinkCardsDrawn) -> CrashlandState:
    return _with(
        s,
        known_top=s.known_top + e.cards,
        draw_pile=s.draw_pile - len(e.cards),
        uplink_to_draw=0,
    )


def _uplink_arranged(s: CrashlandState, e: ev.UplinkArranged) -> CrashlandState:
    return _with(s, known_top=e.order + s.known_top[len(e.order) :], uplink_count=0)


def _game_won(s: CrashlandState, e: ev.GameWon) -> CrashlandState:
    return _with(s, phase=_OVER, result="won", end_reason=e.reason)


def _game_lost(s: CrashlandState, e: ev.GameLost) -> CrashlandState:
    return _with(s, phase=_OVER, result="lost", end_reason=e.reason)


_FOLDS: Final[dict[type, Callable[[CrashlandState, Any], CrashlandState]]] = {
    ev.MatchSetUp: _match_set_up,
    ev.MapShuffled: _map_shuffled,
    ev.MapDealt: _map_dealt,
    ev.CardRevealed: _card_revealed,
    ev.AstronautPlaced: _astronaut_placed,
    ev.EventDeckShuffled: _event_deck_shuffled,
    ev.PhaseBegan: _phase_began,
    ev.AstronautMoved: _astronaut_moved,
    ev.FuelTankLocated: _fuel_tank_located,
    ev.FuelTankCollected: _fuel_tank_collected,
    ev.MovementEnded: _unchanged,
    ev.EventCardsDrawn: _event_cards_drawn,
    ev.EventApplied: _event_applied,
    ev.EventsDiscarded: _events_discarded,
    ev.EquipmentKept: _equipment_kept,
    ev.HandCheckBegan: _hand_check_began,
    ev.EquipmentDiscarded: _equipment_discarded,
    ev.PairSpent: _pair_spent,
    ev.ShelterEntered: _shelter_entered,
    ev.JetpackFlown: _jetpack_flown,
    ev.SolarRecharged: _solar_recharged,
    ev.UplinkActivated: _uplink_activated,
    ev.UplinkCardsDrawn: _uplink_cards_drawn,
    ev.UplinkArranged: _uplink_arranged,
    ev.SystemsChecked: _unchanged,
    ev.GameWon: _game_won,
    ev.GameLost: _game_lost,
}
