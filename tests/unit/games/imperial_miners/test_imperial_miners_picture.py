"""The Imperial Miners picture: an SVG drawn from views of seeded playouts that parses, is
the same bytes for the same view, escapes text, names its clickable pieces, rasterises
with the pieces' colours where they belong (faction strips, cart halves, Machinery,
Cave-ins, Progress markers, hands) and never shows another seat's hand or secret choice."""

from __future__ import annotations

import dataclasses
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from services.games.imperial_miners import GAME
from services.games.imperial_miners import picture as pic
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.state import ImperialMinersState
from services.games.imperial_miners.view import ImperialMinersView
from services.games.playout import play, random_policy
from tests.unit.games.raster import colour_at, rasterise

SVG = "{http://www.w3.org/2000/svg}"
PLAYERS = ("ann", "bob", "cid")


@cache
def states(seed: int) -> tuple[ImperialMinersState, ...]:
    """Every state a seat decided in, in order, over one seeded match of random bots."""
    seen: list[ImperialMinersState] = []
    inner = {p: random_policy(seed * 7 + i) for i, p in enumerate(PLAYERS)}

    def choose(state: Any, player: str, legal: Sequence[Any]) -> Any:
        seen.append(state)
        return inner[player](state, player, legal)

    play(GAME, PLAYERS, {}, {p: choose for p in PLAYERS}, seed)
    return tuple(seen)


def view_of(state: ImperialMinersState, viewer: str | None = "ann") -> ImperialMinersView:
    view = GAME.view(state, viewer)
    assert isinstance(view, ImperialMinersView)
    return view


def first_state(found: Callable[[ImperialMinersState], bool]) -> ImperialMinersState:
    for seed in range(8):
        for state in states(seed):
            if found(state):
                return state
    raise AssertionError("no playout reached such a position")


def drawn(view: ImperialMinersView) -> str:
    svg = GAME.picture(view)
    assert svg is not None
    return svg


def raster(view: ImperialMinersView) -> list[bytes]:
    return rasterise(drawn(view))


def by_id(svg: str) -> dict[str, ET.Element]:
    return {e.attrib["id"]: e for e in ET.fromstring(svg).iter() if "id" in e.attrib}


def first_rect(group: ET.Element) -> tuple[float, float]:
    rect = group.find(f"{SVG}rect")
    assert rect is not None
    return float(rect.attrib["x"]), float(rect.attrib["y"])


def choosing(state: ImperialMinersState) -> bool:
    """Choose phase, bob has chosen, and ann's mine holds cards."""
    return state.phase.value == "choose" and "bob" in state.chosen and len(state.mine("ann")) >= 3


def test_every_piece_has_an_id_and_a_title() -> None:
    view = view_of(first_state(choosing))
    root = ET.fromstring(drawn(view))
    assert root.tag == f"{SVG}svg" and root.attrib["viewBox"].startswith("0 0 ")
    ids = by_id(drawn(view))
    mines = {f"mine-{k}-{p.level}-{p.column}" for k, s in enumerate(view.seats) for p in s.mine}
    hand = {f"hand-{i}" for i in range(len(view.hand))}
    backs = {f"back-{k}-{i}" for k, s in enumerate(view.seats[1:], 1) for i in range(s.hand_size)}
    spaces = {f"progress-{n}" for n in range(1, 13)}
    surfaces = {f"surface-{k}" for k in range(len(view.seats))}
    wanted = mines | hand | backs | spaces | surfaces | {"choice-1"}
    assert mines and hand and backs and wanted <= set(ids)
    for ident in wanted:
        assert ids[ident].find(f"{SVG}title") is not None, ident


def test_same_view_same_bytes_across_playouts() -> None:
    for seed in (1, 2):
        for state in states(seed)[::11]:
            assert drawn(view_of(state)) == drawn(view_of(state))
            ET.fromstring(drawn(view_of(state)))


def test_hostile_text_is_escaped() -> None:
    hostile = '<script>alert("x")</script> & \'</text>'
    view = view_of(states(3)[-1])
    seats = (dataclasses.replace(view.seats[1], player=hostile), *view.seats[2:])
    view = dataclasses.replace(view, seats=(view.seats[0], *seats), results={hostile: "won"})
    svg = drawn(view)
    assert "<script>" not in svg
    assert hostile in "".join(ET.fromstring(svg).itertext())


