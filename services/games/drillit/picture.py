"""The Drillit! view drawn as an SVG document: the Tank (the centre and the five rooms in a
ring, each with its Gnomes, Fires and Armor) with the radar sectors fanning out behind the
rooms, the hex tunnel map (Tank, Path pieces with their openings, abysses, the Exit piece
and the other exit option Plan B would move it to), the Life Track, crystals, the Event
card in force and the players.

Drawn from the view alone; every coloured piece also carries a text label, clickable
pieces carry a stable ``id`` and a ``<title>``. ElementTree does the escaping and keeps
attribute order, so the same view always gives the same bytes."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

from services.games.drillit.hexgrid import Hex, disc
from services.games.drillit.view import (
    DrillitPlayerView,
    DrillitRoomView,
    DrillitTileView,
    DrillitView,
)
from services.games.svg import element, titled_group

WIDTH = 1120
TANK_CENTRE = (300.0, 335.0)
ROOM_RING = 105.0
ROOM_W, ROOM_H = 92, 60
RADAR_RING = 211.0
RADAR_STEP = 34.0
HEX = 12.0
MAP_CENTRE = (850.0, 335.0)
INFO_TOP = 600
FONT = "sans-serif"

BACKGROUND = "#20232a"
ROOM_FILL = "#b0a18a"
CENTRE_FILL = "#8a7a63"
FIRE = "#e8590c"
ARMOR_OK = "#2f9e44"
ARMOR_BROKEN = "#c92a2a"
RADAR_SPACE = "#495057"
RADAR_BLUE = "#1c7ed6"
GOBLIN = "#66a80f"
GNOME = "#f8f9fa"
ROCK = "#d8cbb5"
TANK_HEX = "#868e96"
ABYSS = "#000000"
EXIT = "#37b24d"
CRYSTAL_FILL = {"blue": "#339af0", "red": "#f03e3e", "yellow": "#fcc419"}
PERMANENT = "#862e9c"
TEMPORARY = "#f76707"
EMPTY = "#343a40"


def _text(
    parent: ET.Element, x: float, y: float, text: str, size: int = 11, fill: str = "#111"
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


def _polar(radius: float, room: int) -> tuple[float, float]:
    """Room n (1..5) points at -90° + 72°·(n-1) from the Tank's centre (room 1 on top)."""
    angle = math.radians(-90 + 72 * (room - 1))
    return TANK_CENTRE[0] + radius * math.cos(angle), TANK_CENTRE[1] + radius * math.sin(angle)


def room_centre(room: int) -> tuple[float, float]:
    return TANK_CENTRE if room == 0 else _polar(ROOM_RING, room)


def radar_centre(sector: int, space: int) -> tuple[float, float]:
    """Space 1 touches the Armor; the last (blue) one is the outermost."""
    return _polar(RADAR_RING + (space - 1) * RADAR_STEP, sector)


def _room(svg: ET.Element, room: DrillitRoomView) -> None:
    name = "centre" if room.room == 0 else f"room {room.room}"
    armor = "" if room.room == 0 else (", armor intact" if room.armor_intact else ", ARMOR BROKEN")
    gnomes = ", ".join(room.gnomes) or "nobody"
    title = f"{name}: {gnomes}, {room.fires} fire(s){armor}, {room.goblins_inside} goblin(s) inside"
    group = titled_group(svg, f"room-{room.room}", title)
    x, y = room_centre(room.room)
    fill = CENTRE_FILL if room.room == 0 else ROOM_FILL
    element(
        group,
        "rect",
        x=x - ROOM_W / 2,
        y=y - ROOM_H / 2,
        width=ROOM_W,
        height=ROOM_H,
        rx=6,
        fill=fill,
        stroke="#000",
    )
    _text(group, x, y - 16, name.upper())
    for i, gnome in enumerate(room.gnomes):
        element(group, "circle", cx=x - 30 + 28 * i, cy=y + 4, r=9, fill=GNOME, stroke="#000")
        _text(group, x - 30 + 28 * i, y + 8, gnome[:2], 9)
    for i in range(room.fires):
        fx, fy = fire_origin(room.room, i)
        element(group, "rect", x=fx, y=fy, width=14, height=14, fill=FIRE, stroke="#000")
        _text(group, fx + 7, fy + 11, "F", 10)
    if room.goblins_inside:
        _text(group, x + 30, y + 8, f"{room.goblins_inside}g", 11, "#2b8a3e")
    if room.room:
        ax, ay = armor_centre(room.room)
        fill = ARMOR_OK if room.armor_intact else ARMOR_BROKEN
        group = titled_group(svg, f"armor-{room.room}", f"armor of room {room.room}{armor}")
        element(group, "rect", x=ax - 16, y=ay - 7, width=32, height=14, fill=fill, stroke="#000")
        _text(group, ax, ay + 4, "ARM" if room.armor_intact else "X", 9, "#fff")


