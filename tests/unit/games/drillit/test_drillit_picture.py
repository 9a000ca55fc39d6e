"""The Drillit! picture: an SVG drawn from views of seeded playouts that parses, is the
same bytes for the same view, escapes text, names its clickable pieces, rasterises with
the pieces' colours where they belong (rooms, Fires, Armor, radar Goblins, tunnel map,
Life Track, crystals) and never shows the hidden order of the Event deck."""

from __future__ import annotations

import dataclasses
import math
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from services.games.drillit import GAME
from services.games.drillit import picture as pic
from services.games.drillit.bots import greedy_policy
from services.games.drillit.hexgrid import disc
from services.games.drillit.state import DrillitState
from services.games.drillit.view import DrillitView
from services.games.playout import play, random_policy
from tests.unit.games.raster import colour_at, rasterise

SVG = "{http://www.w3.org/2000/svg}"
PLAYERS = ("ann", "bob", "cyd")


@cache
def states(seed: int, bot: str = "greedy") -> tuple[DrillitState, ...]:
    """Every state a seat decided in, in order, over one seeded match."""
    seen: list[DrillitState] = []
    make = greedy_policy if bot == "greedy" else random_policy
    inner = {p: make(seed * 7 + i) for i, p in enumerate(PLAYERS)}

    def recording(player: str) -> Any:
        def choose(state: Any, who: str, legal: Sequence[Any]) -> Any:
            seen.append(state)
            return inner[player](state, who, legal)

        return choose

    options = {"distance": "medium", "exit": "12"[seed % 2]}
    play(GAME, PLAYERS, options, {p: recording(p) for p in PLAYERS}, seed)
    return tuple(seen)


def view_of(state: DrillitState, viewer: str | None = "ann") -> DrillitView:
    view = GAME.view(state, viewer)
    assert isinstance(view, DrillitView)
    return view


def first_view(found: Callable[[DrillitView], bool]) -> DrillitView:
    for seed in range(12):
        for bot in ("greedy", "random"):
            for state in states(seed, bot):
                view = view_of(state)
                if found(view):
                    return view
    raise AssertionError("no playout reached such a position")


def drawn(view: DrillitView) -> str:
    svg = GAME.picture(view)
    assert svg is not None
    return svg


def raster(view: DrillitView) -> list[bytes]:
    return rasterise(drawn(view))


def by_id(svg: str) -> dict[str, ET.Element]:
    return {e.attrib["id"]: e for e in ET.fromstring(svg).iter() if "id" in e.attrib}


def inside_hex(view: DrillitView, q: int, r: int) -> tuple[float, float]:
    """A point of a hex clear of its label and of the openings drawn from its centre."""
    layout = pic.map_layout(view.map_radius)
    x, y = pic.hex_centre(type(view.exit_piece)(q, r), layout)
    a = math.radians(30)
    return x + 0.6 * layout.size * math.cos(a), y + 0.6 * layout.size * math.sin(a)


def test_every_piece_has_an_id_and_a_title() -> None:
    view = view_of(states(0)[-1])
    root = ET.fromstring(drawn(view))
    assert root.tag == f"{SVG}svg" and root.attrib["viewBox"].startswith("0 0 ")
    ids = by_id(drawn(view))
    rooms = {f"room-{r.room}" for r in view.rooms}
    armor = {f"armor-{r.room}" for r in view.rooms if r.room}
    radar = {f"radar-{s.sector}-{k + 1}" for s in view.radar for k in range(len(s.spaces))}
    hexes = {f"hex-{c.q}-{c.r}" for c in disc(view.map_radius)}
    crystals = {f"crystal-{c}" for c in ("blue", "red", "yellow")}
    wanted = rooms | armor | radar | hexes | crystals | {"life-track"}
    assert len(rooms) == 6 and len(radar) == 15
    assert wanted <= set(ids)
    for ident in wanted:
        assert ids[ident].find(f"{SVG}title") is not None, ident


def test_same_view_same_bytes_across_playouts() -> None:
    for seed in (1, 2):
        for state in states(seed)[::9]:
            assert drawn(view_of(state)) == drawn(view_of(state))
            ET.fromstring(drawn(view_of(state)))


def test_hostile_text_is_escaped() -> None:
    hostile = '<script>alert("x")</script> & \'</text>'
    view = view_of(states(3)[-1])
    view = dataclasses.replace(
        view,
        result="lost",
        end_reason=hostile,
        players=tuple(dataclasses.replace(p, player=hostile) for p in view.players[:1])
        + view.players[1:],
    )
    svg = drawn(view)
    assert "<script>" not in svg
    assert hostile in "".join(ET.fromstring(svg).itertext())


