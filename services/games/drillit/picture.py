"""The Drillit! view drawn as an SVG document: the Tank (the centre and the five rooms in a
ring, each with its Gnomes, Fires and Armor) with the radar sectors fanning out behind the
rooms, the hex tunnel map (Tank, Path pieces with their openings, abysses, the Exit piece
and the other exit option Plan B would move it to), the Life Track, crystals, the Event
card in force and the players.

Drawn from the view alone; every coloured piece also carries a text label, pieces a move
can pick carry a stable ``id`` (``naming.py`` names the moves by them) and a ``<title>``.
Text is 14 units or more, but for the letters on the map's hexes: a hex is a ``zoom``
piece, shown magnified on hover. ElementTree does the escaping and keeps attribute order,
so the same view always gives the same bytes."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from services.games.drillit.hexgrid import Hex, disc
from services.games.drillit.view import (
    DrillitPlayerView,
    DrillitRoomView,
    DrillitTileView,
    DrillitView,
)
from services.games.svg import element, titled_group

TANK_CENTRE = (331.0, 380.0)
ROOM_RING = 108.0
ROOM_W, ROOM_H = 100, 70
RADAR_RING = 226.0
RADAR_STEP = 34.0
RADAR_R = 17.0
#: the tunnel map's left edge and the width its hexes are sized to fill
MAP_LEFT = 660.0
MAP_WIDTH = 420.0
MAP_MIDDLE = TANK_CENTRE[1]
#: the largest hex (a short map's) and the widest picture
MAX_HEX = 14.0
WIDTH = int(MAP_LEFT + MAP_WIDTH + 20)
INFO_TOP = 672
LINE = 24
FONT = "sans-serif"
TEXT = 14

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


# -- the ids moves pick (naming.py) --------------------------------------------------------


def room_id(room: int) -> str:
    return f"room-{room}"


def armor_id(room: int) -> str:
    return f"armor-{room}"


def fires_id(room: int) -> str:
    return f"fires-{room}"


def goblins_inside_id(room: int) -> str:
    return f"goblins-in-{room}"


def sector_id(sector: int) -> str:
    return f"sector-{sector}"


def radar_id(sector: int, space: int) -> str:
    return f"radar-{sector}-{space}"


def hex_id(cell: Hex) -> str:
    return f"hex-{cell.q}-{cell.r}"


def crystal_id(colour: str) -> str:
    return f"crystal-{colour}"


def player_id(index: int) -> str:
    return f"player-{index}"


# -- drawing ---------------------------------------------------------------------------------


def _text(
    parent: ET.Element, x: float, y: float, text: str, size: float = TEXT, fill: str = "#111"
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


def _line(svg: ET.Element, x: float, y: float, text: str, size: int = TEXT) -> None:
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


def gnome_centre(room: int, index: int) -> tuple[float, float]:
    x, y = room_centre(room)
    return x - 28 + 30 * index, y + 2


def _room(svg: ET.Element, room: DrillitRoomView) -> None:
    name = "centre" if room.room == 0 else f"room {room.room}"
    armor = "" if room.room == 0 else (", armor intact" if room.armor_intact else ", ARMOR BROKEN")
    gnomes = ", ".join(room.gnomes) or "nobody"
    title = f"{name}: {gnomes}, {room.fires} fire(s){armor}, {room.goblins_inside} goblin(s) inside"
    group = titled_group(svg, room_id(room.room), title)
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
    _text(group, x, y - 20, name.upper())
    for i, gnome in enumerate(room.gnomes):
        gx, gy = gnome_centre(room.room, i)
        element(group, "circle", cx=gx, cy=gy, r=13, fill=GNOME, stroke="#000")
        _text(group, gx, gy + 4.5, gnome[:2])
    if room.fires:
        fires = titled_group(group, fires_id(room.room), f"{room.fires} Fire(s) in {name}")
        for i in range(room.fires):
            fx, fy = fire_origin(room.room, i)
            element(fires, "rect", x=fx, y=fy, width=18, height=18, fill=FIRE, stroke="#000")
            _text(fires, fx + 9, fy + 14, "F")
    if room.goblins_inside:
        inside = titled_group(
            group, goblins_inside_id(room.room), f"{room.goblins_inside} Goblin(s) inside {name}"
        )
        gx, gy = x + ROOM_W / 2 - 18, y + ROOM_H / 2 - 13
        element(inside, "circle", cx=gx, cy=gy, r=11, fill=GOBLIN, stroke="#000")
        _text(inside, gx, gy + 4.5, f"{room.goblins_inside}g", TEXT, "#fff")
    if room.room:
        ax, ay = armor_centre(room.room)
        fill = ARMOR_OK if room.armor_intact else ARMOR_BROKEN
        group = titled_group(svg, armor_id(room.room), f"armor of room {room.room}{armor}")
        element(group, "rect", x=ax - 20, y=ay - 10, width=40, height=20, fill=fill, stroke="#000")
        _text(group, ax, ay + 4.5, "ARM" if room.armor_intact else "X", TEXT, "#fff")


def armor_centre(room: int) -> tuple[float, float]:
    """Just outside the room's rectangle, on the ray from the Tank's centre."""
    angle = math.radians(-90 + 72 * (room - 1))
    cos, sin = abs(math.cos(angle)), abs(math.sin(angle))
    leave = min(ROOM_W / 2 / cos if cos else math.inf, ROOM_H / 2 / sin if sin else math.inf)
    return _polar(ROOM_RING + leave + 20 * cos + 10 * sin + 2, room)


def fire_origin(room: int, index: int) -> tuple[float, float]:
    x, y = room_centre(room)
    return x - ROOM_W / 2 + 6 + 21 * index, y + ROOM_H / 2 - 21


def _radar(svg: ET.Element, view: DrillitView) -> None:
    for sector in view.radar:
        goblins = sum(sector.spaces)
        fan = titled_group(
            svg, sector_id(sector.sector), f"sector {sector.sector}: {goblins} goblin(s)"
        )
        for i, count in enumerate(sector.spaces):
            space = i + 1
            title = f"sector {sector.sector}, space {space}: {count} goblin(s)"
            group = titled_group(fan, radar_id(sector.sector, space), title)
            x, y = radar_centre(sector.sector, space)
            fill = RADAR_BLUE if space == len(sector.spaces) else RADAR_SPACE
            element(group, "circle", cx=x, cy=y, r=RADAR_R, fill=fill, stroke="#000")
            if count:
                element(group, "circle", cx=x, cy=y, r=12, fill=GOBLIN, stroke="#000")
            _text(group, x, y + 4.5, f"{count}g" if count else str(space), TEXT, "#fff")


@dataclass(frozen=True)
class MapLayout:
    """Where the tunnel map's hexes go: sized so the map fills ``MAP_WIDTH``."""

    size: float
    centre: tuple[float, float]


