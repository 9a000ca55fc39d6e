"""The table as an SVG picture: a header line (round, whose turn, the step), the table
with cubes as rotated squares coloured by kind and sized by size, each with its letter,
Pillars grey, the last room's triangle under the cubes, meeples; a legend of the letters;
each hero's line and stash below. Table millimetres are picture units, y flipped (north
up), the table's top edge at ``TABLE_TOP``.

Pieces a move can pick carry a stable ``id`` (``naming.py`` names the moves by them):
each cube ``cube-<cube>`` and the table ``table``, which holds every cube, so a point
picked on a cube is still a point on the table."""

from __future__ import annotations

from xml.sax.saxutils import escape

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.view import CubeView, DungeonDropView

TABLE_TOP = 34
TABLE_FILL = "#6b4a2f"
ROOM_STROKE = "#ffe066"
LEGEND_H = 30
STASH_ROW = 46
STASH_CUBE = 16
#: a cube smaller than this (picture units) is picked within a circle this wide
PICK = 26
TEXT = 13
LABELS = {
    "pillar": "P",
    "gold": "g",
    "bullion": "G",
    "gem": "e",
    "crystal": "E",
    "key": "k",
    "chest": "C",
    "potion": "p",
    "shield": "S",
    "goblin": "o",
    "troll": "T",
    "dragon": "D",
    "phantom": "h",
}
MEEPLE_COLOURS = ("#ff5555", "#55aaff", "#ffffff", "#aa55ff")


def cube_id(cube: str) -> str:
    return f"cube-{cube}"


TABLE_ID = "table"


def table_y(y: float) -> float:
    """The picture's y of table coordinate ``y`` (table y points north, up)."""
    return TABLE_TOP + CONTENT.table.height - y


def _text(x: float, y: float, text: str, size: float = TEXT, fill: str = "#ddd") -> str:
    return (
        f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size}" font-family="sans-serif" '
        f'fill="{fill}">{escape(text)}</text>'
    )


def _letter(x: float, y: float, kind: str, size: float) -> str:
    """A cube's letter with its baseline at (x, y), white with a dark outline: legible on
    the table and on other cubes."""
    return (
        f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size}" font-family="sans-serif" '
        f'font-weight="bold" fill="#fff" stroke="#000" stroke-width="2.5" '
        f'paint-order="stroke">{LABELS.get(kind, "?")}</text>'
    )


def _cube(c: CubeView) -> str:
    kind = CONTENT.kinds[c.kind]
    edge = CONTENT.table.sizes[c.size]
    x, y = c.x, table_y(c.y)
    opacity = ' fill-opacity="0.55"' if kind.translucent else ""
    pick = ""
    if edge < PICK:  # the size of a fingertip, invisible
        pick = f'<circle cx="{x:.2f}" cy="{y:.2f}" r="{PICK / 2}" fill="#000" fill-opacity="0"/>'
    return (
        f'<g class="cube" id="{escape(cube_id(c.cube))}">'
        f"<title>{escape(f'{c.kind} ({c.size} cube) {c.cube}')}</title>{pick}"
        f'<rect x="{x - edge / 2:.2f}" y="{y - edge / 2:.2f}" width="{edge}" height="{edge}" '
        f'fill="{kind.colour}"{opacity} stroke="#111" stroke-width="0.8" '
        f'transform="rotate({-c.angle:.2f} {x:.2f} {y:.2f})"/>'
        f"{_letter(x + edge / 2 + 1, y - edge / 2 + 2, c.kind, TEXT)}</g>"
    )


def _header(view: DungeonDropView) -> str:
    head = f"Dungeon Drop - round {view.round} of {view.rounds}"
    if view.winner:
        head += f", {view.winner} wins"
    elif view.active:
        step = view.phase.replace("_", " ")
        if view.ability and view.ability_left:
            step += f": {view.ability.replace('_', ' ')} ({view.ability_left} left)"
        head += f", {view.active}'s turn: {step}"
    return _text(8, 24, head, 16, "#eee")


def _legend(top: float) -> str:
    parts = [f"{letter} {kind}" for kind, letter in LABELS.items()]
    return _text(8, top, "  ".join(parts), TEXT, "#bbb")


def picture(view: DungeonDropView) -> str:
    spec = CONTENT.table
    width, height = spec.width, spec.height
    legend = TABLE_TOP + height + 22
    seats_top = legend + LEGEND_H
    total = seats_top + STASH_ROW * max(1, len(view.seats))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{total:.0f}" '
        f'viewBox="0 0 {width:.0f} {total:.0f}">',
        "<title>Dungeon Drop: the table</title>",
        f'<rect width="{width:.0f}" height="{total:.0f}" fill="#1e1e1e"/>',
        _header(view),
        f'<g id="{TABLE_ID}"><title>the table</title>',
        f'<rect class="table" y="{TABLE_TOP}" width="{width:.0f}" height="{height:.0f}" '
        f'fill="{TABLE_FILL}"/>',
    ]
    where = {c.cube: c for c in view.table}
    if view.last_room and all(p in where for p in view.last_room):
        points = " ".join(f"{where[p].x:.2f},{table_y(where[p].y):.2f}" for p in view.last_room)
        parts.append(
            f'<polygon class="last-room" points="{points}" fill="{ROOM_STROKE}" '
            f'fill-opacity="0.18" stroke="{ROOM_STROKE}" stroke-width="2"/>'
        )
    parts += [_cube(c) for c in view.table]
    players = [s.player for s in view.seats]
    for m in view.meeples:
        colour = MEEPLE_COLOURS[players.index(m.player) % len(MEEPLE_COLOURS)]
        parts.append(
            f'<circle class="meeple" cx="{m.x:.2f}" cy="{table_y(m.y):.2f}" r="8" '
            f'fill="{colour}" stroke="#000"><title>{escape(m.player)}\'s meeple</title></circle>'
        )
    parts += ["</g>", _legend(legend)]
    for row, seat in enumerate(view.seats):
        top = seats_top + row * STASH_ROW
        you = " (you)" if seat.player == view.viewer else ""
        label = (
            f"{seat.player}{you}: {seat.race or '?'} {seat.hero_class or '?'}, health "
            f"{seat.health}, weight {seat.weight}"
        )
        if seat.quest:
            label += f", quest {seat.quest}"
        parts.append(_text(8, top + 4, label))
        for i, cube in enumerate(seat.stash):
            kind = CONTENT.kind(cube)
            x = 8 + i * (STASH_CUBE + 4)
            parts.append(
                f'<g class="stash"><title>{escape(f"{seat.player} holds {cube}")}</title>'
                f'<rect x="{x}" y="{top + 12:.0f}" width="{STASH_CUBE}" height="{STASH_CUBE}" '
                f'fill="{kind.colour}" stroke="#000"/>'
                f"{_letter(x + 3, top + 12 + STASH_CUBE - 3, CONTENT.cubes[cube], TEXT)}"
                "</g>"
            )
    parts.append("</svg>")
    return "\n".join(parts)
