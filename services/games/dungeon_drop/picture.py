"""The table as an SVG picture: cubes as rotated squares coloured by kind and sized by
size, labelled; Pillars grey; the last room's triangle under the cubes; meeples; each
hero's stash below the table. Table millimetres are SVG pixels, y flipped (north up)."""

from __future__ import annotations

from xml.sax.saxutils import escape

from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.view import CubeView, DungeonDropView

TABLE_FILL = "#6b4a2f"
ROOM_STROKE = "#ffe066"
STASH_ROW = 34
STASH_CUBE = 12
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


def _cube(c: CubeView, height: float) -> str:
    kind = CONTENT.kinds[c.kind]
    edge = CONTENT.table.sizes[c.size]
    x, y = c.x, height - c.y
    opacity = ' fill-opacity="0.55"' if kind.translucent else ""
    return (
        f'<g class="cube" id="{escape(c.cube)}">'
        f"<title>{escape(f'{c.kind} ({c.size} cube) {c.cube}')}</title>"
        f'<rect x="{x - edge / 2:.2f}" y="{y - edge / 2:.2f}" width="{edge}" height="{edge}" '
        f'fill="{kind.colour}"{opacity} stroke="#111" stroke-width="0.8" '
        f'transform="rotate({-c.angle:.2f} {x:.2f} {y:.2f})"/>'
        f'<text x="{x + edge / 2 + 1:.2f}" y="{y - edge / 2:.2f}" font-size="8" '
        f'font-family="sans-serif" fill="#fff">{LABELS.get(c.kind, "?")}</text></g>'
    )


def picture(view: DungeonDropView) -> str:
    spec = CONTENT.table
    width, height = spec.width, spec.height
    total = height + 20 + STASH_ROW * max(1, len(view.seats))
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{total:.0f}" '
        f'viewBox="0 0 {width:.0f} {total:.0f}">',
        f'<rect width="{width:.0f}" height="{total:.0f}" fill="#1e1e1e"/>',
        f'<rect class="table" width="{width:.0f}" height="{height:.0f}" fill="{TABLE_FILL}"/>',
    ]
    where = {c.cube: c for c in view.table}
    if view.last_room and all(p in where for p in view.last_room):
        points = " ".join(f"{where[p].x:.2f},{height - where[p].y:.2f}" for p in view.last_room)
        parts.append(
            f'<polygon class="last-room" points="{points}" fill="{ROOM_STROKE}" '
            f'fill-opacity="0.18" stroke="{ROOM_STROKE}" stroke-width="2"/>'
        )
    parts += [_cube(c, height) for c in view.table]
    players = [s.player for s in view.seats]
    for m in view.meeples:
        colour = MEEPLE_COLOURS[players.index(m.player) % len(MEEPLE_COLOURS)]
        parts.append(
            f'<circle class="meeple" cx="{m.x:.2f}" cy="{height - m.y:.2f}" r="6" '
            f'fill="{colour}" stroke="#000"/>'
        )
    for row, seat in enumerate(view.seats):
        top = height + 20 + row * STASH_ROW
        label = (
            f"{seat.player} ({seat.race}/{seat.hero_class}) health {seat.health} "
            f"weight {seat.weight}"
        )
        parts.append(
            f'<text x="4" y="{top:.0f}" font-size="11" font-family="sans-serif" '
            f'fill="#ddd">{escape(label)}</text>'
        )
        for i, cube in enumerate(seat.stash):
            kind = CONTENT.kind(cube)
            parts.append(
                f'<rect class="stash" x="{4 + i * (STASH_CUBE + 3)}" y="{top + 6:.0f}" '
                f'width="{STASH_CUBE}" height="{STASH_CUBE}" fill="{kind.colour}" stroke="#000">'
                f"<title>{escape(f'{seat.player} holds {cube}')}</title></rect>"
            )
    parts.append("</svg>")
    return "\n".join(parts)