def test_mine_cards_are_painted_in_the_staggered_pyramid() -> None:
    view = view_of(first_state(choosing))
    rows = raster(view)
    mine = view.seats[0].mine
    for placed in mine:
        x, y = pic.card_origin(mine, pic.SEATS_TOP, placed.level, placed.column)
        card = CONTENT.cards[placed.card]
        strip = pic.FACTION_FILL[card.factions[0]] if card.factions else pic.NO_FACTION
        assert colour_at(rows, x + pic.CARD_W - 4, y + 4) == strip, placed
        assert colour_at(rows, x + 2, y + 30) == pic.CARD_FACE, placed
        if card.cart_right:
            assert colour_at(rows, x + pic.CARD_W - 5, y + pic.CARD_H - 14) == pic.CART
    deeper = [p for p in mine if p.level > 1]
    for p in deeper:  # half a card right of the card above-left of it
        x, _ = pic.card_origin(mine, pic.SEATS_TOP, p.level, p.column)
        above, _ = pic.card_origin(mine, pic.SEATS_TOP, p.level - 1, p.column)
        assert x - above == pic.CARD_W / 2


def test_machinery_and_cave_ins_are_painted() -> None:
    state = first_state(lambda s: any(p.machinery for p in s.mine("ann")))
    view, rows = view_of(state), raster(view_of(state))
    mine = view.seats[0].mine
    placed = next(p for p in mine if p.machinery)
    x, y = pic.card_origin(mine, pic.SEATS_TOP, placed.level, placed.column)
    assert colour_at(rows, x + pic.CARD_W - 14 - 7, y + 30) == pic.MACHINERY
    state = first_state(lambda s: any(p.cave_in for p in s.mine("ann")))
    view, rows = view_of(state), raster(view_of(state))
    mine = view.seats[0].mine
    placed = next(p for p in mine if p.cave_in)
    x, y = pic.card_origin(mine, pic.SEATS_TOP, placed.level, placed.column)
    assert colour_at(rows, x + 26, y + 42) == pic.CAVE_IN


def test_progress_markers_stand_on_their_spaces() -> None:
    view = view_of(first_state(lambda s: len(set(s.progress.values()) - {0}) >= 2))
    rows = raster(view)
    for k, seat in enumerate(view.seats):
        if seat.progress:
            x, y = pic.progress_space(seat.progress)
            n = [s.player for s in view.seats if s.progress == seat.progress].index(seat.player)
            assert colour_at(rows, x + 12 + 17 * n - 6, y + 36) == pic.SEAT_FILL[k]


def test_hands_faces_for_the_viewer_backs_for_the_others() -> None:
    state = first_state(choosing)
    view = view_of(state)
    ids, rows = by_id(drawn(view)), raster(view)
    for i in range(len(view.hand)):
        x, y = first_rect(ids[f"hand-{i}"])
        assert colour_at(rows, x + 2, y + 30) == pic.CARD_FACE
    backs = sorted(ident for ident in ids if ident.startswith("back-"))
    assert len(backs) == sum(s.hand_size for s in view.seats[1:])
    x, y = first_rect(ids[backs[0]])
    assert colour_at(rows, x + 3, y + 5) == pic.CARD_BACK
    x, y = first_rect(ids["choice-1"])
    assert colour_at(rows, x + 3, y + 5) == pic.CARD_BACK


def test_no_other_seats_hand_or_secret_choice_shows() -> None:
    state = first_state(choosing)
    for viewer in ("ann", None):
        view = view_of(state, viewer)
        svg = drawn(view)
        shown = {*view.hand, *(p.card for s in view.seats for p in s.mine)}
        shown |= {view.my_choice} if view.my_choice else set()
        hidden = {*state.hands["bob"], *state.hands["cid"], state.chosen["bob"]} - shown
        hidden_names = {CONTENT.cards[c].name for c in hidden} - {
            CONTENT.cards[c].name for c in shown
        }
        # a whole id: "I-35" is also the tail of "II-35"
        assert hidden and not any(re.search(rf"(?<!I){c}(?!\d)", svg) for c in hidden), viewer
        assert not any(name in svg for name in hidden_names), viewer
        if viewer is None:
            assert not any(ident.startswith("hand-") for ident in by_id(svg))
    own = view_of(state, "bob")
    assert all(card in drawn(own) for card in state.hands["bob"])
