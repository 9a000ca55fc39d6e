"""What a viewer may see. Unexplored map cards never appear; a spectator (viewer ``None``)
sees only the sizes of the hand and of the uplink's known cards, and of a phase-2 draw only
its event cards (the equipment went to the hidden hand)."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Axis, MapKind, Phase, Position, System
from services.games.crashland.rules import next_step, spaceship_position
from services.games.crashland.state import CrashlandState
from services.games.frozen import quick_init, reused
from services.games.identity import ByIdentity


@reused  # card_view makes each card's face once
@quick_init
@dataclass(frozen=True)
class CardView:
    """An event or equipment card's face. ``kind`` is "event" or the equipment kind."""

    card: str
    kind: str
    number: int | None
    system: System | None
    loss: int | None


@reused  # _cell makes each cell's look once
@quick_init
@dataclass(frozen=True)
class CellView:
    position: Position
    explored: bool
    card: str | None
    kind: MapKind | None
    beacon_number: int | None
    beacon_axis: Axis | None
    #: a located fuel tank still lying here (known from the beacons even if unexplored)
    tank: int | None
    astronaut: bool


@quick_init
@dataclass(frozen=True)
class TankView:
    number: int
    position: Position | None
    collected: bool


@quick_init
@dataclass(frozen=True)
class CrashlandView:
    viewer: str | None
    player: str | None
    phase: Phase
    turn: int
    #: "movement", "events", "systems_check", "arrange_uplink", "chance", "over", "setup"
    awaiting: str
    rows: int
    columns: int
    cells: tuple[CellView, ...]
    astronaut: Position | None
    spaceship: Position | None
    oxygen: int
    battery: int
    max_level: int
    tanks: tuple[TankView, ...]
    hand: tuple[CardView, ...]
    hand_size: int
    uplink_cards: tuple[CardView, ...]
    uplink_size: int
    arranging: int
    draw_pile_size: int
    discard_pile: tuple[CardView, ...]
    cards_moved: int
    free_cards_left: int
    last_drawn: tuple[CardView, ...]
    applied_event: CardView | None
    result: str | None
    end_reason: str


def card_view(card: str) -> CardView:
    found = _CARDS.get(card)
    if found is None:
        found = _CARDS[card] = _card_view(card)
    return found


def _card_view(card: str) -> CardView:
    if card in CONTENT.event_cards:
        event = CONTENT.event_cards[card]
        return CardView(card, "event", event.number, event.system, event.loss)
    return CardView(card, CONTENT.equipment_cards[card].kind.value, None, None, None)


#: each card's face, made once (the deck is fixed): views share them
_CARDS: dict[str, CardView] = {}


def _card_views(cards: tuple[str, ...]) -> tuple[CardView, ...]:
    """The faces of ``cards``, kept while the same tuple is shown (a hand, the uplink, the
    discard pile or the last draw changes on few folds)."""
    faces = _CARD_TUPLES.get(cards, None)
    if faces is None:
        faces = _CARD_TUPLES.put(cards, tuple([card_view(c) for c in cards]))
    return faces


#: What the view drew, by the identity of the state's part it came from: one entry per
#: part, so the views of many matches drawn in turn (a gateway's) each find their own.
_KEPT = 256

#: per card tuple shown: its faces
_CARD_TUPLES: ByIdentity[tuple[CardView, ...]] = ByIdentity(_KEPT)

#: per phase-2 draw: its event cards
_EVENTS_DRAWN: ByIdentity[tuple[str, ...]] = ByIdentity(_KEPT)


def _events_drawn(drawn: tuple[str, ...]) -> tuple[str, ...]:
    """Of a phase-2 draw, the event cards (what a spectator sees of it)."""
    events = _EVENTS_DRAWN.get(drawn, None)
    if events is None:
        events = _EVENTS_DRAWN.put(drawn, tuple(c for c in drawn if c in CONTENT.event_cards))
    return events


#: the map's cells, row by row
_POSITIONS = tuple(Position(r, c) for r in range(CONTENT.rows) for c in range(CONTENT.columns))


#: each cell's place in ``_POSITIONS`` by (row, column)
_PLACES = {(p.row, p.column): i for i, p in enumerate(_POSITIONS)}


def _index(position: Position | None) -> int:
    """The cell's place in ``_POSITIONS`` (-1: none, or off the map)."""
    if position is None:
        return -1
    return _PLACES.get((position.row, position.column), -1)


#: a cell as shown, by (its index, the card shown or None, the tank lying there, the
#: astronaut there): at most 30 x 31 x 4 x 2 of them. Unchanged cells are the same objects
#: from view to view, which spares building them and lets a replay see at once what did not
#: change.
_CELLS: dict[tuple[int, str | None, int | None, bool], CellView] = {}


def _cell(index: int, card: str | None, tank: int | None, here: bool) -> CellView:
    key = (index, card, tank, here)
    found = _CELLS.get(key)
    if found is None:
        position = _POSITIONS[index]
        if card is None:
            found = CellView(position, False, None, None, None, None, tank, here)
        else:
            shown = CONTENT.map_cards[card]
            found = CellView(
                position, True, shown.id, shown.kind, shown.number, shown.axis, tank, here
            )
        _CELLS[key] = found
    return found


