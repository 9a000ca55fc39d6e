"""You can see the table: the SVG picture, rasterised, has the known cubes' colours where
they lie; the terminal map shows the cubes and the candidate rooms with their loot."""

from __future__ import annotations

import re
import struct
import zlib

import resvg_py

from services.games.dungeon_drop import GAME
from services.games.dungeon_drop import events as ev
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.picture import (
    LEGEND_H,
    STASH_CUBE,
    TABLE_FILL,
    TABLE_TOP,
    table_y,
)
from tests.unit.games.dungeon_drop.dd_given import at, given, looted, room_table


def decode_png(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and RGBA rows of an 8-bit RGBA, non-interlaced PNG (what resvg writes)."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width, height = 8, b"", 0, 0
    while pos < len(data):
        (length,) = struct.unpack(">I", data[pos : pos + 4])
        kind, body = data[pos + 4 : pos + 8], data[pos + 8 : pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, colour = struct.unpack(">IIBB", body[:10])
            assert (depth, colour) == (8, 6)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows = zlib.decompress(idat), width * 4, []
    prev = bytearray(stride)
    for y in range(height):
        f, line = (
            raw[y * (stride + 1)],
            bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)]),
        )
        for i in range(stride):
            a = line[i - 4] if i >= 4 else 0
            b, c = prev[i], prev[i - 4] if i >= 4 else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows


WINDOW = 8


def pixel(svg: str, x: float, y: float) -> str:
    """The colour at picture coordinates (x, y): the SVG is rasterised through a small
    window around the point (its root's size and viewBox changed), which keeps the
    pure-Python PNG decoding quick."""
    left, top = round(x) - WINDOW // 2, round(y) - WINDOW // 2
    root = re.match(r"<svg [^>]*>", svg)
    assert root is not None
    opened = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WINDOW}" height="{WINDOW}" '
        f'viewBox="{left} {top} {WINDOW} {WINDOW}">'
    )
    png = bytes(
        resvg_py.svg_to_bytes(svg_string=opened + svg[root.end() :], skip_system_fonts=True)
    )
    width, _, rows = decode_png(png)
    assert width == WINDOW
    centre = WINDOW // 2
    r, g, b = rows[centre][centre * 4 : centre * 4 + 3]
    return f"#{r:02x}{g:02x}{b:02x}"


CUBES = (
    at("dragon01", 600.0, 400.0, 30.0),
    at("gold01", 300.0, 280.0),
    at("troll01", 150.0, 500.0, 10.0),
    at("gem01", 700.0, 120.0),
)


def test_the_picture_shows_known_cubes_in_their_colours_where_they_lie() -> None:
    state = given(looted("ann", "crystal01", health=3), table=room_table(*CUBES))
    svg = GAME.picture(GAME.view(state, "ann"))
    assert svg is not None and svg.startswith("<svg")
    assert 'width="900"' in svg
    for cube in (*CUBES, at("pillar04", 800.0, 500.0)):
        colour = pixel(svg, cube.x, table_y(cube.y))
        assert colour == CONTENT.kind(cube.cube).colour, cube.cube
    assert pixel(svg, 50.0, TABLE_TOP + 50.0) == TABLE_FILL  # bare table
    # a turned cube: its unturned corner is bare table, its turned edge is dragon red
    assert pixel(svg, 600 + 9.5, table_y(400) - 9.5) == TABLE_FILL
    # ann's stash row under the table shows her crystal
    stash_top = table_y(0) + 22 + LEGEND_H + 12
    assert pixel(svg, 8 + STASH_CUBE - 2, stash_top + 2) == CONTENT.kinds["crystal"].colour


def test_the_last_room_is_drawn_under_the_cubes() -> None:
    state = given(looted("ann", health=3), table=room_table(*CUBES))
    svg = GAME.picture(GAME.view(state, "ann"))
    assert svg is not None and 'class="last-room"' in svg
    inside = pixel(svg, 300.0, table_y(300.0))
    assert inside not in (TABLE_FILL, CONTENT.kinds["gold"].colour)  # tinted floor


def test_the_terminal_map_and_candidate_rooms() -> None:
    state = given(
        ev.TurnStarted("ann", 1, 0),
        table=room_table(at("gold01", 300, 280), at("goblin01", 310, 290)),
    )
    text = GAME.render(GAME.view(state, "ann"))
    assert "pillar01 pillar02 pillar03" in text and "gold01" in text and "goblin01" in text
    assert "quest jeweler" in text and "quest hidden" in text  # bob's Quest is secret
    grid = [line for line in text.splitlines() if line.startswith("|")]
    assert (
        len(grid) == 20
        and any("P" in line for line in grid)
        and any("*" in line or "g" in line for line in grid)
    )
