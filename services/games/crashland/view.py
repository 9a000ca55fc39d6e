"""What a viewer may see. Unexplored map cards never appear; a spectator (viewer ``None``)
sees only the sizes of the hand and of the uplink's known cards, and of a phase-2 draw only
its event cards (the equipment went to the hidden hand)."""

from __future__ import annotations

import functools
from dataclasses import dataclass

from services.games.contract import AwaitingChance, AwaitingPlayers, Finished
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Axis, MapKind, Phase, Position, System
from services.games.crashland.rules import next_step, spaceship_position
from services.games.crashland.state import CrashlandState


@dataclass(frozen=True)
class CardView:
    """An event or equipment card's face. ``kind`` is "event" or the equipment kind."""

    card: str
    kind: str
    number: int | None
    system: System | None
    loss: int | None


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


@dataclass(frozen=True)
class TankView:
    number: int
    position: Position | None
    collected: bool


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
    if card in CONTENT.event_cards:
        event = CONTENT.event_cards[card]
        return CardView(card, "event", event.number, event.system, event.loss)
    return CardView(card, CONTENT.equipment_cards[card].kind.value, None, None, None)


def _lying_tanks(state: CrashlandState) -> dict[Position, int]:
    """Where each located tank still lies (the lowest number, should two share a cell)."""
    lying: dict[Position, int] = {}
    for number, position in sorted(state.located.items()):
        if number not in state.collected:
            lying.setdefault(position, number)
    return lying


#: the map's cells, row by row
_POSITIONS = tuple(Position(r, c) for r in range(CONTENT.rows) for c in range(CONTENT.columns))


def _cell(state: CrashlandState, position: Position, lying: dict[Position, int]) -> CellView:
    card = state.card_at(position) if position in state.explored else None
    return _cell_view(position, card, lying.get(position), state.astronaut == position)


@functools.lru_cache(maxsize=4096)
def _cell_view(position: Position, card: str | None, tank: int | None, here: bool) -> CellView:
    """One cell as shown (kept: a view's unchanged cells are the same objects step to step,
    which spares building them and lets a replay see at once what did not change)."""
    if card is None:
        return CellView(position, False, None, None, None, None, tank, here)
    shown = CONTENT.map_cards[card]
    return CellView(position, True, shown.id, shown.kind, shown.number, shown.axis, tank, here)


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
    lying = _lying_tanks(state)
    cells = tuple(_cell(state, position, lying) for position in _POSITIONS)
    drawn = state.drawn if is_player else tuple(c for c in state.drawn if c in CONTENT.event_cards)
    return CrashlandView(
        viewer=viewer,
        player=state.player,
        phase=state.phase,
        turn=state.turn,
        awaiting=_awaiting(state),
        rows=CONTENT.rows,
        columns=CONTENT.columns,
        cells=cells if dealt else (),
        astronaut=state.astronaut,
        spaceship=spaceship_position(state),
        oxygen=state.oxygen,
        battery=state.battery,
        max_level=CONTENT.max_level,
        tanks=tuple(
            TankView(n, state.located.get(n), n in state.collected) for n in CONTENT.tank_numbers
        ),
        hand=tuple(card_view(c) for c in state.hand) if is_player else (),
        hand_size=len(state.hand),
        uplink_cards=tuple(card_view(c) for c in state.known_top) if is_player else (),
        uplink_size=len(state.known_top),
        arranging=state.uplink_count,
        draw_pile_size=state.draw_pile + len(state.known_top),
        discard_pile=tuple(card_view(c) for c in state.discard),
        cards_moved=state.cards_moved,
        free_cards_left=max(0, CONTENT.free_cards - state.cards_moved),
        last_drawn=tuple(card_view(c) for c in drawn),
        applied_event=card_view(state.applied_event) if state.applied_event else None,
        result=state.result,
        end_reason=state.end_reason,
    )
