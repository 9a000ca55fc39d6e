"""The Imperial Miners view drawn as an SVG document: the round and the Event in force,
the Progress boards with one labelled marker per seat, then each seat's Mine as a staggered
pyramid under its Surface board (card (L, c) half a card right of (L-1, c), as in
render.py), with Machinery, Cave-in and cart halves, and its hand: the viewer's own cards
face up, other seats' cards and secret choices as backs.

Drawn from the view alone; every coloured piece also carries a text label, clickable
pieces carry a stable ``id`` (seats by index, so ids never hold a player's name) and a
``<title>``. ElementTree does the escaping and keeps attribute order: the same view always
gives the same bytes."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from services.games.imperial_miners.content import CONTENT, effect_text
from services.games.imperial_miners.effects import SPACES_PER_BOARD
from services.games.imperial_miners.mine import PlacedCard
from services.games.imperial_miners.render import event_line
from services.games.imperial_miners.view import ImperialMinersSeatView, ImperialMinersView
from services.games.svg import element, titled_group

MIN_WIDTH = 1080
MARGIN = 20
CARD_W, CARD_H = 120, 62
STRIP = 14
SPACE_W, SPACE_H = 78, 40
PROGRESS_TOP = 70
SEATS_TOP = 190
FONT = "sans-serif"

BACKGROUND = "#1f2420"
CARD_FACE = "#f4ecd8"
CARD_BACK = "#3b3f58"
SURFACE = "#8c6d46"
NO_FACTION = "#868e96"
MACHINERY = "#495057"
CAVE_IN = "#e03131"
CART = "#a0522d"
FACTION_FILL = {
    "scots": "#2b8a3e",
    "atlanteans": "#1971c2",
    "egyptians": "#e8a317",
    "japanese": "#c2255c",
    "barbarians": "#7c4a1e",
    "romans": "#6741d9",
}
SEAT_FILL = ("#ff6b6b", "#4dabf7", "#ffd43b", "#b197fc", "#69db7c")


def _text(
    parent: ET.Element, x: float, y: float, text: str, size: int = 9, fill: str = "#111"
) -> None:
    element(parent, "text", text, x=x, y=y, font_size=size, font_family=FONT, fill=fill)


def card_title(card_id: str) -> str:
    card = CONTENT.cards[card_id]
    factions = "/".join(card.factions) or "no faction"
    effects = " OR ".join(effect_text(e) for e in card.effects)
    return f"{card.name} ({card_id}, level {card.level}, cost {card.cost}, {factions}): {effects}"


def _card_face(group: ET.Element, card_id: str, x: float, y: float) -> None:
    """Faction strip (initials), name, level/cost, one line per effect option, cart halves."""
    card = CONTENT.cards[card_id]
    strip = FACTION_FILL.get(card.factions[0], NO_FACTION) if card.factions else NO_FACTION
    element(
        group, "rect", x=x, y=y, width=CARD_W, height=CARD_H, rx=3, fill=CARD_FACE, stroke="#000"
    )
    element(group, "rect", x=x, y=y, width=CARD_W, height=STRIP, fill=strip)
    factions = "/".join(f[:3].upper() for f in card.factions) or "none"
    _text(group, x + 4, y + 11, f"{factions}  L{card.level} ${card.cost}", 9, "#fff")
    _text(group, x + 4, y + 25, card.name, 10)
    for i, effect in enumerate(card.effects[:3]):
        line = ("or " if i else "") + effect_text(effect)
        _text(group, x + 4, y + 37 + 9 * i, line, 7)
        if len(line) > 30:  # squeeze long effect texts onto the card
            group[-1].set("textLength", str(CARD_W - 8))
            group[-1].set("lengthAdjust", "spacingAndGlyphs")
    for side, has in (("left", card.cart_left), ("right", card.cart_right)):
        if has:
            cx = x if side == "left" else x + CARD_W - 10
            element(group, "rect", x=cx, y=y + CARD_H - 16, width=10, height=16, fill=CART)
            _text(group, cx + 2, y + CARD_H - 5, "C", 8, "#fff")


def _card_back(group: ET.Element, x: float, y: float, label: str) -> None:
    element(
        group, "rect", x=x, y=y, width=CARD_W, height=CARD_H, rx=3, fill=CARD_BACK, stroke="#000"
    )
    _text(group, x + 8, y + CARD_H / 2 + 4, label, 10, "#fff")


def _placed(svg: ET.Element, seat: int, placed: PlacedCard, x: float, y: float) -> None:
    extras = f", {placed.machinery} Machinery" if placed.machinery else ""
    extras += ", CAVE-IN" if placed.cave_in else ""
    where = f"level {placed.level}, column {placed.column}"
    group = titled_group(
        svg,
        f"mine-{seat}-{placed.level}-{placed.column}",
        f"{where}: {card_title(placed.card)}{extras}",
    )
    _card_face(group, placed.card, x, y)
    for m in range(placed.machinery):
        mx = x + CARD_W - 22 - 14 * m
        element(group, "circle", cx=mx, cy=y + 24, r=6, fill=MACHINERY, stroke="#000")
        _text(group, mx - 3, y + 27, "M", 7, "#fff")
    if placed.cave_in:
        element(group, "rect", x=x + 30, y=y + 28, width=60, height=16, fill=CAVE_IN, stroke="#000")
        _text(group, x + 34, y + 40, "CAVE-IN", 9, "#fff")


def mine_origin(mine: tuple[PlacedCard, ...], top: float) -> tuple[float, float]:
    """Where column 0 of Level I would be, so the leftmost card starts at the margin."""
    xs = [p.column * CARD_W + (p.level - 1) * CARD_W / 2 for p in mine] or [0.0]
    return MARGIN - min(xs), top + 40


def card_origin(
    mine: tuple[PlacedCard, ...], top: float, level: int, column: int
) -> tuple[float, float]:
    x0, y0 = mine_origin(mine, top)
    return x0 + column * CARD_W + (level - 1) * CARD_W / 2, y0 + (level - 1) * CARD_H


def _seat_head(view: ImperialMinersView, seat: ImperialMinersSeatView) -> str:
    you = " (you)" if seat.player == view.viewer else ""
    head = f"{seat.player}{you}: {seat.coins} coins, {seat.vp} VP, {seat.carts} cart(s), "
    head += f"Progress {seat.progress}, {seat.hand_size} in hand"
    if view.phase == "choose":
        head += ", has chosen" if seat.has_chosen else ", choosing"
    if seat.played:
        head += f", played {CONTENT.cards[seat.played].name}"
    return head


def _hand(svg: ET.Element, view: ImperialMinersView, index: int, top: float) -> None:
    seat = view.seats[index]
    own = seat.player == view.viewer
    label = "your hand" if own else f"{seat.player}'s hand ({seat.hand_size})"
    _text(svg, MARGIN, top - 4, label, 10, "#eee")
    x: float = MARGIN
    if own:
        for i, card in enumerate(view.hand):
            group = titled_group(svg, f"hand-{i}", card_title(card))
            _card_face(group, card, x + i * (CARD_W + 6), top)
        x += len(view.hand) * (CARD_W + 6)
    else:
        for i in range(seat.hand_size):
            group = titled_group(svg, f"back-{index}-{i}", f"a card in {seat.player}'s hand")
            _card_back(group, x + i * (CARD_W / 2 + 4), top, "?")
        x += seat.hand_size * (CARD_W / 2 + 4) + CARD_W / 2
    if seat.has_chosen and seat.played is None:
        group = titled_group(svg, f"choice-{index}", "the card chosen this round")
        if own and view.my_choice is not None:
            _card_face(group, view.my_choice, x + 10, top)
        else:
            _card_back(group, x + 10, top, "chosen")


def _seat(svg: ET.Element, view: ImperialMinersView, index: int, top: float) -> float:
    """Draws one seat from ``top``; returns where the next seat starts."""
    seat = view.seats[index]
    colour = SEAT_FILL[index % len(SEAT_FILL)]
    element(svg, "rect", x=MARGIN, y=top, width=14, height=14, fill=colour, stroke="#000")
    _text(svg, MARGIN + 20, top + 12, _seat_head(view, seat), 13, "#eee")
    x0, y0 = mine_origin(seat.mine, top)
    group = titled_group(svg, f"surface-{index}", f"{seat.player}'s Surface board")
    # spans Level I, as render.py's "=== SURFACE ===" line does
    level_1 = [card_origin(seat.mine, top, 1, p.column)[0] for p in seat.mine if p.level == 1]
    left, right = min(level_1, default=x0), max(level_1, default=x0) + CARD_W
    element(
        group,
        "rect",
        x=left,
        y=y0 - 20,
        width=max(right - left, 2 * CARD_W),
        height=18,
        fill=SURFACE,
    )
    surface = "SURFACE: " + " | ".join(effect_text(e) for e in CONTENT.surface)
    _text(group, left + 4, y0 - 7, surface, 9, "#fff")
    for placed in seat.mine:
        _placed(svg, index, placed, *card_origin(seat.mine, top, placed.level, placed.column))
    levels = max((p.level for p in seat.mine), default=0)
    hand_top = y0 + levels * CARD_H + 24
    _hand(svg, view, index, hand_top)
    return hand_top + CARD_H + 24


def progress_space(space: int) -> tuple[float, float]:
    """Top-left corner of Progress space ``space`` (1-based along the three boards)."""
    board, i = divmod(space - 1, SPACES_PER_BOARD)
    return MARGIN + board * (SPACES_PER_BOARD * SPACE_W + 30) + i * SPACE_W, PROGRESS_TOP


def _progress(svg: ET.Element, view: ImperialMinersView) -> None:
    for b, side in enumerate(view.progress_sides):
        spec = CONTENT.boards[b][side]
        for i, reward in enumerate(spec.spaces):
            space = b * SPACES_PER_BOARD + i + 1
            group = titled_group(
                svg,
                f"progress-{space}",
                f"Progress space {space} (board {b + 1}{side}): {effect_text(reward)}",
            )
            x, y = progress_space(space)
            element(
                group,
                "rect",
                x=x,
                y=y,
                width=SPACE_W - 2,
                height=SPACE_H,
                fill=CARD_FACE,
                stroke="#000",
            )
            _text(group, x + 3, y + 10, f"{space}: {effect_text(reward)}", 7)
            here = [k for k, s in enumerate(view.seats) if s.progress == space]
            for n, k in enumerate(here):
                element(
                    group,
                    "circle",
                    cx=x + 10 + 14 * n,
                    cy=y + 27,
                    r=6,
                    fill=SEAT_FILL[k % 5],
                    stroke="#000",
                )
                _text(group, x + 7 + 14 * n, y + 30, view.seats[k].player[:1], 8)
        _text(
            svg,
            progress_space(b * SPACES_PER_BOARD + 1)[0],
            PROGRESS_TOP + SPACE_H + 12,
            f"board {b + 1}{side} final: {effect_text(spec.final)}",
            8,
            "#eee",
        )


def _event_line(view: ImperialMinersView) -> str:
    if view.event is None:
        return "no Event in force"
    return "Event: " + event_line(CONTENT.events[view.event])


def _width(view: ImperialMinersView) -> int:
    """Wide enough for the widest Mine and for the viewer's hand."""
    widths = [MIN_WIDTH, 2 * MARGIN + (CARD_W + 6) * (len(view.hand) + 2)]
    for seat in view.seats:
        xs = [p.column * CARD_W + (p.level - 1) * CARD_W / 2 for p in seat.mine] or [0.0]
        widths.append(int(max(xs) - min(xs)) + CARD_W + 2 * MARGIN)
    return max(widths)


def draw(view: ImperialMinersView) -> str:
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1"})
    head = f"Imperial Miners - round {view.round} of {CONTENT.rounds}"
    head += f", {view.rounds_left} left, phase {view.phase}"
    element(svg, "title", head)
    background = element(svg, "rect", fill=BACKGROUND)
    _text(svg, MARGIN, 26, head, 15, "#eee")
    _text(svg, MARGIN, 48, _event_line(view), 12, "#eee")
    _progress(svg, view)
    top = float(SEATS_TOP)
    for index in range(len(view.seats)):
        top = _seat(svg, view, index, top)
    if view.results:
        results = ", ".join(f"{p}: {view.scores.get(p, 0)} VP {r}" for p, r in view.results.items())
        _text(svg, MARGIN, top + 10, results, 13, "#eee")
    width, height = _width(view), int(top + 30)
    for node in (svg, background):
        node.set("width", str(width))
        node.set("height", str(height))
    svg.set("viewBox", f"0 0 {width} {height}")
    return ET.tostring(svg, encoding="unicode")
