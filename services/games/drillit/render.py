"""The view as text for a terminal: Tank rooms, radar, Life Track, crystals, tunnels."""

from __future__ import annotations

from services.games.drillit.hexgrid import disc
from services.games.drillit.view import DrillitView

_CRYSTAL = {"blue": "b", "red": "r", "yellow": "y"}
_EDGES = ("E", "NE", "NW", "W", "SW", "SE")  # hex edges 0..5


def _tank(view: DrillitView) -> list[str]:
    lines = ["Tank (room: gnomes | fires | armor | goblins inside)"]
    for room in view.rooms:
        name = "centre" if room.room == 0 else f"room {room.room}"
        gnomes = ", ".join(room.gnomes) or "-"
        fires = "F" * room.fires or "-"
        armor = "" if room.room == 0 else (" armor ok" if room.armor_intact else " ARMOR BROKEN")
        inside = f" goblins inside: {room.goblins_inside}" if room.goblins_inside else ""
        lines.append(f"  {name:<7} {gnomes:<20} fires {fires:<3}{armor}{inside}")
    return lines


def _radar(view: DrillitView) -> list[str]:
    lines = ["Radar (sector: space 1 at the Armor ... outermost)"]
    for sector in view.radar:
        cells = " ".join(f"[{'g' * n:<3}]" if n <= 3 else f"[{n:>2}g]" for n in sector.spaces)
        lines.append(f"  sector {sector.sector}: {cells}")
    return lines


def _tunnels(view: DrillitView) -> list[str]:
    tiles = {t.cell: _CRYSTAL.get(t.crystal, "?") for t in view.tiles}
    tank, exits, abysses = set(view.tank_cells), set(view.exits), set(view.abysses)
    cells = disc(view.map_radius)
    rows: dict[int, dict[int, str]] = {}
    for cell in cells:
        glyph = "."
        if cell in tank:
            glyph = "T"
        elif cell == view.exit_piece:
            glyph = "E"
        elif cell in exits:
            glyph = "e"
        elif cell in abysses:
            glyph = "X"
        elif cell in tiles:
            glyph = tiles[cell]
        rows.setdefault(cell.r, {})[2 * cell.q + cell.r] = glyph
    low = min(x for row in rows.values() for x in row)
    plan_b = "" if view.plan_b_option is None else f"; Plan B: option {view.plan_b_option}"
    lines = [
        f"Tunnels (T Tank, E the Exit piece (option {view.exit_option}{plan_b}), e the other"
        " exit option, X abyss, b/r/y Path piece by crystal)"
    ]
    for r in sorted(rows):
        row = rows[r]
        width = max(row) - low + 1
        chars = [" "] * width
        for x, glyph in row.items():
            chars[x - low] = glyph
        lines.append("  " + "".join(chars).rstrip())
    for t in view.tiles:
        ways = "-".join(_EDGES[d] for d in t.openings)
        lines.append(f"  {t.piece} at ({t.cell.q},{t.cell.r}) {t.crystal} open {ways}")
    return lines


def _pieces(view: DrillitView) -> list[str]:
    lines = ["Gnomes"]
    for p in view.players:
        piece = (
            f"{p.path_piece.piece} {p.path_piece.shape} {p.path_piece.crystal}"
            if p.path_piece
            else "no Path piece"
        )
        where = "-" if p.room is None else ("centre" if p.room == 0 else f"room {p.room}")
        marker = "*" if p.player == view.active else " "
        lines.append(f" {marker}{p.player:<10} {p.character or '?':<9} {where:<7} {piece}")
    return lines


def render(view: DrillitView) -> str:
    head = (
        f"Drillit! {view.difficulty}/{view.distance}  turn {view.turn}  "
        f"active {view.active or '-'}  AP {view.action_points}  phase {view.phase}"
    )
    damage = "P" * view.permanent_damage + "A" * view.temporary_damage
    track = damage.ljust(view.life_track, "_")[: max(view.life_track, len(damage))]
    crystals = "  ".join(f"{c} {n}" for c, n in view.crystals.items())
    status = [
        f"Life Track [{track}] (P permanent, A armor)",
        f"Crystals {crystals}  (limit {view.storage_limit})",
        f"Event deck {view.event_deck_size} cards, Path pile {view.path_pile_size}, "
        f"abysses found {view.abysses_found}, lightest attack {view.lightest_attack_box}",
    ]
    if view.current_event is not None:
        e = view.current_event
        status.append(
            f"Event {e.card}: advance {e.goblin_advance}, intensify {e.fire_intensification}, "
            f"overheat {e.overheating}; main {e.main_event}; attack {'/'.join(e.attack)}"
            + ("  BLACKOUT" if view.blackout else "")
            + ("  TRAP" if view.trap else "")
        )
    if view.turbo_piece is not None:
        status.append(f"Turbo piece to place: {view.turbo_piece.piece} {view.turbo_piece.shape}")
    if view.result:
        status.append(f"The Gnomes {view.result}: {view.end_reason}")
    parts = [head, *status, *_pieces(view), *_tank(view), *_radar(view), *_tunnels(view)]
    return "\n".join(parts)