def map_layout(radius: int) -> MapLayout:
    size = min(MAX_HEX, MAP_WIDTH / (math.sqrt(3) * (2 * radius + 1)))
    return MapLayout(size, (MAP_LEFT + MAP_WIDTH / 2, MAP_MIDDLE))


def hex_centre(cell: Hex, layout: MapLayout) -> tuple[float, float]:
    """Pointy-top hexes: axial east is +x, axial r grows downwards."""
    x = layout.centre[0] + layout.size * math.sqrt(3) * (cell.q + cell.r / 2)
    return x, layout.centre[1] + layout.size * 1.5 * cell.r


def _hex_points(x: float, y: float, size: float) -> str:
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
    layout = map_layout(view.map_radius)
    for cell in disc(view.map_radius):
        fill, text, title = _hex_look(view, cell, tiles)
        group = titled_group(svg, hex_id(cell), f"({cell.q},{cell.r}): {title}")
        group.set("class", "zoom")
        x, y = hex_centre(cell, layout)
        element(
            group,
            "polygon",
            points=_hex_points(x, y, layout.size),
            fill=fill,
            stroke="#555",
            stroke_width=0.6,
        )
        if cell in tiles:
            _openings(group, x, y, tiles[cell].openings, layout.size)
        if text:
            dark = fill in (ABYSS, TANK_HEX)
            size = round(layout.size * 0.75, 1)
            _text(group, x, y + size / 3, text, size, "#fff" if dark else "#111")


