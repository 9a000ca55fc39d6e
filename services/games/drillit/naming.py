"""Drillit!'s legal actions as the player names them and picks them on the picture
(``Game.describe``): a move is the room walked to, an attack the Goblins it removes on the
radar (or inside the room), a repair the Armor, a Fire put out the room's Fires, a piece
laid the hex, a Crystal ability the Crystals and what they act on. Ids are the picture's
own (``picture.py``)."""

from __future__ import annotations

from typing import Any

from services.games.contract import Described
from services.games.drillit import actions as act
from services.games.drillit.content import CONTENT
from services.games.drillit.hexgrid import Hex, rotate
from services.games.drillit.picture import (
    armor_id,
    crystal_id,
    fires_id,
    goblins_inside_id,
    hex_id,
    player_id,
    radar_id,
    room_id,
    sector_id,
)
from services.games.drillit.view import DrillitPieceView, DrillitView

#: the hex edges' directions as a player sees the map (``hexgrid.DIRECTIONS``' order)
EDGES = ("east", "north-east", "north-west", "west", "south-west", "south-east")


def room_name(room: int) -> str:
    return "the centre" if room == CONTENT.centre else f"room {room}"


def _walk(start: int, goal: int) -> int:
    """Rooms walked through from ``start`` to ``goal`` (1 AP each)."""
    reached, frontier, steps = {start}, {start}, 0
    while goal not in reached and frontier:
        steps += 1
        frontier = {n for r in frontier for n in CONTENT.adjacency[r]} - reached
        reached |= frontier
    return steps


def _player(view: DrillitView, name: str) -> tuple[int, Any]:
    for i, p in enumerate(view.players):
        if p.player == name:
            return i, p
    raise KeyError(name)


def _tunnels(piece: DrillitPieceView | None, rotation: int) -> str:
    if piece is None:
        return ""
    ways = [EDGES[d] for d in rotate(piece.openings, rotation)]
    return "tunnels " + ", ".join(ways[:-1]) + (" and " if len(ways) > 1 else "") + ways[-1]


def _at(cell: Hex) -> str:
    return f"({cell.q},{cell.r})"


def describe(view: DrillitView, action: Any) -> Described:
    me = next((p for p in view.players if p.player == view.viewer), None)
    here = me.room if me is not None else None
    match action:
        case act.ChooseStartRoom(room=room):
            return Described(f"start in {room_name(room)}", (room_id(room),))
        case act.ChooseStartingPlayer(player=player):
            index, _ = _player(view, player)
            who = "you start" if player == view.viewer else f"{player} starts"
            return Described(who, (player_id(index),))
        case act.Move(room=room):
            robot = me is not None and me.character == "robot"
            cost = 1 if robot or here is None else _walk(here, room)
            verb = "fly" if robot else "walk"
            return Described(f"{verb} to {room_name(room)} ({cost} AP)", (room_id(room),))
        case act.Carry(room=room, passenger=passenger):
            return Described(
                f"fly to {room_name(room)} carrying {passenger} (1 AP)", (room_id(room),)
            )
        case act.Attack(spaces=spaces):
            sector = CONTENT.faces_sector.get(here or 0, 0)
            targets = tuple(
                goblins_inside_id(here or 0) if s == 0 else radar_id(sector, s) for s in spaces
            )
            where = " and ".join(
                "inside the room" if s == 0 else f"on space {s} of sector {sector}" for s in spaces
            )
            count = "a Goblin" if len(spaces) == 1 else "two Goblins"
            return Described(f"attack {count} {where} (1 AP)", targets)
        case act.Repair():
            return Described(f"repair the Armor of {room_name(here or 0)}", (armor_id(here or 0),))
        case act.Extinguish():
            return Described(
                f"put out a Fire in {room_name(here or 0)} (1 AP)", (fires_id(here or 0),)
            )
        case act.Excavate(owner=owner, cell=cell, rotation=k):
            _, holder = _player(view, owner)
            whose = "your" if owner == view.viewer else f"{owner}'s"
            tunnels = _tunnels(holder.path_piece, k)
            return Described(
                f"dig {whose} piece into {_at(cell)}, {tunnels} (1 AP)", (hex_id(cell),)
            )
        case act.UseBlueOnFires(room=room):
            return Described(
                f"blue Crystals: put out every Fire in {room_name(room)}",
                (crystal_id("blue"), fires_id(room)),
            )
        case act.UseBlueOnArmor():
            broken = tuple(armor_id(r.room) for r in view.rooms if r.room and not r.armor_intact)
            return Described(
                "blue Crystals: repair every broken Armor", (crystal_id("blue"),), broken
            )
        case act.UseRedBomb(sector=sector):
            return Described(
                f"red Crystals: bomb the Goblins of sector {sector}",
                (crystal_id("red"), sector_id(sector)),
            )
        case act.UseYellowTurbo():
            return Described(
                "yellow Crystals: Turbo (lay two random pieces)", (crystal_id("yellow"),)
            )
        case act.PlaceTurboPiece(cell=cell, rotation=k):
            tunnels = _tunnels(view.turbo_piece, k)
            return Described(f"lay the Turbo piece into {_at(cell)}, {tunnels}", (hex_id(cell),))
        case act.TakePlanB():
            other = [c for c in view.exits if c != view.exit_piece]
            return Described(
                "Plan B: move the Exit piece to the other exit option",
                tuple(hex_id(c) for c in other[:1]),
            )
        case act.EndTurn():
            return Described("end the turn")
    return Described(repr(action))
