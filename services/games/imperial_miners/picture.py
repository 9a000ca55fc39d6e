"""The Imperial Miners view drawn as an SVG document: the round and the Event in force,
the Progress boards with one labelled marker per seat, then each seat's Mine as a staggered
pyramid under its Surface board (card (L, c) half a card right of (L-1, c), as in
render.py), with Machinery, Cave-in and cart halves, and its hand: the viewer's own cards
face up, other seats' cards and secret choices as backs. While the viewer places a card,
the free places it may go (near its other cards) are drawn as empty slots.

Drawn from the view alone; every coloured piece also carries a text label, pieces a move
can pick carry a stable ``id`` (seats by index, so ids never hold a player's name;
``naming.py`` names the moves by them) and a ``<title>``. Text is 13 units or more but a
card's effect lines, and cards are ``zoom`` pieces (shown magnified on hover).
ElementTree does the escaping and keeps attribute order: the same view always gives the
same bytes."""

from __future__ import annotations

import textwrap
import xml.etree.ElementTree as ET

from services.games.imperial_miners.content import CONTENT, ROMAN, Atom, Effect
from services.games.imperial_miners.effects import SPACES_PER_BOARD
from services.games.imperial_miners.mine import placements
from services.games.imperial_miners.render import event_line
from services.games.imperial_miners.state import PlacedCard
from services.games.imperial_miners.view import ImperialMinersSeatView, ImperialMinersView
from services.games.svg import element, titled_group

MIN_WIDTH = 964
MARGIN = 20
CARD_W, CARD_H = 136, 92
STRIP = 20
SPACE_W, SPACE_H = 72, 52
BOARD_GAP = 30
PROGRESS_TOP = 74
SEATS_TOP = 200
BACK_W, BACK_H = 30, 44
TEXT = 13
#: a card's effect lines (cards are zoomed on hover)
SMALL = 11
FONT = "sans-serif"

BACKGROUND = "#1f2420"
CARD_FACE = "#f4ecd8"
CARD_BACK = "#3b3f58"
SURFACE = "#8c6d46"
SLOT = "#2f3a30"
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


# -- the ids moves pick (naming.py) --------------------------------------------------------


def hand_id(index: int) -> str:
    return f"hand-{index}"


def mine_id(seat: int, level: int, column: int) -> str:
    return f"mine-{seat}-{level}-{column}"


def slot_id(seat: int, level: int, column: int) -> str:
    return f"slot-{seat}-{level}-{column}"


def effect_id(seat: int, level: int, column: int, index: int) -> str:
    return f"effect-{seat}-{level}-{column}-{index}"


def surface_effect_id(seat: int, index: int) -> str:
    return f"surface-effect-{seat}-{index}"


# -- effects as players read them -----------------------------------------------------------

_PER = {
    "factions": "per faction in the Mine",
    "carts": "per complete Cart",
    "mine_machinery": "per Machinery in the Mine",
    "machinery": "per Machinery on this card",
    "adjacent": "per card touching this one",
    "cave_ins": "per Cave-in",
}
#: the same on a card's face
_PER_SHORT = {
    "factions": "per faction",
    "carts": "per Cart",
    "mine_machinery": "per Machinery",
    "machinery": "per Machinery here",
    "adjacent": "per touching card",
    "cave_ins": "per Cave-in",
}


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def atom_text(atom: Atom, short: bool = False) -> str:
    """ "+2 coins", "+1 VP per Scots card (max 3)", "draw a Level II card" ..."""
    do, n = atom.do, atom.n
    if do == "coins":
        out = "+" + _plural(n, "coin", "coins")
    elif do == "vp":
        out = f"+{n} VP"
    elif do == "advance":
        out = f"advance {n}" if short else f"advance {n} on Progress"
    elif do.startswith("draw_"):
        level = ROMAN[int(do.removeprefix("draw_"))]
        out = f"draw {'a' if n == 1 else n} Level {level} card{'s' if n > 1 else ''}"
        out = f"draw {n} {level}" if short else out
    elif do == "machinery":
        out = "+" + _plural(n, "Machinery", "Machinery")
    elif do == "cave_in":
        out = "Cave-in"
    elif do == "clear_cave_in":
        out = "clear " + _plural(n, "Cave-in", "Cave-ins")
    else:
        out = f"{do.replace('_', ' ')} {n}"
    if atom.per:
        faction = atom.per.removeprefix("faction:")
        if faction != atom.per:
            out += f" per {faction.title()}" + ("" if short else " card")
        else:
            out += " " + (_PER_SHORT if short else _PER)[atom.per]
    if atom.cap is not None:
        out += f" (max {atom.cap})"
    return out