def life_box(index: int) -> tuple[int, int]:
    return 20 + index * 32, INFO_TOP + 10


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
        element(group, "rect", x=x, y=y, width=28, height=28, fill=fill, stroke="#aaa")
        _text(group, x + 14, y + 19, text, TEXT, "#fff")


def crystal_box(index: int) -> tuple[int, int]:
    return 220 + index * 110, INFO_TOP + 10


def _crystals(svg: ET.Element, view: DrillitView) -> None:
    for i, (colour, fill) in enumerate(CRYSTAL_FILL.items()):
        count = view.crystals.get(colour, 0)
        title = f"{count} {colour} crystal(s) of {view.storage_limit}"
        group = titled_group(svg, crystal_id(colour), title)
        x, y = crystal_box(i)
        element(group, "rect", x=x, y=y, width=28, height=28, fill=fill, stroke="#000")
        _text(group, x + 14, y + 19, colour[:1])
        _line(group, x + 34, y + 19, f"{count}/{view.storage_limit}")


def _texts(svg: ET.Element, view: DrillitView) -> None:
    head = f"Drillit! - {view.phase}, turn {view.turn}, {view.difficulty}/{view.distance}"
    active = f"; {view.active} to play, {view.action_points} AP" if view.active else ""
    _line(svg, 20, 28, head + active, 16)
    if view.result:
        _line(svg, 20, 52, f"{view.result.upper()}: {view.end_reason}", 15)
    plan_b = f"Plan B to option {view.plan_b_option}" if view.plan_b_option else "no Plan B"
    exits = f"Exit option {view.exit_option}, {plan_b}; {view.abysses_found} abyss(es) found"
    piles = f"event deck {view.event_deck_size}, path pile {view.path_pile_size}"
    _line(svg, 20, INFO_TOP + 66, f"{exits}; attack box {view.lightest_attack_box}; {piles}")
    card = view.current_event
    if card is not None:
        subs = (
            f"goblins advance {card.goblin_advance}, fires {card.fire_intensification},"
            f" overheating {card.overheating}"
        )
        _line(svg, 20, INFO_TOP + 66 + LINE, f"Event {card.card}: {subs},")
        attack = f"{card.main_event}, attack {'/'.join(card.attack)}"
        _line(svg, 20, INFO_TOP + 66 + 2 * LINE, f"    {attack}")
    for i, p in enumerate(view.players):
        _player(svg, i, p, player_line(i))


def player_line(index: int) -> float:
    """The baseline of player ``index``'s line."""
    return INFO_TOP + 66 + 3 * LINE + 10 + LINE * index


def _player(svg: ET.Element, index: int, p: DrillitPlayerView, y: float) -> None:
    """One line per player, led by the Path piece in hand as printed (unturned)."""
    piece = "no piece"
    if p.path_piece is not None:
        piece = f"{p.path_piece.piece} {p.path_piece.shape} ({p.path_piece.crystal})"
    where = "not in the Tank" if p.room is None else f"room {p.room}"
    text = f"{p.player} ({p.character or '?'}): {where}, {piece}"
    group = titled_group(svg, player_id(index), text)
    element(group, "rect", x=14, y=y - 18, width=WIDTH - 28, height=LINE - 1, fill=BACKGROUND)
    if p.path_piece is not None:
        fill = CRYSTAL_FILL.get(p.path_piece.crystal, ROCK)
        element(group, "polygon", points=_hex_points(30, y - 5, 10.0), fill=fill, stroke="#000")
        _openings(group, 30, y - 5, p.path_piece.openings, 10.0)
    _line(group, 48, y, text)


def draw(view: DrillitView) -> str:
    height = int(player_line(len(view.players)))
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