@quick_init
@dataclass(frozen=True)
class _Map:
    """The last cells drawn and what they were drawn from (compared by identity: states
    are immutable and share what a fold did not change)."""

    grid: tuple[str, ...]
    explored: frozenset[Position]
    located: dict[int, Position]
    collected: tuple[int, ...]
    astronaut: Position | None
    #: per cell: the card shown (None: unexplored) and the tank lying there
    shown: tuple[tuple[str | None, int | None], ...]
    cells: tuple[CellView, ...]


#: per grid (one a match): the match's map last drawn
_MAPS: ByIdentity[_Map] = ByIdentity(_KEPT)


def _lying_tanks(state: CrashlandState) -> dict[int, int]:
    """Where (the cell's index) each located tank still lies (the lowest number, should
    two share a cell)."""
    lying: dict[int, int] = {}
    for number, position in sorted(state.located.items()):
        if number not in state.collected:
            lying.setdefault(_index(position), number)
    return lying


def _cells(state: CrashlandState) -> tuple[CellView, ...]:
    """The map's cells as shown; only the cells the astronaut left and entered, and those
    newly explored, are drawn again when nothing else changed since the last view."""
    grid, explored, located = state.grid, state.explored, state.located
    last = _MAPS.get(grid, None)
    collected, astronaut = state.collected, state.astronaut
    if (
        last is not None
        and last.located is located
        and last.collected is collected
        and (last.explored is explored or last.explored < explored)
    ):
        moved = not (last.astronaut is astronaut or last.astronaut == astronaut)
        if last.explored is explored and not moved:
            return last.cells
        shown = last.shown
        cells = list(last.cells)
        here = _index(astronaut)
        again = {_index(last.astronaut), here}
        if last.explored is not explored:  # a move explores the cells it reveals
            listed = list(shown)
            for position in explored - last.explored:
                index = _index(position)
                if index >= 0:
                    listed[index] = (grid[index], shown[index][1])
                    again.add(index)
            shown = tuple(listed)
        for index in again:
            if index >= 0:
                card, tank = shown[index]
                cells[index] = _cell(index, card, tank, index == here)
        drawn = tuple(cells)
    else:
        lying = _lying_tanks(state)
        seen = {_PLACES.get((p.row, p.column)) for p in explored}
        shown = tuple(
            (grid[index] if index in seen else None, lying.get(index))
            for index in range(len(_POSITIONS))
        )
        here = _index(astronaut)
        drawn = tuple(
            [_cell(index, card, tank, index == here) for index, (card, tank) in enumerate(shown)]
        )
    _MAPS.put(grid, _Map(grid, explored, located, collected, astronaut, shown, drawn))
    return drawn


#: per located tanks: (the collected ones, the tanks as shown)
_TANKS: ByIdentity[tuple[tuple[int, ...], tuple[TankView, ...]]] = ByIdentity(_KEPT)


def _tanks(state: CrashlandState) -> tuple[TankView, ...]:
    located, collected = state.located, state.collected
    kept = _TANKS.get(located, None)
    if kept is not None and kept[0] is collected:
        return kept[1]
    tanks = tuple(TankView(n, located.get(n), n in collected) for n in CONTENT.tank_numbers)
    _TANKS.put(located, (collected, tanks))
    return tanks


#: per grid: the spaceship's position
_SPACESHIPS: ByIdentity[Position | None] = ByIdentity(_KEPT)
_UNKNOWN = Position(-1, -1)


def _spaceship(state: CrashlandState) -> Position | None:
    found = _SPACESHIPS.get(state.grid, _UNKNOWN)
    if found is _UNKNOWN:
        found = _SPACESHIPS.put(state.grid, spaceship_position(state))
    return found


def _awaiting(state: CrashlandState) -> str:
    step = next_step(state)
    if isinstance(step, Finished):
        return "over"
    if isinstance(step, AwaitingChance):
        return "chance"
    assert isinstance(step, AwaitingPlayers)
    return step.phase


def view(state: CrashlandState, viewer: str | None) -> CrashlandView:
    is_player = viewer is not None and viewer == state.player
    dealt = bool(state.grid)
    drawn = state.drawn if is_player else _events_drawn(state.drawn)
    # by position, in the order of the fields (the reference test checks them): matching
    # 28 keywords cost ~2 µs a view, a twentieth of a replay step
    return CrashlandView(
        viewer,  # viewer
        state.player,  # player
        state.phase,  # phase
        state.turn,  # turn
        _awaiting(state),  # awaiting
        CONTENT.rows,  # rows
        CONTENT.columns,  # columns
        _cells(state) if dealt else (),  # cells
        state.astronaut,  # astronaut
        _spaceship(state),  # spaceship
        state.oxygen,  # oxygen
        state.battery,  # battery
        CONTENT.max_level,  # max_level
        _tanks(state),  # tanks
        _card_views(state.hand) if is_player else (),  # hand
        len(state.hand),  # hand_size
        _card_views(state.known_top) if is_player else (),  # uplink_cards
        len(state.known_top),  # uplink_size
        state.uplink_count,  # arranging
        state.draw_pile + len(state.known_top),  # draw_pile_size
        _card_views(state.discard),  # discard_pile
        state.cards_moved,  # cards_moved
        max(0, CONTENT.free_cards - state.cards_moved),  # free_cards_left
        _card_views(drawn),  # last_drawn
        card_view(state.applied_event) if state.applied_event else None,  # applied_event
        state.result,  # result
        state.end_reason,  # end_reason
    )