def effect_words(effect: Effect, short: bool = False) -> str:
    return ", ".join(atom_text(a, short) for a in effect) or "nothing"


def card_title(card_id: str) -> str:
    card = CONTENT.cards[card_id]
    factions = "/".join(f.title() for f in card.factions) or "no faction"
    effects = " OR ".join(effect_words(e) for e in card.effects)
    level = ROMAN[card.level]
    return f"{card.name} ({card_id}, Level {level}, cost {card.cost}, {factions}): {effects}"


# -- drawing ---------------------------------------------------------------------------------


def _text(
    parent: ET.Element, x: float, y: float, text: str, size: float = TEXT, fill: str = "#111"
) -> ET.Element:
    return element(parent, "text", text, x=x, y=y, font_size=size, font_family=FONT, fill=fill)


def _fit(node: ET.Element, text: str, size: float, width: float) -> None:
    """Squeeze ``text`` into ``width`` when it would run wider (about 0.55 em a letter)."""
    if len(text) * size * 0.55 > width:
        node.set("textLength", f"{width:.1f}")
        node.set("lengthAdjust", "spacingAndGlyphs")


def _effect_lines(card_id: str) -> list[tuple[int, str]]:
    """(effect index, line) pairs: each option's words wrapped, "or" before the second."""
    lines: list[tuple[int, str]] = []
    for i, effect in enumerate(CONTENT.cards[card_id].effects):
        words = ("or " if i else "") + effect_words(effect, short=True)
        lines += [(i, line) for line in textwrap.wrap(words, 20)]
    return lines


def _card_face(
    group: ET.Element, card_id: str, x: float, y: float, effect_ids: list[str] | None = None
) -> None:
    """Faction strip (initials, level, cost), name, the effect options (each its own group
    when ``effect_ids`` names them), cart halves."""
    card = CONTENT.cards[card_id]
    strip = FACTION_FILL.get(card.factions[0], NO_FACTION) if card.factions else NO_FACTION
    element(
        group, "rect", x=x, y=y, width=CARD_W, height=CARD_H, rx=4, fill=CARD_FACE, stroke="#000"
    )
    element(group, "rect", x=x, y=y, width=CARD_W, height=STRIP, rx=4, fill=strip)
    factions = "/".join(f[:3].upper() for f in card.factions) or "none"
    _text(group, x + 5, y + 15, f"{factions}  {ROMAN[card.level]}  ${card.cost}", TEXT, "#fff")
    name = _text(group, x + 5, y + 36, card.name, TEXT)
    _fit(name, card.name, TEXT, CARD_W - 10)
    lines = _effect_lines(card_id)
    step = min(14.0, (CARD_H - 46) / max(1, len(lines)))
    parts: dict[int, ET.Element] = {}
    for n, (i, line) in enumerate(lines):
        if i not in parts:
            parts[i] = group
            if effect_ids is not None:
                parts[i] = titled_group(group, effect_ids[i], effect_words(card.effects[i]))
                top = y + 40 + step * n
                height = step * sum(1 for k, _ in lines if k == i)
                element(
                    parts[i],
                    "rect",
                    x=x + 2,
                    y=top,
                    width=CARD_W - 4,
                    height=height,
                    fill=CARD_FACE,
                )
        node = _text(parts[i], x + 12, y + 52 + step * n, line, SMALL)
        _fit(node, line, SMALL, CARD_W - 24)
    for side, has in (("left", card.cart_left), ("right", card.cart_right)):
        if has:
            cx = x if side == "left" else x + CARD_W - 10
            element(group, "rect", x=cx, y=y + CARD_H - 18, width=10, height=18, fill=CART)


