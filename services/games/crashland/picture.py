"""The Crashland view drawn as an SVG document: the map grid (face-down cards grey with a
"?"), the astronaut, located fuel tanks, the Oxygen and Battery tracks, the fuel tanks'
whereabouts, the hand (backs when the viewer may not see it) and the deck's state.

Drawn from the view alone, so nothing hidden can leak; every coloured piece also carries
a text label, clickable pieces carry a stable ``id`` and a ``<title>``. ElementTree does the
escaping and keeps attribute order, so the same view always gives the same bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable

from services.games.crashland.model import Axis, MapKind
from services.games.crashland.view import CardView, CellView, CrashlandView
from services.games.svg import element, titled_group

WIDTH = 600
MARGIN = 20
GRID_TOP = 70
CELL_W = 90
CELL_H = 60
CARD_W = 92
CARD_H = 50
PIP = 24
TANK_W = 26
FONT = "sans-serif"

UNEXPLORED = "#5a606b"
KIND_FILL = {
    MapKind.SPACESHIP: "#c0392b",
    MapKind.DOME: "#2e86c1",
    MapKind.BEACON: "#e69b22",
    MapKind.PLAIN: "#9cbf8a",
}
KIND_LABEL = {
    MapKind.SPACESHIP: "SHIP",
    MapKind.DOME: "DOME",
    MapKind.BEACON: "BEACON",
    MapKind.PLAIN: "plain",
}
ASTRONAUT = "#ffffff"
TANK = "#8e44ad"
TRACK_FILL = {"oxygen": "#3fa9f5", "battery": "#f1c40f"}
EMPTY = "#2b2f36"
CARD_BACK = "#34495e"
CARD_FACE = "#f4ecd8"
BACKGROUND = "#1b1e24"


def _label(
    parent: ET.Element, x: float, y: float, text: str, size: int = 12, fill: str = "#111"
) -> None:
    element(
        parent,
        "text",
        text,
        x=x,
        y=y,
        font_size=size,
        font_family=FONT,
        fill=fill,
        text_anchor="middle",
    )


def _line(svg: ET.Element, x: float, y: float, text: str, size: int = 13) -> None:
    element(svg, "text", text, x=x, y=y, font_size=size, font_family=FONT, fill="#eee")


def cell_id(row: int, column: int) -> str:
    return f"cell-{row}-{column}"


def hand_id(index: int) -> str:
    return f"hand-{index}"


def uplink_id(index: int) -> str:
    return f"uplink-{index}"


def cell_origin(row: int, column: int) -> tuple[int, int]:
    """Top-left corner of a map card's rectangle."""
    return MARGIN + column * CELL_W, GRID_TOP + row * CELL_H


def tank_origin(row: int, column: int) -> tuple[int, int]:
    """Top-left corner of a located fuel tank's token (bottom right of its card)."""
    x, y = cell_origin(row, column)
    return x + CELL_W - TANK_W - 6, y + CELL_H - 24


def _cell_text(cell: CellView) -> tuple[str, str, str]:
    """Fill, label and second label line of a map card."""
    if not cell.explored or cell.kind is None:
        return UNEXPLORED, "?", ""
    if cell.kind is MapKind.BEACON:
        arrow = "up-down" if cell.beacon_axis is Axis.VERTICAL else "left-right"
        return KIND_FILL[cell.kind], f"BEACON {cell.beacon_number}", arrow
    return KIND_FILL[cell.kind], KIND_LABEL[cell.kind], ""


def _cell(svg: ET.Element, cell: CellView) -> None:
    row, column = cell.position.row, cell.position.column
    fill, text, sub = _cell_text(cell)
    title = (
        f"row {row}, column {column}: {text} {sub} ({'face up' if cell.explored else 'face down'})"
    )
    title += ", astronaut here" if cell.astronaut else ""
    title += f", fuel tank {cell.tank}" if cell.tank is not None else ""
    group = titled_group(svg, cell_id(row, column), title)
    x, y = cell_origin(row, column)
    element(
        group,
        "rect",
        x=x + 2,
        y=y + 2,
        width=CELL_W - 4,
        height=CELL_H - 4,
        rx=4,
        fill=fill,
        stroke="#000",
    )
    _label(group, x + CELL_W / 2, y + 20, text, 14, "#111" if cell.explored else "#fff")
    if sub:
        _label(group, x + CELL_W / 2, y + 35, sub, 12)
    if cell.astronaut:
        element(group, "circle", cx=x + 17, cy=y + CELL_H - 17, r=12, fill=ASTRONAUT, stroke="#000")
        _label(group, x + 17, y + CELL_H - 12.5, "A", 13)
    if cell.tank is not None:
        tx, ty = tank_origin(row, column)
        element(group, "rect", x=tx, y=ty, width=TANK_W, height=18, fill=TANK, stroke="#000")
        _label(group, tx + TANK_W / 2, ty + 14, f"T{cell.tank}", 12, "#fff")


def track_box(system: str, index: int, top: int) -> tuple[int, int]:
    row = 0 if system == "oxygen" else 1
    return MARGIN + 90 + index * (PIP + 4), top + row * (PIP + 8)