def armor_centre(room: int) -> tuple[float, float]:
    """Just outside the room's rectangle, on the ray from the Tank's centre."""
    angle = math.radians(-90 + 72 * (room - 1))
    cos, sin = abs(math.cos(angle)), abs(math.sin(angle))
    leave = min(ROOM_W / 2 / cos if cos else math.inf, ROOM_H / 2 / sin if sin else math.inf)
    return _polar(ROOM_RING + leave + 16 * cos + 7 * sin + 3, room)


def fire_origin(room: int, index: int) -> tuple[float, float]:
    x, y = room_centre(room)
    return x - ROOM_W / 2 + 6 + 18 * index, y + ROOM_H / 2 - 18


def _radar(svg: ET.Element, view: DrillitView) -> None:
    for sector in view.radar:
        for i, goblins in enumerate(sector.spaces):
            space = i + 1
            title = f"sector {sector.sector}, space {space}: {goblins} goblin(s)"
            group = titled_group(svg, f"radar-{sector.sector}-{space}", title)
            x, y = radar_centre(sector.sector, space)
            fill = RADAR_BLUE if space == len(sector.spaces) else RADAR_SPACE
            element(group, "circle", cx=x, cy=y, r=17, fill=fill, stroke="#000")
            if goblins:
                element(group, "circle", cx=x, cy=y, r=11, fill=GOBLIN, stroke="#000")
            _text(group, x, y + 4, f"{goblins}g" if goblins else str(space), 10, "#fff")


def hex_centre(cell: Hex) -> tuple[float, float]:
    """Pointy-top hexes: axial east is +x, axial r grows downwards."""
    x = MAP_CENTRE[0] + HEX * math.sqrt(3) * (cell.q + cell.r / 2)
    return x, MAP_CENTRE[1] + HEX * 1.5 * cell.r


def _hex_points(x: float, y: float, size: float = HEX) -> str:
    corners = (math.radians(30 + 60 * k) for k in range(6))
    return " ".join(f"{x + size * math.cos(a):.1f},{y + size * math.sin(a):.1f}" for a in corners)


def _openings(
    group: ET.Element, x: float, y: float, openings: tuple[int, ...], size: float
) -> None:
    """A tunnel line from the centre to the middle of each open edge (screen y points down)."""
    for d in openings:
        a = math.radians(-60 * d)
        x2, y2 = x + size * 0.86 * math.cos(a), y + size * 0.86 * math.sin(a)
        element(group, "line", x1=x, y1=y, x2=x2, y2=y2, stroke="#222", stroke_width=3)


def _hex_look(
    view: DrillitView, cell: Hex, tiles: dict[Hex, DrillitTileView]
) -> tuple[str, str, str]:
    """Fill, label and title of one map cell."""
    if cell in view.tank_cells:
        return TANK_HEX, "T", "the Tank"
    if cell == view.exit_piece:
        return EXIT, "EX", f"the Exit piece (exit option {view.exit_option})"
    if cell in view.exits:
        if view.plan_b_option is None:
            return ROCK, "e", "the other exit option"
        return (
            ROCK,
            "B",
            f"the other exit option: Plan B moves the Exit here ({view.plan_b_option})",
        )
    if cell in view.abysses:
        return ABYSS, "X", "an abyss"
    if cell in tiles:
        tile = tiles[cell]
        title = f"Path piece {tile.piece} ({tile.crystal} crystal)"
        return CRYSTAL_FILL.get(tile.crystal, ROCK), tile.crystal[:1], title
    return ROCK, "", "rock"


def _tunnels(svg: ET.Element, view: DrillitView) -> None:
    tiles = {t.cell: t for t in view.tiles}
    for cell in disc(view.map_radius):
        fill, text, title = _hex_look(view, cell, tiles)
        group = titled_group(svg, f"hex-{cell.q}-{cell.r}", f"({cell.q},{cell.r}): {title}")
        x, y = hex_centre(cell)
        element(
            group, "polygon", points=_hex_points(x, y), fill=fill, stroke="#555", stroke_width=0.6
        )
        if cell in tiles:
            _openings(group, x, y, tiles[cell].openings, HEX)
        if text:
            _text(group, x, y + 3, text, 8, "#fff" if fill in (ABYSS, TANK_HEX) else "#111")