def _card_back(group: ET.Element, x: float, y: float, w: float, h: float, label: str) -> None:
    element(group, "rect", x=x, y=y, width=w, height=h, rx=3, fill=CARD_BACK, stroke="#000")
    element(
        group,
        "text",
        label,
        x=x + w / 2,
        y=y + h / 2 + 5,
        font_size=TEXT,
        font_family=FONT,
        fill="#fff",
        text_anchor="middle",
    )


def _placed(svg: ET.Element, seat: int, placed: PlacedCard, x: float, y: float) -> None:
    extras = f", {placed.machinery} Machinery" if placed.machinery else ""
    extras += ", CAVE-IN" if placed.cave_in else ""
    where = f"Level {ROMAN.get(placed.level, placed.level)}, column {placed.column}"
    group = titled_group(
        svg,
        mine_id(seat, placed.level, placed.column),
        f"{where}: {card_title(placed.card)}{extras}",
    )
    group.set("class", "zoom")
    count = len(CONTENT.cards[placed.card].effects)
    ids = [effect_id(seat, placed.level, placed.column, i) for i in range(count)]
    _card_face(group, placed.card, x, y, ids)
    for m in range(placed.machinery):
        mx = x + CARD_W - 14 - 20 * m
        element(group, "circle", cx=mx, cy=y + 30, r=9, fill=MACHINERY, stroke="#000")
        element(
            group,
            "text",
            "M",
            x=mx,
            y=y + 34.5,
            font_size=TEXT,
            font_family=FONT,
            fill="#fff",
            text_anchor="middle",
        )
    if placed.cave_in:
        element(group, "rect", x=x + 24, y=y + 40, width=88, height=22, fill=CAVE_IN, stroke="#000")
        _text(group, x + 32, y + 56, "CAVE-IN", TEXT, "#fff")


def _origin_x(level: int, column: int) -> float:
    return column * CARD_W + (level - 1) * CARD_W / 2


def mine_origin(
    mine: tuple[PlacedCard, ...], top: float, slots: tuple[tuple[int, int], ...] = ()
) -> tuple[float, float]:
    """Where column 0 of Level I would be, so the leftmost card (or slot) starts at the
    margin."""
    xs = [_origin_x(p.level, p.column) for p in mine]
    xs += [_origin_x(level, column) for level, column in slots] or [0.0]
    return MARGIN - min(xs), top + 52


def card_origin(
    mine: tuple[PlacedCard, ...],
    top: float,
    level: int,
    column: int,
    slots: tuple[tuple[int, int], ...] = (),
) -> tuple[float, float]:
    x0, y0 = mine_origin(mine, top, slots)
    return x0 + _origin_x(level, column), y0 + (level - 1) * CARD_H


def slots_of(view: ImperialMinersView, seat: ImperialMinersSeatView) -> tuple[tuple[int, int], ...]:
    """(level, column) of each free place the viewer's revealed card may go and the picture
    shows: every place below Level I, and on Level I those next to its cards (farther
    ones play as the farthest offered: the moves name them without a slot)."""
    chain = view.chain
    if seat.player != view.viewer or chain is None or chain.stage != "place":
        return ()
    level = CONTENT.cards[chain.card].level
    columns = placements(seat.mine, level)
    if level == 1:
        taken = {p.column for p in seat.mine if p.level == 1}
        columns = tuple(c for c in columns if not taken or {c - 1, c + 1} & taken)
    return tuple((level, c) for c in columns)


def _slot(svg: ET.Element, seat: int, level: int, column: int, x: float, y: float) -> None:
    where = f"Level {ROMAN.get(level, level)}, column {column}"
    group = titled_group(svg, slot_id(seat, level, column), f"a free place: {where}")
    element(
        group,
        "rect",
        x=x + 3,
        y=y + 3,
        width=CARD_W - 6,
        height=CARD_H - 6,
        rx=4,
        fill=SLOT,
        stroke="#cfc",
        stroke_width=2,
        stroke_dasharray="6 4",
    )
    _text(group, x + 20, y + CARD_H / 2 + 5, "place here", TEXT, "#cfc")