def _tracks(svg: ET.Element, view: CrashlandView, top: int) -> None:
    for system, level in (("oxygen", view.oxygen), ("battery", view.battery)):
        name = system.capitalize()
        group = titled_group(svg, f"track-{system}", f"{name} {level} of {view.max_level}")
        _line(group, MARGIN, track_box(system, 0, top)[1] + 16, f"{name} {level}/{view.max_level}")
        for i in range(view.max_level):
            bx, by = track_box(system, i, top)
            fill = TRACK_FILL[system] if i < level else EMPTY
            element(group, "rect", x=bx, y=by, width=PIP, height=PIP, fill=fill, stroke="#888")
            _label(group, bx + PIP / 2, by + 17, str(i + 1), 12, "#111" if i < level else "#999")


def _tanks(svg: ET.Element, view: CrashlandView, top: int) -> None:
    for i, tank in enumerate(view.tanks):
        if tank.collected:
            where = "on board the ship"
        elif tank.position is not None:
            where = f"at row {tank.position.row}, column {tank.position.column}"
        else:
            where = "not located"
        group = titled_group(svg, f"tank-{tank.number}", f"fuel tank {tank.number}: {where}")
        x = MARGIN + i * 190
        fill = TANK if tank.collected else EMPTY
        element(group, "rect", x=x, y=top, width=TANK_W, height=18, fill=fill, stroke="#888")
        _label(group, x + TANK_W / 2, top + 14, f"T{tank.number}", 12, "#fff")
        _line(group, x + TANK_W + 5, top + 14, where, 12)


def card_text(card: CardView) -> str:
    if card.kind == "event":
        system = card.system.value if card.system else "?"
        return f"event {card.number}: -{card.loss} {system}"
    return card.kind.replace("_", " ")


def face_lines(card: CardView) -> tuple[str, str]:
    """A card face's two lines: "Event 3" over "-2 oxygen", "Solar" over "Recharge"."""
    if card.kind == "event":
        system = card.system.value if card.system else "?"
        return f"Event {card.number}", f"-{card.loss} {system}"
    first, _, rest = card.kind.replace("_", " ").title().partition(" ")
    return first, rest


def _cards(
    svg: ET.Element, ident: Callable[[int], str], cards: tuple[CardView, ...], hidden: int, top: int
) -> None:
    """Faces when the viewer may see them, else ``hidden`` backs."""
    faces: list[CardView | None] = [*cards] if cards else [None] * hidden
    for i, card in enumerate(faces):
        group = titled_group(svg, ident(i), card_text(card) if card else "hidden card")
        x = MARGIN + i * (CARD_W + 6)
        fill = CARD_FACE if card is not None else CARD_BACK
        element(
            group, "rect", x=x, y=top, width=CARD_W, height=CARD_H, rx=4, fill=fill, stroke="#000"
        )
        if card is None:
            _label(group, x + CARD_W / 2, top + 30, "?", 14, "#fff")
            continue
        first, second = face_lines(card)
        _label(group, x + CARD_W / 2, top + 21, first, 13)
        if second:
            _label(group, x + CARD_W / 2, top + 39, second, 13)


def _status(view: CrashlandView) -> str:
    head = f"Crashland - turn {view.turn}, {view.phase.value.replace('_', ' ')} phase"
    return f"{head} (waiting for: {view.awaiting.replace('_', ' ')})"


def draw(view: CrashlandView) -> str:
    grid_bottom = GRID_TOP + view.rows * CELL_H
    hand_top = grid_bottom + 150
    uplink_top = hand_top + CARD_H + 30
    bottom = uplink_top + CARD_H + 22
    height = bottom + 60
    box = {"width": str(WIDTH), "height": str(height), "viewBox": f"0 0 {WIDTH} {height}"}
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1", **box})
    element(svg, "title", _status(view))
    element(svg, "rect", width=WIDTH, height=height, fill=BACKGROUND)
    _line(svg, MARGIN, 26, _status(view), 15)
    if view.result:
        _line(svg, MARGIN, 48, f"GAME {view.result.upper()}: {view.end_reason}")
    for cell in view.cells:
        _cell(svg, cell)
    _tracks(svg, view, grid_bottom + 12)
    _tanks(svg, view, grid_bottom + 84)
    _line(svg, MARGIN, hand_top - 8, f"Hand ({view.hand_size})")
    _cards(svg, hand_id, view.hand, view.hand_size, hand_top)
    _line(svg, MARGIN, uplink_top - 8, f"Top of the deck known ({view.uplink_size})")
    _cards(svg, uplink_id, view.uplink_cards, view.uplink_size, uplink_top)
    piles = f"Draw pile {view.draw_pile_size}, discard pile {len(view.discard_pile)}"
    moved = f"moved {view.cards_moved} card(s), {view.free_cards_left} free left"
    _line(svg, MARGIN, bottom, f"{piles}; {moved}")
    drawn = ", ".join(card_text(c) for c in view.last_drawn) or "none"
    applied = card_text(view.applied_event) if view.applied_event else "none"
    _line(svg, MARGIN, bottom + 20, f"Last drawn: {drawn}")
    _line(svg, MARGIN, bottom + 40, f"Event applied: {applied}")
    return ET.tostring(svg, encoding="unicode")
