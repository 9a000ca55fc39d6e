"""The view as terminal text: a coarse map of the table (one letter per cube kind) and
the candidate rooms with what they would collect."""

from __future__ import annotations

from services.games.dungeon_drop.bots import room_value, seat, table_of
from services.games.dungeon_drop.content import CONTENT
from services.games.dungeon_drop.picture import LABELS
from services.games.dungeon_drop.rooms import open_rooms
from services.games.dungeon_drop.view import DungeonDropView

COLUMNS = 72
ROWS = 20
ROOMS_SHOWN = 8


def table_map(view: DungeonDropView) -> list[str]:
    spec = CONTENT.table
    grid = [["." for _ in range(COLUMNS)] for _ in range(ROWS)]
    for c in view.table:
        col = min(COLUMNS - 1, int(c.x / spec.width * COLUMNS))
        row = min(ROWS - 1, int((spec.height - c.y) / spec.height * ROWS))
        here = grid[row][col]
        letter = LABELS.get(c.kind, "?")
        grid[row][col] = letter if here in (".", letter) else "*"
    border = "+" + "-" * COLUMNS + "+"
    return [border, *("|" + "".join(r) + "|" for r in grid), border]


def candidate_rooms(view: DungeonDropView) -> list[str]:
    me = seat(view, view.viewer) if view.viewer in {s.player for s in view.seats} else None
    rooms = []
    for trio, cubes in open_rooms(table_of(view)):
        if cubes:
            rooms.append((room_value(cubes, me, view.ward), trio, cubes))
    rooms.sort(key=lambda r: (-r[0], r[1]))
    lines = [f"Candidate rooms ({len(rooms)}; best {min(ROOMS_SHOWN, len(rooms))} for you):"]
    for value, trio, cubes in rooms[:ROOMS_SHOWN]:
        worth = "deadly" if value == float("-inf") else f"{value:5.1f}"
        lines.append(f"  {' '.join(trio)}: {worth}  {' '.join(cubes)}")
    return lines


def render(view: DungeonDropView) -> str:
    lines = [
        f"Dungeon Drop ({view.variant}) round {view.round}/{view.rounds}, phase {view.phase}, "
        f"active {view.active or '-'}; box {view.box_left} cubes; set aside {len(view.aside)}",
        "Turn order: " + " > ".join(view.order),
    ]
    for s in view.seats:
        quest = s.quest or "hidden"
        lines.append(
            f"  {s.player}: {s.race}/{s.hero_class} init {s.initiative} health "
            f"{s.health} (started {s.starting_health}) weight {s.weight} quest {quest} "
            f"stash {len(s.stash)}"
        )
    lines += table_map(view)
    lines.append("Legend: " + " ".join(f"{v}={k}" for k, v in LABELS.items()) + " *=several")
    if view.last_room:
        lines.append("Last room: " + " ".join(view.last_room))
    lines += candidate_rooms(view)
    if view.scores:
        lines.append("Scores: " + ", ".join(f"{p} {n}" for p, n in view.scores.items()))
        lines.append(f"Winner: {view.winner}")
    return "\n".join(lines)
