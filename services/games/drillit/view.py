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
from services.games.drillit.state import DrillitState, PlacedPiece
from services.games.drillit.tunnels import layout, openings, plan_b_exit
from services.games.frozen import quick_init

BOX_NAMES = ("yellow", "orange", "red")


@quick_init
@dataclass(frozen=True)
class DrillitPieceView:
    piece: str
    shape: str
    openings: tuple[int, ...]
    crystal: str


@quick_init
@dataclass(frozen=True)
class DrillitPlayerView:
    player: str
    character: str
    room: int | None
    path_piece: DrillitPieceView | None


@quick_init
@dataclass(frozen=True)
class DrillitRoomView:
    room: int
    gnomes: tuple[str, ...]
    fires: int
    armor_intact: bool
    goblins_inside: int


@quick_init
@dataclass(frozen=True)
class DrillitSectorView:
    """``spaces[0]`` is radar space 1 (touching the Armor); the last is the blue one."""

    sector: int
    spaces: tuple[int, ...]


@quick_init
@dataclass(frozen=True)
class DrillitTileView:
    piece: str
    cell: Hex
    rotation: int
    openings: tuple[int, ...]
    crystal: str


@quick_init
@dataclass(frozen=True)
class DrillitEventCardView:
    card: str
    goblin_advance: str
    fire_intensification: str
    overheating: str
    main_event: str
    attack: tuple[str, ...]


@quick_init
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
    found = _PIECES.get(piece)
    if found is None:
        p = CONTENT.pieces[piece]
        found = _PIECES[piece] = DrillitPieceView(p.id, p.shape, p.openings, p.crystal)
    return found


def card_view(card_id: str) -> DrillitEventCardView:
    found = _CARDS.get(card_id)
    if found is None:
        card = CONTENT.cards[card_id]
        subs = card.sub_events
        found = _CARDS[card_id] = DrillitEventCardView(
            card.id, subs["advance"], subs["intensify"], subs["overheat"], card.main, card.attack
        )
    return found


# Parts of the view made once (the content is fixed) or kept from the last view while what
# they show is the same: compared by identity, as states are immutable and share what a
# fold did not change. Unchanged parts are then the same objects from view to view, which
# spares building them and lets a replay see at once what did not change.
_PIECES: dict[str, DrillitPieceView] = {}
_CARDS: dict[str, DrillitEventCardView] = {}
_TANK_CELLS = tuple(sorted(CONTENT.tank_cells))
_EXITS = {
    name: tuple(lay.exits[k] for k in sorted(lay.exits)) for name, lay in CONTENT.layouts.items()
}


class _Kept:
    """The last parts drawn, each with what it was drawn from (one attribute a pair, so a
    part is never read with another's sources)."""

    def __init__(self) -> None:
        self.players: tuple[tuple[Any, ...], tuple[DrillitPlayerView, ...]] = ((), ())
        self.rooms: tuple[tuple[Any, ...], tuple[DrillitRoomView, ...]] = ((), ())
        self.radar: tuple[Any, tuple[DrillitSectorView, ...]] = (None, ())
        self.tiles: tuple[Any, tuple[DrillitTileView, ...]] = (None, ())
        #: per placed piece (by id, the piece kept alive here): its tile
        self.tile_of: dict[int, tuple[PlacedPiece, DrillitTileView]] = {}


_kept = _Kept()


def _same(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _players(state: DrillitState) -> tuple[DrillitPlayerView, ...]:
    drawn_from = (state.players, state.characters, state.rooms, state.hands)
    kept = _kept.players
    if _same(drawn_from, kept[0]):
        return kept[1]
    players = tuple(
        [
            DrillitPlayerView(
                p,
                state.characters.get(p, ""),
                state.rooms.get(p),
                piece_view(state.hands[p]) if p in state.hands else None,
            )
            for p in state.players
        ]
    )
    _kept.players = (drawn_from, players)
    return players


def _rooms(state: DrillitState) -> tuple[DrillitRoomView, ...]:
    drawn_from = (state.players, state.rooms, state.fires, state.armor_destroyed, state.radar)
    kept = _kept.rooms
    if _same(drawn_from, kept[0]):
        return kept[1]
    rooms = tuple(
        [
            DrillitRoomView(
                room,
                state.occupants(room),
                state.fires.get(room, 0),
                room == CONTENT.centre or room not in state.armor_destroyed,
                state.goblins(CONTENT.faces_sector[room])[0] if room in CONTENT.faces_sector else 0,
            )
            for room in (CONTENT.centre, *CONTENT.rooms)
        ]
    )
    _kept.rooms = (drawn_from, rooms)
    return rooms


def _radar(state: DrillitState) -> tuple[DrillitSectorView, ...]:
    kept = _kept.radar
    if state.radar is kept[0]:
        return kept[1]
    radar = tuple([DrillitSectorView(s.sector, s.spaces[1:]) for s in state.radar])
    _kept.radar = (state.radar, radar)
    return radar


def _tiles(state: DrillitState) -> tuple[DrillitTileView, ...]:
    placed = state.placed
    kept_tiles = _kept.tiles
    if placed is kept_tiles[0]:
        return kept_tiles[1]
    tile_of = _kept.tile_of
    if len(tile_of) >= 4096:
        tile_of.clear()
    tiles = []
    for p in placed:
        kept = tile_of.get(id(p))
        if kept is None or kept[0] is not p:
            tile = DrillitTileView(
                p.piece,
                p.cell,
                p.rotation,
                openings(p.piece, p.rotation),
                CONTENT.pieces[p.piece].crystal,
            )
            kept = tile_of[id(p)] = (p, tile)
        tiles.append(kept[1])
    shown = tuple(tiles)
    _kept.tiles = (placed, shown)
    return shown


def make_view(state: DrillitState, viewer: str | None) -> DrillitView:
    lay = layout(state)
    won = {None: "", True: "won", False: "lost"}[state.won]
    # by position, in the order of the fields (the reference test checks them): matching
    # 33 keywords cost ~2.5 µs a view
    return DrillitView(
        viewer,  # viewer
        state.phase.value,  # phase
        state.difficulty,  # difficulty
        state.distance,  # distance
        state.turn,  # turn
        state.active,  # active
        state.action_points,  # action_points
        _players(state),  # players
        _rooms(state),  # rooms
        _radar(state),  # radar
        CONTENT.life_track,  # life_track
        state.temporary_damage,  # temporary_damage
        state.permanent_damage,  # permanent_damage
        dict(state.crystals),  # crystals
        state.storage_limit,  # storage_limit
        lay.map_radius,  # map_radius
        _TANK_CELLS,  # tank_cells
        _EXITS[state.distance],  # exits
        lay.exits[state.exit],  # exit_piece
        state.exit,  # exit_option
        plan_b_exit(state),  # plan_b_option
        _tiles(state),  # tiles
        state.abysses,  # abysses
        state.abysses_found,  # abysses_found
        card_view(state.current_card) if state.current_card else None,  # current_event
        BOX_NAMES[lightest_box(state.abysses_found)],  # lightest_attack_box
        len(state.event_deck) if state.event_deck_built else 0,  # event_deck_size
        state.path_pile,  # path_pile_size
        state.blackout,  # blackout
        state.trap,  # trap
        piece_view(state.turbo_piece) if state.turbo_piece else None,  # turbo_piece
        won,  # result
        state.end_reason,  # end_reason
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
