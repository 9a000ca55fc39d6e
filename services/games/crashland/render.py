"""A legible text board for the terminal, drawn from a view (so it never shows secrets)."""

from __future__ import annotations

from services.games.crashland.model import Axis, MapKind
from services.games.crashland.view import CardView, CellView, CrashlandView

LEGEND = (
    "@ astronaut  SHP spaceship  DOM dome shelter  B1| / B1- beacon 1 up-down / left-right"
    "  ... plain  ??? unexplored  *2 fuel tank 2 located here"
)

_BASE = {MapKind.SPACESHIP: "SHP", MapKind.DOME: "DOM", MapKind.PLAIN: "..."}


def _cell(cell: CellView) -> str:
    if not cell.explored or cell.kind is None:
        base = "???"
    elif cell.kind is MapKind.BEACON:
        base = f"B{cell.beacon_number}{'|' if cell.beacon_axis is Axis.VERTICAL else '-'}"
    else:
        base = _BASE[cell.kind]
    tank = f"*{cell.tank}" if cell.tank is not None else "  "
    return f"{'@' if cell.astronaut else ' '}{base}{tank}"


def _track(name: str, level: int, maximum: int) -> str:
    return f"{name:<8}[{'#' * level}{'.' * (maximum - level)}] {level}/{maximum}"


def _card(card: CardView) -> str:
    if card.kind == "event":
        system = card.system.value if card.system else "?"
        return f"event {card.number} (-{card.loss} {system})"
    return card.kind.replace("_", " ")


def render(view: CrashlandView) -> str:
    lines = [
        f"Crashland - turn {view.turn}, {view.phase.value.replace('_', ' ')} phase"
        f" (waiting for: {view.awaiting.replace('_', ' ')})"
    ]
    if view.result:
        lines.append(f"GAME {view.result.upper()}: {view.end_reason}")
    lines.append(_track("Oxygen", view.oxygen, view.max_level))
    lines.append(_track("Battery", view.battery, view.max_level))
    tanks = []
    for tank in view.tanks:
        if tank.collected:
            tanks.append(f"{tank.number}: on board")
        elif tank.position is not None:
            tanks.append(f"{tank.number}: at ({tank.position.row},{tank.position.column})")
        else:
            tanks.append(f"{tank.number}: not located")
    lines.append("Fuel tanks  " + ", ".join(tanks))
    if view.cells:
        lines.append("     " + "".join(f"   {c}   " for c in range(view.columns)))
        for row in range(view.rows):
            cells = view.cells[row * view.columns : (row + 1) * view.columns]
            lines.append(f"  {row}  " + "|".join(_cell(c) for c in cells))
        lines.append(LEGEND)
    lines.append(f"Moved {view.cards_moved} card(s) this turn, {view.free_cards_left} free left")
    if view.hand or not view.hand_size:
        lines.append("Hand: " + (", ".join(_card(c) for c in view.hand) or "empty"))
    else:
        lines.append(f"Hand: {view.hand_size} card(s)")
    if view.uplink_cards:
        lines.append("Top of deck (uplink): " + ", ".join(_card(c) for c in view.uplink_cards))
    elif view.uplink_size:
        lines.append(f"Top of deck: {view.uplink_size} card(s) known to the player")
    lines.append(f"Draw pile {view.draw_pile_size}, discard pile {len(view.discard_pile)}")
    if view.last_drawn:
        lines.append("Last drawn: " + ", ".join(_card(c) for c in view.last_drawn))
    if view.applied_event:
        lines.append("Event applied: " + _card(view.applied_event))
    return "\n".join(lines)