def _seat_head(view: ImperialMinersView, seat: ImperialMinersSeatView) -> str:
    you = " (you)" if seat.player == view.viewer else ""
    head = f"{seat.player}{you}: {seat.coins} coins, {seat.vp} VP, {seat.carts} cart(s), "
    head += f"Progress {seat.progress}, {seat.hand_size} in hand"
    if view.phase == "choose":
        head += ", has chosen" if seat.has_chosen else ", choosing"
    if seat.played:
        head += f", played {CONTENT.cards[seat.played].name}"
    return head


def _hand(svg: ET.Element, view: ImperialMinersView, index: int, top: float) -> float:
    """Draws a seat's hand from ``top``; returns its height."""
    seat = view.seats[index]
    own = seat.player == view.viewer
    label = "your hand" if own else f"{seat.player}'s hand ({seat.hand_size})"
    _text(svg, MARGIN, top + 14, label, TEXT, "#eee")
    top += 22
    x: float = MARGIN
    height: float = BACK_H
    if own:
        for i, card in enumerate(view.hand):
            group = titled_group(svg, hand_id(i), card_title(card))
            group.set("class", "zoom")
            _card_face(group, card, x + i * (CARD_W + 6), top)
        x += len(view.hand) * (CARD_W + 6)
        height = CARD_H if view.hand else BACK_H
    else:
        for i in range(seat.hand_size):
            group = titled_group(svg, f"back-{index}-{i}", f"a card in {seat.player}'s hand")
            _card_back(group, x + i * (BACK_W + 4), top, BACK_W, BACK_H, "?")
        x += seat.hand_size * (BACK_W + 4) + 10
    if seat.has_chosen and seat.played is None:
        group = titled_group(svg, f"choice-{index}", "the card chosen this round")
        if own and view.my_choice is not None:
            group.set("class", "zoom")
            _card_face(group, view.my_choice, x + 10, top)
            height = CARD_H
        else:
            _card_back(group, x + 10, top, 80, BACK_H, "chosen")
    return 22 + height


def _surface(svg: ET.Element, index: int, left: float, top: float, width: float) -> None:
    """The Surface board over Level I, its three effects side by side (each pickable)."""
    group = titled_group(svg, f"surface-{index}", "the Surface board")
    element(group, "rect", x=left, y=top, width=width, height=24, rx=3, fill=SURFACE)
    _text(group, left + 6, top + 17, "SURFACE", TEXT, "#fff")
    step = (width - 84) / len(CONTENT.surface)
    for i, effect in enumerate(CONTENT.surface):
        part = titled_group(group, surface_effect_id(index, i), f"Surface: {effect_words(effect)}")
        x = left + 80 + i * step
        element(part, "rect", x=x, y=top + 2, width=step - 4, height=20, rx=3, fill="#6f5536")
        node = _text(part, x + 5, top + 17, effect_words(effect), TEXT, "#fff")
        _fit(node, effect_words(effect), TEXT, step - 14)


def _seat(svg: ET.Element, view: ImperialMinersView, index: int, top: float) -> float:
    """Draws one seat from ``top``; returns where the next seat starts."""
    seat = view.seats[index]
    colour = SEAT_FILL[index % len(SEAT_FILL)]
    element(svg, "rect", x=MARGIN, y=top + 2, width=16, height=16, fill=colour, stroke="#000")
    _text(svg, MARGIN + 24, top + 15, _seat_head(view, seat), TEXT, "#eee")
    slots = slots_of(view, seat)
    x0, y0 = mine_origin(seat.mine, top, slots)
    level_1 = [_origin_x(1, p.column) for p in seat.mine if p.level == 1]
    level_1 += [_origin_x(1, c) for level, c in slots if level == 1]
    left = x0 + min(level_1, default=0.0)
    right = x0 + max(level_1, default=0.0) + CARD_W
    _surface(svg, index, left, y0 - 28, max(right - left, 3 * CARD_W))
    for placed in seat.mine:
        x, y = card_origin(seat.mine, top, placed.level, placed.column, slots)
        _placed(svg, index, placed, x, y)
    for level, column in slots:
        _slot(svg, index, level, column, *card_origin(seat.mine, top, level, column, slots))
    levels = max([p.level for p in seat.mine] + [level for level, _ in slots], default=0)
    hand_top = y0 + levels * CARD_H + 8
    return hand_top + _hand(svg, view, index, hand_top) + 24


