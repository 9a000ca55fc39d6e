"""The Crashland picture: an SVG drawn from views of seeded playouts that parses, is the
same bytes for the same view, escapes text, names its clickable pieces, rasterises with
the pieces' colours where they belong, and shows a spectator no card of the hidden hand."""

from __future__ import annotations

import dataclasses
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from functools import cache
from typing import Any

from services.games.crashland import GAME
from services.games.crashland import picture as pic
from services.games.crashland.model import MapKind
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CrashlandView
from services.games.playout import play, random_policy
from tests.unit.games.crashland.crashland_given import PLAYER
from tests.unit.games.raster import colour_at, rasterise

SVG = "{http://www.w3.org/2000/svg}"


@cache
def states(seed: int) -> tuple[CrashlandState, ...]:
    """Every state the seeded random bot decided in, in order."""
    seen: list[CrashlandState] = []
    inner = random_policy(seed)

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        seen.append(state)
        return inner(state, player, legal)

    play(GAME, [PLAYER], {}, {PLAYER: choose}, seed)
    return tuple(seen)


def view_of(state: CrashlandState, viewer: str | None) -> CrashlandView:
    view = GAME.view(state, viewer)
    assert isinstance(view, CrashlandView)
    return view


def with_hand() -> CrashlandState:
    """A state from a playout where the hand holds cards and some map cards are face up."""
    for seed in range(20):
        for state in states(seed):
            view = view_of(state, PLAYER)
            if len(view.hand) >= 2 and any(c.explored for c in view.cells):
                return state
    raise AssertionError("no playout reached a hand of two cards")


def drawn(view: CrashlandView) -> str:
    svg = GAME.picture(view)
    assert svg is not None
    return svg


def by_id(svg: str) -> dict[str, ET.Element]:
    return {e.attrib["id"]: e for e in ET.fromstring(svg).iter() if "id" in e.attrib}


def test_every_piece_has_an_id_and_a_title() -> None:
    view = view_of(with_hand(), PLAYER)
    root = ET.fromstring(drawn(view))
    assert root.tag == f"{SVG}svg" and root.attrib["viewBox"].startswith("0 0 ")
    ids = by_id(drawn(view))
    cells = {f"cell-{c.position.row}-{c.position.column}" for c in view.cells}
    hand = {f"hand-{i}" for i in range(len(view.hand))}
    tanks = {f"tank-{t.number}" for t in view.tanks}
    assert cells | hand | tanks | {"track-oxygen", "track-battery"} <= set(ids)
    assert len(cells) == view.rows * view.columns
    for ident in cells | hand | tanks:
        assert ids[ident].find(f"{SVG}title") is not None, ident


def test_same_view_same_bytes_across_playouts() -> None:
    for seed in (1, 2):
        for state in states(seed)[::7]:
            view = view_of(state, PLAYER)
            again = view_of(state, PLAYER)
            assert drawn(view) == drawn(again)
            ET.fromstring(drawn(view))


def test_hostile_text_is_escaped() -> None:
    hostile = '<script>alert("x")</script> & \'</text>'
    view = dataclasses.replace(view_of(states(3)[-1], PLAYER), result="lost", end_reason=hostile)
    svg = drawn(view)
    assert "<script>" not in svg
    texts = "".join(ET.fromstring(svg).itertext())
    assert hostile in texts


def test_pieces_are_painted_where_they_stand() -> None:
    view = view_of(with_hand(), PLAYER)
    rows = rasterise(drawn(view))
    for cell in view.cells:
        x, y = pic.cell_origin(cell.position.row, cell.position.column)
        expected = pic.KIND_FILL[cell.kind] if cell.kind is not None else pic.UNEXPLORED
        assert colour_at(rows, x + 6, y + 6) == expected, cell.position
    assert view.astronaut is not None
    ax, ay = pic.cell_origin(view.astronaut.row, view.astronaut.column)
    assert colour_at(rows, ax + 9, ay + pic.CELL_H - 16) == pic.ASTRONAUT
    top = pic.GRID_TOP + view.rows * pic.CELL_H + 12
    for system, level in (("oxygen", view.oxygen), ("battery", view.battery)):
        for i in range(view.max_level):
            bx, by = pic.track_box(system, i, top)
            full = pic.TRACK_FILL[system] if i < level else pic.EMPTY
            assert colour_at(rows, bx + 3, by + 3) == full, (system, i)
    hand_top = pic.GRID_TOP + view.rows * pic.CELL_H + 150
    for i in range(len(view.hand)):
        assert colour_at(rows, pic.MARGIN + i * (pic.CARD_W + 6) + 4, hand_top + 4) == pic.CARD_FACE


def test_located_tank_token_sits_on_its_card() -> None:
    for seed in range(30):
        for state in states(seed):
            view = view_of(state, PLAYER)
            located = [c for c in view.cells if c.tank is not None]
            if located:
                rows = rasterise(drawn(view))
                cell = located[0]
                tx, ty = pic.tank_origin(cell.position.row, cell.position.column)
                assert colour_at(rows, tx + 2, ty + 2) == pic.TANK
                return
    raise AssertionError("no playout located a fuel tank")


def test_a_spectator_sees_card_backs_not_the_hand() -> None:
    state = with_hand()
    player, spectator = view_of(state, PLAYER), view_of(state, None)
    secret = {pic.card_text(c) for c in player.hand if c.kind != "event"}
    assert secret and all(s in drawn(player) for s in secret)
    svg = drawn(spectator)
    assert not any(s in svg for s in secret)
    ids = by_id(svg)
    for i in range(spectator.hand_size):
        title = ids[f"hand-{i}"].find(f"{SVG}title")
        assert title is not None and title.text == "hidden card"
    rows = rasterise(svg)
    hand_top = pic.GRID_TOP + spectator.rows * pic.CELL_H + 150
    assert colour_at(rows, pic.MARGIN + 4, hand_top + 4) == pic.CARD_BACK


def test_beacon_cards_name_their_number_and_direction() -> None:
    for seed in range(20):
        view = view_of(states(seed)[-1], PLAYER)
        beacons = [c for c in view.cells if c.kind is MapKind.BEACON]
        if beacons:
            cell = beacons[0]
            group = by_id(drawn(view))[f"cell-{cell.position.row}-{cell.position.column}"]
            label = "".join(group.itertext())
            assert f"BEACON {cell.beacon_number}" in label
            assert ("up-down" in label) or ("left-right" in label)
            return
    raise AssertionError("no playout turned a beacon face up")