def test_rooms_armor_and_radar_are_painted_where_they_stand() -> None:
    view = first_view(lambda v: any(s.spaces[-1] == 0 for s in v.radar))
    rows = raster(view)
    for room in view.rooms:
        x, y = pic.room_centre(room.room)
        fill = pic.CENTRE_FILL if room.room == 0 else pic.ROOM_FILL
        assert colour_at(rows, x - pic.ROOM_W / 2 + 5, y - 8) == fill, room.room
    for sector in view.radar:
        for k, goblins in enumerate(sector.spaces):
            x, y = pic.radar_centre(sector.sector, k + 1)
            ring = pic.RADAR_BLUE if k == len(sector.spaces) - 1 else pic.RADAR_SPACE
            assert colour_at(rows, x, y - 14) == ring
            assert colour_at(rows, x - 8, y) == (pic.GOBLIN if goblins else ring)


def test_fires_and_broken_armor_are_painted() -> None:
    view = first_view(lambda v: any(r.fires for r in v.rooms))
    room = next(r for r in view.rooms if r.fires)
    rows = raster(view)
    for i in range(room.fires):
        fx, fy = pic.fire_origin(room.room, i)
        assert colour_at(rows, fx + 3, fy + 3) == pic.FIRE
    broken = first_view(lambda v: any(not r.armor_intact for r in v.rooms))
    rows = raster(broken)
    for r in broken.rooms[1:]:
        ax, ay = pic.armor_centre(r.room)
        assert colour_at(rows, ax - 17, ay - 8) == (  # a corner the label leaves bare
            pic.ARMOR_OK if r.armor_intact else pic.ARMOR_BROKEN
        )


def test_tunnel_map_life_track_and_crystals_are_painted() -> None:
    view = first_view(lambda v: len(v.tiles) >= 3 and v.permanent_damage + v.temporary_damage > 0)
    rows = raster(view)
    for tile in view.tiles:
        assert (
            colour_at(rows, *inside_hex(view, tile.cell.q, tile.cell.r))
            == pic.CRYSTAL_FILL[tile.crystal]
        )
    for cell in view.tank_cells:
        assert colour_at(rows, *inside_hex(view, cell.q, cell.r)) == pic.TANK_HEX
    assert colour_at(rows, *inside_hex(view, view.exit_piece.q, view.exit_piece.r)) == pic.EXIT
    used = view.permanent_damage + view.temporary_damage
    for i in range(view.life_track):
        x, y = pic.life_box(i)
        fill = (
            pic.PERMANENT if i < view.permanent_damage else pic.TEMPORARY if i < used else pic.EMPTY
        )
        assert colour_at(rows, x + 3, y + 3) == fill, i
    for i, fill in enumerate(pic.CRYSTAL_FILL.values()):
        x, y = pic.crystal_box(i)
        assert colour_at(rows, x + 3, y + 3) == fill


def test_an_abyss_is_black_and_labelled() -> None:
    view = first_view(lambda v: bool(v.abysses))
    cell = view.abysses[0]
    assert colour_at(raster(view), *inside_hex(view, cell.q, cell.r)) == pic.ABYSS
    assert "X" in "".join(by_id(drawn(view))[f"hex-{cell.q}-{cell.r}"].itertext())


def test_the_event_deck_order_stays_hidden() -> None:
    for state in states(4):
        upcoming = set(state.event_deck) - {state.current_card}
        if upcoming and state.current_card:
            svg = drawn(view_of(state, None))
            assert state.current_card in svg
            assert not any(card in svg for card in upcoming)
            return
    raise AssertionError("no Event card in force with cards left in the deck")


def test_each_players_path_piece_leads_their_line() -> None:
    view = first_view(lambda v: sum(p.path_piece is not None for p in v.players) >= 2)
    ids, rows = by_id(drawn(view)), raster(view)
    for i, player in enumerate(view.players):
        title = ids[f"player-{i}"].find(f"{SVG}title")
        assert title is not None and title.text is not None and player.player in title.text
        if player.path_piece is not None:
            x, y = 30 + 6 * math.cos(math.radians(30)), pic.player_line(i) - 5 + 3
            assert colour_at(rows, x, y) == pic.CRYSTAL_FILL[player.path_piece.crystal]
