"""Crashland's legal actions as the player names them and picks them on the picture
(``Game.describe``): a move is the card stepped onto, a pair spent is its two cards in
hand (a Jetpack's destination too), an uplink's order is the seen cards picked top first.
Ids are the picture's own (``picture.py``)."""

from __future__ import annotations

from typing import Any

from services.games.contract import Described
from services.games.crashland import actions as act
from services.games.crashland.model import Axis, Boost, MapKind, Position
from services.games.crashland.picture import cell_id, hand_id, uplink_id
from services.games.crashland.view import CardView, CellView, CrashlandView

_EQUIPMENT = {
    "dome_shelter": "Dome Shelter",
    "jetpack": "Jetpack",
    "solar_recharge": "Solar Recharge",
    "satellite_uplink": "Satellite Uplink",
}


def card_name(card: CardView) -> str:
    if card.kind == "event":
        system = card.system.value if card.system else "?"
        return f"Event {card.number} (-{card.loss} {system})"
    return _EQUIPMENT.get(card.kind, card.kind.replace("_", " "))


def _cell(view: CrashlandView, at: Position) -> CellView | None:
    index = at.row * view.columns + at.column
    if 0 <= at.row < view.rows and 0 <= at.column < view.columns:
        return view.cells[index]
    return None


def place_name(cell: CellView | None) -> str:
    """What the player sees on a map card."""
    if cell is None or not cell.explored or cell.kind is None:
        return "a face-down card"
    if cell.kind is MapKind.BEACON:
        way = "up-down" if cell.beacon_axis is Axis.VERTICAL else "left-right"
        return f"Beacon {cell.beacon_number} ({way})"
    return {
        MapKind.SPACESHIP: "the spaceship",
        MapKind.DOME: "a Dome",
        MapKind.PLAIN: "a plain",
    }[cell.kind]


def _pair(view: CrashlandView, kind: str) -> tuple[str, ...]:
    """The hand's cards of ``kind`` (the pair spent is two of them)."""
    return tuple(hand_id(i) for i, c in enumerate(view.hand) if c.kind == kind)


def _boost(boost: Boost | str) -> str:
    if boost == Boost.BOTH:
        return "+2 oxygen and +2 battery"
    return f"+3 {getattr(boost, 'value', boost)}"


def describe(view: CrashlandView, action: Any) -> Described:
    match action:
        case act.Move(direction=direction, pay=pay):
            way = getattr(direction, "value", direction)
            cost = getattr(pay, "value", pay)
            paid = "free" if cost == "free" else f"costs 1 {cost}"
            at = view.astronaut.step(direction) if view.astronaut is not None else None
            if at is None:
                return Described(f"move {way} ({paid})")
            onto = place_name(_cell(view, at))
            return Described(f"move {way} onto {onto} ({paid})", (cell_id(at.row, at.column),))
        case act.EndMovement():
            return Described("end the movement")
        case act.DiscardEquipment(card=card):
            held = [i for i, c in enumerate(view.hand) if c.card == card]
            name = card_name(view.hand[held[0]]) if held else card
            return Described(f"discard a {name}", (hand_id(held[0]),) if held else ())
        case act.KeepHand():
            return Described("keep your hand")
        case act.SpendDomeShelter(boost=boost):
            return Described(
                f"spend the Dome Shelter pair: {_boost(boost)}", _pair(view, "dome_shelter")
            )
        case act.SpendJetpack(destination=d):
            onto = place_name(_cell(view, d))
            return Described(
                f"spend the Jetpack pair: fly to {onto} at row {d.row}, column {d.column}"
                " (1 battery)",
                (*_pair(view, "jetpack"), cell_id(d.row, d.column)),
            )
        case act.SpendSolarRecharge():
            return Described(
                "spend the Solar Recharge pair: +2 battery", _pair(view, "solar_recharge")
            )
        case act.SpendSatelliteUplink():
            return Described(
                "spend the Satellite Uplink pair: look at the next 6 cards",
                _pair(view, "satellite_uplink"),
            )
        case act.ArrangeUplink(order=order):
            seen = {c.card: i for i, c in enumerate(view.uplink_cards)}
            names = [card_name(view.uplink_cards[seen[c]]) if c in seen else c for c in order]
            return Described(
                "put the cards back, top first: " + ", ".join(names),
                tuple(uplink_id(seen[c]) for c in order if c in seen),
            )
        case act.EndTurn():
            return Described("end the turn (systems check)")
    return Described(repr(action))