def life_box(index: int) -> tuple[int, int]:
    return 20 + index * 30, INFO_TOP + 10


def _life(svg: ET.Element, view: DrillitView) -> None:
    used = view.permanent_damage + view.temporary_damage
    title = (
        f"Life Track: {view.permanent_damage} permanent, {view.temporary_damage} temporary"
        f" damage of {view.life_track}"
    )
    group = titled_group(svg, "life-track", title)
    for i in range(view.life_track):
        x, y = life_box(i)
        fill, text = EMPTY, str(i + 1)
        if i < view.permanent_damage:
            fill, text = PERMANENT, "P"
        elif i < used:
            fill, text = TEMPORARY, "T"
        element(group, "rect", x=x, y=y, width=24, height=24, fill=fill, stroke="#aaa")
        _text(group, x + 12, y + 16, text, 11, "#fff")


def crystal_box(index: int) -> tuple[int, int]:
    return 200 + index * 90, INFO_TOP + 10


def _crystals(svg: ET.Element, view: DrillitView) -> None:
    for i, (colour, fill) in enumerate(CRYSTAL_FILL.items()):
        count = view.crystals.get(colour, 0)
        title = f"{count} {colour} crystal(s) of {view.storage_limit}"
        group = titled_group(svg, f"crystal-{colour}", title)
        x, y = crystal_box(i)
        element(group, "rect", x=x, y=y, width=24, height=24, fill=fill, stroke="#000")
        _text(group, x + 12, y + 17, colour[:1])
        _line(group, x + 30, y + 17, f"{count}/{view.storage_limit}", 12)


def _texts(svg: ET.Element, view: DrillitView) -> None:
    head = f"Drillit! - {view.phase}, turn {view.turn}, {view.difficulty}/{view.distance}"
    active = f"; {view.active} to play, {view.action_points} AP" if view.active else ""
    result = f"; {view.result.upper()}: {view.end_reason}" if view.result else ""
    _line(svg, 20, 26, head + active + result, 15)
    plan_b = f"Plan B to option {view.plan_b_option}" if view.plan_b_option else "no Plan B"
    exits = f"Exit option {view.exit_option}, {plan_b}; {view.abysses_found} abyss(es) found"
    piles = f"event deck {view.event_deck_size}, path pile {view.path_pile_size}"
    _line(svg, 20, INFO_TOP + 60, f"{exits}; attack box {view.lightest_attack_box}; {piles}", 12)
    card = view.current_event
    if card is not None:
        subs = (
            f"goblins advance {card.goblin_advance}, fires {card.fire_intensification},"
            f" overheating {card.overheating}"
        )
        text = f"Event {card.card}: {subs}, {card.main_event}, attack {'/'.join(card.attack)}"
        _line(svg, 20, INFO_TOP + 80, text, 12)
    for i, p in enumerate(view.players):
        _player(svg, i, p, INFO_TOP + 104 + 22 * i)


def _player(svg: ET.Element, index: int, p: DrillitPlayerView, y: float) -> None:
    """One line per player, led by the Path piece in hand as printed (unturned)."""
    piece = "no piece"
    if p.path_piece is not None:
        piece = f"{p.path_piece.piece} {p.path_piece.shape} ({p.path_piece.crystal})"
    where = "not in the Tank" if p.room is None else f"room {p.room}"
    text = f"{p.player} ({p.character or '?'}): {where}, {piece}"
    group = titled_group(svg, f"player-{index}", text)
    if p.path_piece is not None:
        fill = CRYSTAL_FILL.get(p.path_piece.crystal, ROCK)
        element(group, "polygon", points=_hex_points(28, y - 4, 9.0), fill=fill, stroke="#000")
        _openings(group, 28, y - 4, p.path_piece.openings, 9.0)
    _line(group, 44, y, text, 12)


def draw(view: DrillitView) -> str:
    height = INFO_TOP + 110 + 22 * len(view.players)
    box = {"width": str(WIDTH), "height": str(height), "viewBox": f"0 0 {WIDTH} {height}"}
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1", **box})
    element(svg, "title", f"Drillit! {view.phase}, turn {view.turn}")
    element(svg, "rect", width=WIDTH, height=height, fill=BACKGROUND)
    _radar(svg, view)
    for room in view.rooms:
        _room(svg, room)
    _tunnels(svg, view)
    _life(svg, view)
    _crystals(svg, view)
    _texts(svg, view)
    return ET.tostring(svg, encoding="unicode")
