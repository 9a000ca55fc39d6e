"""What a player sees. Everything on the table is public in this cooperative game,
including the Path pieces in hand (the rulebook's example has the Mechanic choosing
between its own and the Robot's piece); the Event Deck's order and the face-down Path
pile stay hidden: only their sizes are shown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from services.games.drillit import actions as act
from services.games.drillit.content import CONTENT
from services.games.drillit.goblin_attack import lightest_box
from services.games.drillit.hexgrid import Hex
from services.games.drillit.state import DrillitState
from services.games.drillit.tunnels import layout, openings, plan_b_exit

BOX_NAMES = ("yellow", "orange", "red")


@dataclass(frozen=True)
class DrillitPieceView:
    piece: str
    shape: str
    openings: tuple[int, ...]
    crystal: str


@dataclass(frozen=True)
class DrillitPlayerView:
    player: str
    character: str
    room: int | None
    path_piece: DrillitPieceView | None


@dataclass(frozen=True)
class DrillitRoomView:
    room: int
    gnomes: tuple[str, ...]
    fires: int
    armor_intact: bool
    goblins_inside: int


@dataclass(frozen=True)
class DrillitSectorView:
    """``spaces[0]`` is radar space 1 (touching the Armor); the last is the blue one."""

    sector: int
    spaces: tuple[int, ...]


@dataclass(frozen=True)
class DrillitTileView:
    piece: str
    cell: Hex
    rotation: int
    openings: tuple[int, ...]
    crystal: str


@dataclass(frozen=True)
class DrillitEventCardView:
    card: str
    goblin_advance: str
    fire_intensification: str
    overheating: str
    main_event: str
    attack: tuple[str, ...]


@dataclass(frozen=True)
class DrillitView:
    viewer: str | None
    phase: str
    difficulty: str
    distance: str
    turn: int
    active: str | None
    action_points: int
    players: tuple[DrillitPlayerView, ...]
    rooms: tuple[DrillitRoomView, ...]
    radar: tuple[DrillitSectorView, ...]
    life_track: int
    temporary_damage: int
    permanent_damage: int
    crystals: dict[str, int]
    storage_limit: int
    map_radius: int
    tank_cells: tuple[Hex, ...]
    #: the printed exit options 1 and 2, in that order
    exits: tuple[Hex, ...]
    #: where the Exit piece stands (the only exit that wins), its option number
    exit_piece: Hex
    exit_option: str
    #: the exit option Plan B would move the Exit piece to (None: it can no longer move)
    plan_b_option: str | None
    tiles: tuple[DrillitTileView, ...]
    abysses: tuple[Hex, ...]
    abysses_found: int
    current_event: DrillitEventCardView | None
    lightest_attack_box: str
    event_deck_size: int
    path_pile_size: int
    blackout: bool
    trap: bool
    turbo_piece: DrillitPieceView | None
    result: str
    end_reason: str


def piece_view(piece: str) -> DrillitPieceView:
    p = CONTENT.pieces[piece]
    return DrillitPieceView(p.id, p.shape, p.openings, p.crystal)


def card_view(card_id: str) -> DrillitEventCardView:
    card = CONTENT.cards[card_id]
    subs = card.sub_events
    return DrillitEventCardView(
        card.id, subs["advance"], subs["intensify"], subs["overheat"], card.main, card.attack
    )


def make_view(state: DrillitState, viewer: str | None) -> DrillitView:
    players = tuple(
        DrillitPlayerView(
            p,
            state.characters.get(p, ""),
            state.rooms.get(p),
            piece_view(state.hands[p]) if p in state.hands else None,
        )
        for p in state.players
    )
    rooms = tuple(
        DrillitRoomView(
            room,
            state.occupants(room),
            state.fires.get(room, 0),
            room == CONTENT.centre or room not in state.armor_destroyed,
            state.goblins(CONTENT.faces_sector[room])[0] if room in CONTENT.faces_sector else 0,
        )
        for room in (CONTENT.centre, *CONTENT.rooms)
    )
    lay = layout(state)
    won = {None: "", True: "won", False: "lost"}[state.won]
    return DrillitView(
        viewer=viewer,
        phase=state.phase.value,
        difficulty=state.difficulty,
        distance=state.distance,
        turn=state.turn,
        active=state.active,
        action_points=state.action_points,
        players=players,
        rooms=rooms,
        radar=tuple(DrillitSectorView(s.sector, s.spaces[1:]) for s in state.radar),
        life_track=CONTENT.life_track,
        temporary_damage=state.temporary_damage,
        permanent_damage=state.permanent_damage,
        crystals=dict(state.crystals),
        storage_limit=state.storage_limit,
        map_radius=lay.map_radius,
        tank_cells=tuple(sorted(CONTENT.tank_cells)),
        exits=tuple(lay.exits[k] for k in sorted(lay.exits)),
        exit_piece=lay.exits[state.exit],
        exit_option=state.exit,
        plan_b_option=plan_b_exit(state),
        tiles=tuple(
            DrillitTileView(
                p.piece,
                p.cell,
                p.rotation,
                openings(p.piece, p.rotation),
                CONTENT.pieces[p.piece].crystal,
            )
            for p in state.placed
        ),
        abysses=state.abysses,
        abysses_found=state.abysses_found,
        current_event=card_view(state.current_card) if state.current_card else None,
        lightest_attack_box=BOX_NAMES[lightest_box(state.abysses_found)],
        event_deck_size=len(state.event_deck) if state.event_deck_built else 0,
        path_pile_size=state.path_pile,
        blackout=state.blackout,
        trap=state.trap,
        turbo_piece=piece_view(state.turbo_piece) if state.turbo_piece else None,
        result=won,
        end_reason=state.end_reason,
    )


def describe_action(action: Any) -> str:
    match action:
        case act.ChooseStartRoom(room=room):
            return f"start in room {room}"
        case act.ChooseStartingPlayer(player=player):
            return f"{player} starts"
        case act.Move(room=room):
            return "move to the centre" if room == CONTENT.centre else f"move to room {room}"
        case act.Carry(room=room, passenger=passenger):
            return f"fly to room {room} carrying {passenger}"
        case act.Attack(spaces=spaces):
            where = ", ".join("inside" if s == 0 else f"space {s}" for s in spaces)
            return f"attack Goblin(s): {where}"
        case act.Repair():
            return "repair the Armor"
        case act.Extinguish():
            return "put out a Fire"
        case act.Excavate(owner=owner, cell=cell, rotation=k):
            return f"excavate {owner}'s piece at ({cell.q},{cell.r}) turned {k}"
        case act.UseBlueOnFires(room=room):
            return f"blue Crystals: put out room {room}"
        case act.UseBlueOnArmor():
            return "blue Crystals: repair all Armor"
        case act.UseRedBomb(sector=sector):
            return f"red Crystals: bomb sector {sector}"
        case act.UseYellowTurbo():
            return "yellow Crystals: Turbo"
        case act.PlaceTurboPiece(cell=cell, rotation=k):
            return f"place the Turbo piece at ({cell.q},{cell.r}) turned {k}"
        case act.TakePlanB():
            return "Plan B: move the Exit piece to the other exit option"
        case act.EndTurn():
            return "end the turn"
    return repr(action)
