"""The view as text for a terminal: Event, Progress boards, each Mine as a staggered
pyramid under its Surface board, and the viewer's hand with card texts."""

from __future__ import annotations

from typing import Any

from services.games.imperial_miners import actions as act
from services.games.imperial_miners.content import CONTENT, EventCard, effect_text
from services.games.imperial_miners.effects import SPACES_PER_BOARD
from services.games.imperial_miners.state import PlacedCard
from services.games.imperial_miners.view import ImperialMinersSeatView, ImperialMinersView

CELL = 16
INITIALS = {
    "scots": "S",
    "atlanteans": "A",
    "egyptians": "E",
    "japanese": "J",
    "barbarians": "B",
    "romans": "R",
}


def card_line(card_id: str) -> str:
    card = CONTENT.cards[card_id]
    factions = "/".join(card.factions) or "no faction"
    carts = ("L" if card.cart_left else "") + ("R" if card.cart_right else "")
    effects = " OR ".join(f"[{effect_text(e)}]" for e in card.effects)
    cart_text = f", cart {carts}" if carts else ""
    about = f"level {card.level}, cost {card.cost}, {factions}{cart_text}"
    return f"{card.id} {card.name} ({about}): {effects}"


def event_line(event: EventCard) -> str:
    if event.kind == "this_round":
        parts = []
        if event.discount:
            parts.append(f"Level {event.discount_level} costs {event.discount} less")
        if event.on_place:
            where = f"a Level {event.on_place_level} card" if event.on_place_level else "a card"
            parts.append(f"placing {where}: {effect_text(event.on_place)}")
        if event.on_surface:
            parts.append(f"reaching the Surface: {effect_text(event.on_surface)}")
        text = "; ".join(parts)
    else:
        text = effect_text(event.effect)
    return f"{event.id} {event.name} ({event.kind.replace('_', ' ')}): {text}"


def _cell(placed: PlacedCard) -> str:
    card = CONTENT.cards[placed.card]
    inner = placed.card + " " + "".join(INITIALS[f] for f in card.factions)
    if placed.machinery:
        inner += f" m{placed.machinery}"
    if placed.cave_in:
        inner += " X"
    left = "<" if card.cart_left else "["
    right = ">" if card.cart_right else "]"
    return f"{left}{inner:^{CELL - 2}}{right}"


def pyramid(mine: tuple[PlacedCard, ...]) -> list[str]:
    """Card (L, c) sits half a card right of (L-1, c): x = c·CELL + (L-1)·CELL/2."""
    if not mine:
        return ["  " + "=" * CELL + " SURFACE " + "=" * CELL, "  (no cards yet)"]
    xs = {(p.level, p.column): p.column * CELL + (p.level - 1) * CELL // 2 for p in mine}
    low = min(xs.values())
    width = max(xs.values()) - low + CELL
    lines = ["  " + " SURFACE ".center(max(width, CELL), "=")]
    for level in range(1, max(p.level for p in mine) + 1):
        row = [" "] * width
        for p in mine:
            if p.level == level:
                x = xs[(p.level, p.column)] - low
                row[x : x + CELL] = _cell(p)
        lines.append(f"{level:>1} " + "".join(row).rstrip())
    return lines


def _seat(view: ImperialMinersView, seat: ImperialMinersSeatView) -> list[str]:
    mark = " (you)" if seat.player == view.viewer else ""
    chosen = ""
    if view.phase == "choose":
        chosen = ", has chosen" if seat.has_chosen else ", choosing"
    played = f", played {seat.played}" if seat.played else ""
    stage = f", {seat.chain_stage}" if seat.chain_stage and view.phase == "mine" else ""
    head = (
        f"{seat.player}{mark}: {seat.coins} coins, {seat.vp} VP, {seat.carts} carts, "
        f"Progress {seat.progress}, {seat.hand_size} in hand{chosen}{played}{stage}"
    )
    return [head, *pyramid(seat.mine)]


def _progress(view: ImperialMinersView) -> list[str]:
    if not view.progress_sides:
        return []
    lines = ["Progress boards (one marker each, boards 1→3):"]
    for b, side in enumerate(view.progress_sides):
        spec = CONTENT.boards[b][side]
        start = b * SPACES_PER_BOARD
        cells = []
        for i, reward in enumerate(spec.spaces):
            here = [s.player for s in view.seats if s.progress == start + i + 1]
            who = f" <{','.join(here)}>" if here else ""
            cells.append(f"{start + i + 1}:{effect_text(reward)}{who}")
        lines.append(f"  board {b + 1}{side}: " + " | ".join(cells))
        lines.append(f"           final: {effect_text(spec.final)}")
    waiting = [s.player for s in view.seats if s.progress == 0]
    if waiting:
        lines.append(f"  below the boards: {', '.join(waiting)}")
    return lines


def render(view: ImperialMinersView) -> str:
    lines = [
        f"Imperial Miners — round {view.round} of {CONTENT.rounds}, "
        f"{view.rounds_left} left, phase {view.phase}"
    ]
    if view.event is not None:
        lines.append("Event: " + event_line(CONTENT.events[view.event]))
    lines += _progress(view)
    surface = " | ".join(f"{i}: {effect_text(e)}" for i, e in enumerate(CONTENT.surface))
    lines.append(f"Surface board effects: {surface}")
    for seat in view.seats:
        lines += ["", *_seat(view, seat)]
    if view.viewer is not None and view.hand:
        lines += ["", "Your hand:"] + [f"  {card_line(c)}" for c in view.hand]
    if view.my_choice is not None and view.phase == "choose":
        lines.append(f"Your secret choice: {view.my_choice}")
    if view.chain is not None and view.chain.stage not in ("done", ""):
        where = "Surface board" if view.chain.level == 0 else f"level {view.chain.level}"
        lines.append(f"Your chain: {view.chain.card}, {view.chain.stage} at {where}")
    if view.results:
        lines.append("")
        lines += [f"{p}: {view.scores[p]} VP, {r}" for p, r in view.results.items()]
    return "\n".join(lines)


def describe_action(action: Any) -> str:
    match action:
        case act.KeepCards(cards=cards):
            return "keep " + ", ".join(cards)
        case act.ChooseCard(card=card):
            return "play " + card_line(card)
        case act.PlaceCard(column=column):
            return f"place in column {column}"
        case act.UseEffect(effect=i):
            return f"use effect {i}"
        case act.SkipEffect():
            return "skip this effect"
        case act.ClimbTo(column=column):
            return f"activate the card above in column {column}"
    return repr(action)