def progress_space(space: int) -> tuple[float, float]:
    """Top-left corner of Progress space ``space`` (1-based along the three boards)."""
    board, i = divmod(space - 1, SPACES_PER_BOARD)
    return MARGIN + board * (SPACES_PER_BOARD * SPACE_W + BOARD_GAP) + i * SPACE_W, PROGRESS_TOP


def _progress(svg: ET.Element, view: ImperialMinersView) -> None:
    for b, side in enumerate(view.progress_sides):
        spec = CONTENT.boards[b][side]
        for i, reward in enumerate(spec.spaces):
            space = b * SPACES_PER_BOARD + i + 1
            group = titled_group(
                svg,
                f"progress-{space}",
                f"Progress space {space} (board {b + 1}{side}): {effect_words(reward)}",
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
            reward_text = effect_words(reward).replace("draw a Level ", "draw ")
            node = _text(group, x + 4, y + 16, reward_text, TEXT)
            _fit(node, reward_text, TEXT, SPACE_W - 10)
            here = [k for k, s in enumerate(view.seats) if s.progress == space]
            for n, k in enumerate(here):
                cx = x + 12 + 17 * n
                element(
                    group, "circle", cx=cx, cy=y + 36, r=8, fill=SEAT_FILL[k % 5], stroke="#000"
                )
                element(
                    group,
                    "text",
                    view.seats[k].player[:1],
                    x=cx,
                    y=y + 40.5,
                    font_size=TEXT,
                    font_family=FONT,
                    fill="#111",
                    text_anchor="middle",
                )
        final = f"board {b + 1}{side}, final: {effect_words(spec.final)}"
        x = progress_space(b * SPACES_PER_BOARD + 1)[0]
        node = _text(svg, x, PROGRESS_TOP + SPACE_H + 18, final, TEXT, "#eee")
        _fit(node, final, TEXT, SPACES_PER_BOARD * SPACE_W - 4)


def _event_line(view: ImperialMinersView) -> str:
    if view.event is None:
        return "no Event in force"
    return "Event: " + event_line(CONTENT.events[view.event])


def _width(view: ImperialMinersView) -> int:
    """Wide enough for the widest Mine (slots included) and for the viewer's hand."""
    widths = [MIN_WIDTH, 2 * MARGIN + (CARD_W + 6) * (len(view.hand) + 1) + 100]
    for seat in view.seats:
        places = [(p.level, p.column) for p in seat.mine] + list(slots_of(view, seat))
        xs = [_origin_x(level, column) for level, column in places] or [0.0]
        widths.append(int(max(xs) - min(xs)) + max(CARD_W, 3 * CARD_W) + 2 * MARGIN)
    return max(widths)


def draw(view: ImperialMinersView) -> str:
    svg = ET.Element("svg", {"xmlns": "http://www.w3.org/2000/svg", "version": "1.1"})
    head = f"Imperial Miners - round {view.round} of {CONTENT.rounds}"
    head += f", {view.rounds_left} left, phase {view.phase}"
    element(svg, "title", head)
    background = element(svg, "rect", fill=BACKGROUND)
    _text(svg, MARGIN, 28, head, 16, "#eee")
    event = _text(svg, MARGIN, 52, _event_line(view), TEXT, "#eee")
    _fit(event, _event_line(view), TEXT, MIN_WIDTH - 2 * MARGIN)
    _progress(svg, view)
    top = float(SEATS_TOP)
    for index in range(len(view.seats)):
        top = _seat(svg, view, index, top)
    if view.results:
        results = ", ".join(f"{p}: {view.scores.get(p, 0)} VP {r}" for p, r in view.results.items())
        _text(svg, MARGIN, top + 10, results, TEXT, "#eee")
    width, height = _width(view), int(top + 30)
    for node in (svg, background):
        node.set("width", str(width))
        node.set("height", str(height))
    svg.set("viewBox", f"0 0 {width} {height}")
    return ET.tostring(svg, encoding="unicode")
