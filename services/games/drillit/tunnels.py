"""The tunnel map: where a Path piece may go, when the exit is reached, where an Abyss
opens, and whether the exit can still be reached at all.

"The exit" is the exit option holding the Exit piece (``state.exit``, chosen at setup,
moved once by Plan B; see setup_rules). Both printed exit options stay off limits for Path
pieces, so Plan B always has its space."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Final

from services.games.drillit.actions import Excavate
from services.games.drillit.content import CONTENT, Layout
from services.games.drillit.hexgrid import Hex, distance, distinct_rotations, opposite, rotate
from services.games.drillit.state import DrillitState, PlacedPiece

#: the cells of a way to an exit: from the one next to the exit (first) back to the
#: frontier cell it starts from (last), each next to the one before, all free
_Way = tuple[int, ...]


def layout(state: DrillitState) -> Layout:
    return _LAYOUTS[state.distance]


# (Final: compiled, read from a C static; ``CONTENT.x`` or ``ev.X`` is a look-up of the
# imported name in the module's dict and one of its attribute, at every use)
_LAYOUTS: Final = CONTENT.layouts
_PIECES: Final = CONTENT.pieces


def exits(state: DrillitState) -> tuple[Hex, ...]:
    """Where the Exit piece stands: the only exit that wins."""
    return (layout(state).exits[state.exit],)


def plan_b_exit(state: DrillitState) -> str | None:
    """The exit option Plan B would move the Exit piece to, if it may still move."""
    if not state.plan_b:
        return None
    other = _OTHER_EXITS[state.distance].get(state.exit)  # (asked at every decision)
    return _other_exit(state.distance, state.exit) if other is None else other


def _other_exit(distance_name: str, exit_option: str) -> str:
    return next(k for k in sorted(CONTENT.layouts[distance_name].exits) if k != exit_option)


#: map -> exit option -> the other option (``_other_exit``), worked out once
_OTHER_EXITS: Final = {
    name: {option: _other_exit(name, option) for option in lay.exits}
    for name, lay in CONTENT.layouts.items()
}


def openings(piece: str, rotation: int) -> tuple[int, ...]:
    # every placement and view asks: read from the table of the pieces' six turns (a
    # compiled call and two look-ups, not a call through an lru_cache's wrapper)
    turns = _OPENINGS.get(piece)
    if turns is not None and 0 <= rotation < 6:
        return turns[rotation]
    return rotate(CONTENT.pieces[piece].openings, rotation)


def canonical_rotation(piece: str, rotation: int) -> int:
    """The smallest rotation giving the same shape (a straight piece turned 3 is turned 0),
    so each distinct placement is one legal action."""
    turns = _CANONICAL.get(piece)  # (the table of the six turns, as ``openings``)
    if turns is not None and 0 <= rotation < 6:
        return turns[rotation]
    return _canonical_rotation(piece, rotation)


def _canonical_rotation(piece: str, rotation: int) -> int:
    shape = openings(piece, rotation)
    return next(k for k in range(6) if openings(piece, k) == shape)


#: piece -> its openings turned 0 to 5 (``openings``), worked out once
_OPENINGS: Final = {
    piece: tuple([rotate(p.openings, k) for k in range(6)]) for piece, p in CONTENT.pieces.items()
}
#: piece -> the canonical rotation of each of its turns 0 to 5 (``canonical_rotation``)
_CANONICAL: Final = {
    piece: tuple([_canonical_rotation(piece, k) for k in range(6)]) for piece in CONTENT.pieces
}


def piece_openings(state: DrillitState) -> dict[Hex, tuple[int, ...]]:
    return {p.cell: openings(p.piece, p.rotation) for p in state.placed}


def is_free(state: DrillitState, cell: Hex, occupied: dict[Hex, tuple[int, ...]]) -> bool:
    """Inside the map, off the Tank (touching it is fine), not an exit, Abyss or piece."""
    return (
        cell in _open_ground(state.distance) and cell not in occupied and cell not in state.abysses
    )


@functools.cache
def _open_ground(distance_name: str) -> frozenset[Hex]:
    """The map's cells a piece could ever take: off the Tank and both exit options."""
    lay = CONTENT.layouts[distance_name]
    return lay.cells - CONTENT.tank_cells - frozenset(lay.exits.values())


def fits(cell: Hex, shape: tuple[int, ...], occupied: dict[Hex, tuple[int, ...]]) -> bool:
    """Every edge shared with a placed piece agrees: tunnel meets tunnel, rock meets rock."""
    for d in range(6):
        other = occupied.get(cell.neighbour(d))
        if other is not None and (d in shape) != (opposite(d) in other):
            return False
    return True


def connects(
    cell: Hex, shape: tuple[int, ...], occupied: dict[Hex, tuple[int, ...]], anchor: Hex | None
) -> bool:
    """The new piece fits its neighbours and an opening meets the Tank or a placed piece
    (only ``anchor`` when given: the second Turbo piece continues the first)."""
    if not fits(cell, shape, occupied):
        return False
    for d in shape:
        other = cell.neighbour(d)
        if anchor is not None:
            if other == anchor:
                return True
            continue
        if other in CONTENT.tank_cells or other in occupied:
            return True
    return False


def frontier(state: DrillitState) -> tuple[Hex, ...]:
    """Free cells a new piece could connect into."""
    return _dug(state).frontier


def has_frontier(state: DrillitState) -> bool:
    """Whether a new piece could connect anywhere (``frontier``, without listing it: the
    crystal abilities ask after every action)."""
    return bool(_dug(state).frontier_cells)


def excavations(state: DrillitState, owner: str, piece: str) -> tuple[Excavate, ...]:
    """``Excavate`` actions for every placement of ``owner``'s ``piece``."""
    return _dug(state).excavations(owner, piece)


def placements(
    state: DrillitState, piece: str, anchor: Hex | None = None
) -> tuple[tuple[Hex, int], ...]:
    """Every (cell, rotation) where ``piece`` may be laid, rotations giving the same
    shape counted once — the placements ``can_place`` accepts (a property test compares
    them with every cell and rotation tried through it)."""
    return _dug(state).placements(piece, anchor)


def tunnels_of(state: DrillitState) -> _Dug:
    """The tunnels of ``state``, for a caller asking them several questions (``_dug``)."""
    return _dug(state)


#: the tunnels last asked about (the state's ``placed`` and ``abysses`` by identity: states
#: share them until a piece or an Abyss is laid, and equal ones would be hashed piece by
#: piece, in Python). One reference, replaced whole.
_last_dug: _Dug | None = None


def _dug(state: DrillitState) -> _Dug:
    """The tunnels of ``state``: the last ones asked about if they are the same, else the
    map's own while nothing is laid, else those with one piece or one Abyss more worked
    out from them (each turn lays a few; a test compares them with the tunnels worked out
    afresh), else worked out afresh."""
    global _last_dug
    placed, abysses, distance_name = state.placed, state.abysses, state.distance
    last = _last_dug
    if (
        last is not None
        and last.placed is placed
        and last.abysses is abysses
        and last.distance == distance_name
    ):
        return last
    if not placed and not abysses:  # a match's first turns: the map's own tunnels
        dug = _untouched(distance_name)
    elif last is None or (followed := last.followed_by(distance_name, placed, abysses)) is None:
        dug = _Dug.laid(distance_name, placed, abysses)
    else:
        dug = followed
    _last_dug = dug
    return dug


@functools.cache
def _untouched(distance_name: str) -> _Dug:
    """The tunnels of a map without pieces or Abysses, one per map for every match (what
    a ``_Dug`` remembers follows from its pieces and Abysses alone), instead of worked out
    afresh at the start of each match."""
    return _Dug.laid(distance_name, (), ())


def _edge_mask(piece: str, rotation: int) -> int:
    """The edge mask (bit d: an opening towards direction d) of ``piece`` turned so."""
    masks = _EDGE_MASKS.get(piece)  # (the table of the six turns, as ``openings``)
    if masks is not None and 0 <= rotation < 6:
        return masks[rotation]
    return sum(1 << d for d in openings(piece, rotation))


#: piece -> the edge mask of each of its turns 0 to 5 (``_edge_mask``), worked out once
_EDGE_MASKS: Final = {
    piece: tuple([sum(1 << d for d in shape) for shape in turns])
    for piece, turns in _OPENINGS.items()
}


class _Dug:
    """What the tunnel questions read of a state (the map, the pieces, the Abysses), with
    their answers remembered. The work is done on the map's cell numbers (``_Ground``):
    sets and sorts of ints instead of ``Hex``es, whose hashing and ordering run Python."""

    def __init__(
        self,
        distance_name: str,
        placed: tuple[PlacedPiece, ...],
        abysses: tuple[Hex, ...],
        shapes: dict[int, int],
        taken: frozenset[int],
        frontier_cells: tuple[int, ...],
        bordered: dict[int, int],
        required: dict[int, int],
        keys: dict[int, int],
        ways: dict[str, _Way | None] | None = None,
    ) -> None:
        self.distance = distance_name
        self.placed = placed
        self.abysses = abysses
        self.ground = _ground(distance_name)
        #: cell number -> edge mask of the openings of the piece on it (pieces lie on open
        #: ground: ``can_place`` allows nothing else; one off it counts for nothing here)
        self.shapes = shapes
        #: numbers of the open-ground cells a piece or an Abyss holds
        self.taken = taken
        #: free cells a new piece could connect into: open ground touching the Tank or an
        #: opening of a piece, neither taken; in ``Hex`` order, as cell numbers are
        self.frontier_cells = frontier_cells
        #: cell number -> edge mask of the directions where a piece lies next to it
        self.bordered = bordered
        #: cell number -> edge mask of those directions where that piece opens towards it
        self.required = required
        #: frontier cell number -> its ``_key``: the situation ``_fitting`` reads there
        #: (kept up to date by ``followed_by``: a piece changes it only around itself)
        self.keys = keys
        self._placements: dict[tuple[str, Hex | None], tuple[tuple[Hex, int], ...]] = {}
        #: (cell number, rotation) of each placement of a second Turbo piece, as
        #: ``_placements`` lists them
        self._numbered: dict[tuple[str, Hex | None], list[tuple[int, int]]] = {}
        self._spots: dict[tuple[str, Hex | None], frozenset[tuple[int, int]]] = {}
        #: exit option -> the cells of a way to it from the frontier, as ``exit_reachable``
        #: found it (``_Way``); None when it cannot be reached
        self.ways: dict[str, _Way | None] = {} if ways is None else ways
        self._excavations: dict[tuple[str, str], tuple[Excavate, ...]] = {}

    @classmethod
    def laid(
        cls, distance_name: str, placed: tuple[PlacedPiece, ...], abysses: tuple[Hex, ...]
    ) -> _Dug:
        """The tunnels worked out afresh from the pieces and Abysses."""
        ground = _ground(distance_name)
        index, toward = ground.index, ground.toward
        shapes: dict[int, int] = {}
        for p in placed:
            cell = index.get(p.cell)
            if cell is not None:
                shapes[cell] = _edge_mask(p.piece, p.rotation)
        taken = frozenset(shapes).union(index[c] for c in abysses if c in index)
        cells = set(ground.rim)
        bordered: dict[int, int] = {}
        required: dict[int, int] = {}
        for cell, mask in shapes.items():
            cells.update(toward[cell][d] for d in range(6) if mask >> d & 1)
            _border(ground.borders[cell], mask, bordered, required)
        cells.discard(-1)
        frontier = tuple(sorted(cells - taken))
        keys = {c: _key(ground, c, bordered, required) for c in frontier}
        return cls(
            distance_name, placed, abysses, shapes, taken, frontier, bordered, required, keys
        )

    def followed_by(
        self, distance_name: str, placed: tuple[PlacedPiece, ...], abysses: tuple[Hex, ...]
    ) -> _Dug | None:
        """These tunnels with the one piece or the one Abyss ``placed`` / ``abysses`` have
        more; None when they differ otherwise. With T the cells taken and F the frontier,
        a piece on open-ground cell c gives T' = T + {c} and F' = (F - {c}) + (the free
        cells its openings face, not in T'); an Abyss on c gives T' = T + {c}, F' = F - {c}."""
        if distance_name != self.distance:
            return None
        known = len(self.placed)
        if (
            len(placed) == known + 1
            and (abysses is self.abysses or abysses == self.abysses)
            and placed[:known] == self.placed
        ):
            piece = placed[known]
            cell = self.ground.number(piece.cell)
            if cell is None:  # off the ground: it changes nothing here
                return self._with(
                    placed, abysses, self.taken, self.frontier_cells, self.keys, dict(self.ways)
                )
            if cell in self.shapes:
                return None  # a second piece on one cell: worked out afresh
            mask = _edge_mask(piece.piece, piece.rotation)
            taken = self.taken | {cell}
            # F is the key set of ``keys`` (frontier cell -> its situation): one dict to
            # bring up to date instead of a set of F beside it
            keys = dict(self.keys)
            ways = None  # a piece off the frontier could open ground no search has seen
            if cell in keys:
                del keys[cell]
                ways = self._ways_past(cell, mask)
            bordered, required = dict(self.bordered), dict(self.required)
            tank_sides = self.ground.tank_sides
            # ``_border`` in the loop that adds to F and keys the cells whose borders the
            # piece changed (``_key`` written out: a call per cell costs as much)
            for other, facing, edge in self.ground.borders[cell]:
                b = bordered[other] = bordered.get(other, 0) | facing
                r = required.get(other, 0)
                if mask & edge:  # the piece opens onto ``other`` (open ground)
                    r = required[other] = r | facing
                    on_frontier = other not in taken  # (joins F, or stays)
                else:
                    on_frontier = other in keys
                if on_frontier:
                    keys[other] = other << 18 | (tank_sides[other] | b) << 12 | b << 6 | r
            return _Dug(
                distance_name,
                placed,
                abysses,
                {**self.shapes, cell: mask},
                taken,
                tuple(sorted(keys)),
                bordered,
                required,
                keys,
                ways,
            )
        if (
            len(abysses) == len(self.abysses) + 1
            and (placed is self.placed or placed == self.placed)
            and abysses[:-1] == self.abysses
        ):
            cell = self.ground.number(abysses[-1])
            if cell is None:
                return self._with(
                    placed, abysses, self.taken, self.frontier_cells, self.keys, dict(self.ways)
                )
            left = tuple(c for c in self.frontier_cells if c != cell)
            keys = {c: k for c, k in self.keys.items() if c != cell}
            ways = self._ways_past(cell, 0)
            return self._with(placed, abysses, self.taken | {cell}, left, keys, ways)
        return None

    def _ways_past(self, cell: int, mask: int) -> dict[str, _Way | None]:
        """The answers of ``exit_reachable`` that still hold once ``cell``, free or on the
        frontier, is taken (by a piece with edge ``mask``; 0: an Abyss). A way not through
        ``cell`` still starts on the frontier and runs over free cells. A way starting on
        ``cell`` whose piece opens onto the way's next cell goes on from there: that cell
        joins the frontier (a piece dug along the way, as most are, needs no new search).
        An exit out of reach stays so: the cells a piece there opens onto lie next to a
        frontier cell, in the region already searched, and the region only loses ``cell``."""
        ways = self.ways
        if not ways:  # (no search yet: most tunnels are asked only about placements)
            return {}  # (a dict of their own: the new tunnels write their answers in it)
        kept: dict[str, _Way | None] = {}
        for option, way in ways.items():
            if way is None or cell not in way:
                kept[option] = way
            elif mask and len(way) > 1 and way[-1] == cell:
                after = way[-2]
                for other, _facing, edge in self.ground.borders[cell]:
                    if other == after:
                        if mask & edge:
                            kept[option] = way[:-1]
                        break
        return kept

    def _with(
        self,
        placed: tuple[PlacedPiece, ...],
        abysses: tuple[Hex, ...],
        taken: frozenset[int],
        frontier_cells: tuple[int, ...],
        keys: dict[int, int],
        ways: dict[str, _Way | None],
    ) -> _Dug:
        """These tunnels' pieces on open ground (their shapes and borders), with ``placed``
        and ``abysses`` and the cells taken, frontier and ways to the exits given."""
        return _Dug(
            self.distance,
            placed,
            abysses,
            self.shapes,
            taken,
            frontier_cells,
            self.bordered,
            self.required,
            keys,
            ways,
        )

    @functools.cached_property
    def occupied(self) -> dict[Hex, tuple[int, ...]]:
        return {p.cell: openings(p.piece, p.rotation) for p in self.placed}

    @functools.cached_property
    def frontier(self) -> tuple[Hex, ...]:
        cells = self.ground.cells
        return tuple(cells[i] for i in self.frontier_cells)

    def placements(self, piece: str, anchor: Hex | None) -> tuple[tuple[Hex, int], ...]:
        known = self._placements.get((piece, anchor))
        if known is None:
            known = self._placements[piece, anchor] = self._place(piece, anchor)
        return known

    def excavations(self, owner: str, piece: str) -> tuple[Excavate, ...]:
        """``Excavate`` for each placement of ``owner``'s ``piece`` (actions are immutable:
        built once while the tunnels stay as they are)."""
        known = self._excavations.get((owner, piece))
        if known is None:
            known = tuple(Excavate(owner, cell, k) for cell, k in self.placements(piece, None))
            self._excavations[owner, piece] = known
        return known

    def _place(self, piece: str, anchor: Hex | None) -> tuple[tuple[Hex, int], ...]:
        """Each candidate cell's edge masks (bit d: the edge towards direction d): which
        edges a placed piece borders, which of those it opens, which reach the Tank or a
        piece (or only the anchor); then each rotation is a few bit operations instead of
        a walk around the cell (``fits`` and ``connects``). Without an anchor the masks of
        every frontier cell are known (``keys``), and the placements on a
        cell in each situation are remembered per map and shape (``_shape_on``): cells
        meet the same few situations again and again."""
        ground = self.ground
        base = _PIECES[piece].openings
        if anchor is None:  # each frontier cell's placements, by its key
            shape = _shape_on(self.distance, base)
            table = shape.spots
            # (cell numbers and keys as objects, not ints: compiled, an int read from a
            # tuple or dict is unboxed, and boxed again, a new object for most keys, to
            # look it up)
            keys: dict[Any, Any] = self.keys
            frontier: tuple[Any, ...] = self.frontier_cells
            spots: list[tuple[Hex, int]] = []
            for cell in frontier:
                key = keys[cell]
                here = table.get(key)
                if here is None:
                    here = table[key] = _spots_at(ground.cells, shape.fit, shape.rotations, key)
                spots += here
            return tuple(spots)
        rotations = _rotation_masks(base)
        # the second Turbo piece: next to the first, continuing it
        bordered, required = self.bordered, self.required
        numbered: list[tuple[int, int]] = []
        index, taken = ground.index, self.taken
        at = index.get(anchor, -1)
        for c in anchor.neighbours():
            number = index.get(c)
            if number is None or number in taken:
                continue
            b, r = bordered.get(number, 0), required.get(number, 0)
            toward = ground.toward[number]
            reaching = sum(1 << d for d in range(6) if at >= 0 and toward[d] == at)
            numbered += [(number, k) for k, mask in rotations if mask & b == r and mask & reaching]
        self._numbered[piece, anchor] = numbered
        hexes = ground.cells
        return tuple((hexes[cell], k) for cell, k in numbered)

    def accepts(self, piece: str, cell: Hex, rotation: int, anchor: Hex | None) -> bool:
        """``can_place``, read off the placements: a placement there of the same shape
        (tests/unit/games/drillit/test_drillit_placements_fast.py compares them)."""
        if not 0 <= rotation < 6:
            return False
        number = self.ground.number(cell)
        if number is None:
            return False
        rotation = canonical_rotation(piece, rotation)
        if anchor is None:  # a frontier cell, in a situation that shape fits so turned
            key = self.keys.get(number)
            if key is None:
                return False
            base = CONTENT.pieces[piece].openings
            return rotation in _fits(_fit_table(base), _rotation_masks(base), key & _SITUATION)
        spots = self._spots.get((piece, anchor))
        if spots is None:  # built when first asked: most placements listed are never laid
            self.placements(piece, anchor)
            spots = self._spots[piece, anchor] = frozenset(self._numbered[piece, anchor])
        return (number, rotation) in spots


def _border(
    around: tuple[tuple[int, int, int], ...],
    mask: int,
    bordered: dict[int, int],
    required: dict[int, int],
) -> None:
    """Mark a piece with edge ``mask`` on the cells ``around`` it (``_Ground.borders``):
    each borders it on the edge facing it, and must open there if it opens towards that
    cell."""
    for other, facing, edge in around:
        bordered[other] = bordered.get(other, 0) | facing
        if mask & edge:
            required[other] = required.get(other, 0) | facing


#: the situation bits of a ``_key`` (below the cell number)
_SITUATION = (1 << 18) - 1


def _key(ground: _Ground, cell: int, bordered: dict[int, int], required: dict[int, int]) -> int:
    """``cell``'s number over its situation (``_fitting``): the edges towards the Tank or
    a piece, those bordering a piece, those where a bordering piece opens."""
    b = bordered.get(cell, 0)
    return cell << 18 | (ground.tank_sides[cell] | b) << 12 | b << 6 | required.get(cell, 0)


def _fits(
    fit: dict[int, tuple[int, ...]], rotations: tuple[tuple[int, int], ...], situation: int
) -> tuple[int, ...]:
    """``_fitting``, remembered in the shape's ``fit`` table."""
    ks = fit.get(situation)
    if ks is None:
        ks = fit[situation] = _fitting(rotations, situation)
    return ks


def _spots_at(
    cells: tuple[Hex, ...],
    fit: dict[int, tuple[int, ...]],
    rotations: tuple[tuple[int, int], ...],
    key: int,
) -> tuple[tuple[Hex, int], ...]:
    """The placements (cell, rotation) of a shape (its ``_fit_table`` and
    ``_rotation_masks``) on the cell and in the situation ``key`` (``_key``) packs, as
    ``_place`` lists them."""
    fitting = _fits(fit, rotations, key & _SITUATION)
    where = cells[key >> 18]
    return tuple([(where, k) for k in fitting])


class _Shape:
    """A piece shape (its openings, ``base``) on a map: ``spots``, a cell's number and
    situation (``cell << 18 | situation``, its ``_key``) -> the placements (cell,
    rotation) of that shape there (``_spots_at``), each worked out when first asked (the
    map's geometry alone decides them; each cell meets a few situations), and the shape's
    fit table and rotations for that."""

    def __init__(self, base: tuple[int, ...]) -> None:
        # (a plain dict: a look-up in a dict subclass, with its ``__missing__``, goes
        # through the generic subscript)
        self.spots: dict[Any, tuple[tuple[Hex, int], ...]] = {}
        self.fit = _fit_table(base)
        self.rotations = _rotation_masks(base)


#: map -> piece shape -> its ``_Shape`` there (dicts read in compiled code, not an
#: lru_cache: its wrapper builds a key of the two at every listing)
_SHAPES_ON: Final[dict[str, dict[tuple[int, ...], _Shape]]] = {}


def _shape_on(distance_name: str, base: tuple[int, ...]) -> _Shape:
    shapes = _SHAPES_ON.get(distance_name)
    if shapes is None:
        shapes = _SHAPES_ON[distance_name] = {}
    shape = shapes.get(base)
    if shape is None:
        if len(shapes) >= 256:  # (the content's shapes are a few)
            shapes.clear()
        shape = shapes[base] = _Shape(base)
    return shape


@functools.lru_cache(maxsize=64)
def _fit_table(base: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    """Per piece shape: a cell's situation (``_fitting``) -> the rotations fitting it.
    Bounded: 18 bits of edge masks, of which a map meets a few hundred."""
    return {}


def _fitting(rotations: tuple[tuple[int, int], ...], situation: int) -> tuple[int, ...]:
    """The rotations (``_rotation_masks``) that fit a cell whose ``situation`` packs three
    edge masks: towards the Tank or a piece (bits 12-17), bordering a piece (6-11), where
    a bordering piece opens (0-5). A fit opens where those pieces open, and only there
    among the edges they border, and opens towards the Tank or a piece somewhere."""
    reaching, bordered, required = situation >> 12, situation >> 6 & 63, situation & 63
    return tuple(k for k, mask in rotations if mask & bordered == required and mask & reaching)


@functools.lru_cache(maxsize=64)
def _rotation_masks(base: tuple[int, ...]) -> tuple[tuple[int, int], ...]:
    """(rotation, edge mask of its openings) for each distinct rotation of a piece."""
    return tuple((k, sum(1 << d for d in rotate(base, k))) for k in distinct_rotations(base))


def can_place(
    state: DrillitState, piece: str, cell: Hex, rotation: int, anchor: Hex | None
) -> bool:
    occupied = _dug(state).occupied
    if not 0 <= rotation < 6 or not is_free(state, cell, occupied):
        return False
    if anchor is not None and cell not in anchor.neighbours():
        return False
    return connects(cell, openings(piece, rotation), occupied, anchor)


def may_lay(state: DrillitState, piece: str, cell: Hex, rotation: int, anchor: Hex | None) -> bool:
    """``can_place``, read off the placements (which are worked out once per tunnels):
    the rules' check of an Excavate or Turbo placement."""
    return _dug(state).accepts(piece, cell, rotation, anchor)


def _distance(a: Hex, b: Hex) -> int:
    """``hexgrid.distance``, compiled (hexgrid is uncompiled: a call there costs a frame)."""
    dq, dr = a.q - b.q, a.r - b.r
    return (abs(dq) + abs(dr) + abs(dq + dr)) // 2


def reaches_exit(state: DrillitState, cell: Hex, shape: Iterable[int]) -> bool:
    for goal in exits(state):
        # the distance first: most pieces lie far from the exit, and ``Hex`` equality runs
        # Python for each opening
        if _distance(cell, goal) == 1 and any(cell.neighbour(d) == goal for d in shape):
            return True
    return False


def exit_reachable(state: DrillitState) -> bool:
    """The exit can still be reached through free cells from the current frontier
    (assuming suitable pieces come: the pile holds every turn).

    A best-first search on the map's cell numbers, nearest the exit first (a bucket per
    distance to the exit: no heap, whose every push and pop is a call): it answers as a
    breadth-first search over every free cell would (it too visits the frontier's whole
    free region before saying no), but while the way is open, as in nearly every match, it
    walks straight there instead of flooding the map after every turn. The way found is
    kept with the tunnels and passed on to those with a piece or an Abyss more while it
    stays clear (``_Dug._ways_past``): then no search at all."""
    dug = _dug(state)
    ways = dug.ways
    if state.exit not in ways:
        ways[state.exit] = _way_to_exit(dug, state.exit)
    return ways[state.exit] is not None


def _way_to_exit(dug: _Dug, exit_option: str) -> _Way | None:
    """A way from the frontier over free cells to one next to the exit (``_Way``)."""
    ground, blocked = dug.ground, dug.taken
    to_exit = ground.to_exit[exit_option]
    # bucket d: the cells reached at distance d from the exit, not yet visited; ``near``
    # the nearest bucket that may hold any. Every open-ground cell is 1 or more from the
    # exit (which is not open ground), so the first cell at 1 taken ends the search.
    buckets: list[list[int]] = [[] for _ in range(ground.farthest[exit_option] + 1)]
    came: dict[int, int] = {}  # cell -> the cell it was reached from (-1: the frontier)
    near = len(buckets)
    for cell in dug.frontier_cells:
        came[cell] = -1
        d = to_exit[cell]
        buckets[d].append(cell)
        if d < near:
            near = d
    while near < len(buckets):
        bucket = buckets[near]
        if not bucket:
            near += 1
            continue
        cell = bucket.pop()
        if near == 1:
            way = []
            while cell >= 0:
                way.append(cell)
                cell = came[cell]
            return tuple(way)
        for n in ground.links[cell]:
            if n not in came and n not in blocked:
                came[n] = cell
                d = to_exit[n]
                buckets[d].append(n)
                if d < near:
                    near = d
    return None


@dataclass(frozen=True)
class _Ground:
    """A map's open ground (``_open_ground``) numbered in ``Hex`` order, so that searches
    and sorts over it hash and compare ints, not ``Hex``es."""

    cells: tuple[Hex, ...]
    index: dict[Hex, int]
    #: per cell number, the numbers of its neighbours on open ground
    links: tuple[tuple[int, ...], ...]
    #: per cell number, its neighbour's number in each direction (-1: not open ground)
    toward: tuple[tuple[int, ...], ...]
    #: per cell number, the edge mask of the directions where the Tank is
    tank_sides: tuple[int, ...]
    #: per cell number, (neighbour's number, the neighbour's edge bit towards the cell, the
    #: cell's edge bit towards it) for each neighbour on open ground
    borders: tuple[tuple[tuple[int, int, int], ...], ...]
    #: the cells touching the Tank
    rim: tuple[int, ...]
    #: exit option -> per cell number, its hex distance to that exit (1: next to it)
    to_exit: dict[str, tuple[int, ...]]
    #: ``_coordinates`` of each cell -> its number (``index`` by ints)
    numbers: dict[int, int]
    #: exit option -> the greatest of ``to_exit``'s distances to it
    farthest: dict[str, int]

    def number(self, cell: Hex) -> int | None:
        """``index.get(cell)``, by the cell's coordinates: a ``Hex``'s hash is the
        dataclass's, Python code called from the dict's look-up."""
        q, r = cell.q, cell.r
        if -_REACH < q < _REACH and -_REACH < r < _REACH:
            return self.numbers.get(_coordinates(q, r))
        return self.index.get(cell)


#: coordinates within this of the origin are numbered by ``_coordinates`` (maps are far
#: smaller)
_REACH: Final = 1 << 10


def _coordinates(q: int, r: int) -> int:
    """One int for the coordinates of a cell within ``_REACH`` of the origin."""
    return (q + _REACH) << 12 | (r + _REACH)


@functools.cache
def _ground(distance_name: str) -> _Ground:
    cells = tuple(sorted(_open_ground(distance_name)))
    index = {c: i for i, c in enumerate(cells)}
    links = tuple(tuple(index[n] for n in c.neighbours() if n in index) for c in cells)
    toward = tuple(tuple(index.get(n, -1) for n in c.neighbours()) for c in cells)
    tank_sides = tuple(
        sum(1 << d for d, n in enumerate(c.neighbours()) if n in CONTENT.tank_cells) for c in cells
    )
    borders = tuple(
        tuple((other, 1 << (e + 3) % 6, 1 << e) for e, other in enumerate(ways) if other >= 0)
        for ways in toward
    )
    rim = tuple(i for i, sides in enumerate(tank_sides) if sides)
    exits_at = CONTENT.layouts[distance_name].exits
    to_exit = {k: tuple(distance(c, goal) for c in cells) for k, goal in exits_at.items()}
    numbers = {_coordinates(c.q, c.r): i for i, c in enumerate(cells)}
    farthest = {k: max(far) for k, far in to_exit.items()}
    return _Ground(
        cells, index, links, toward, tank_sides, borders, rim, to_exit, numbers, farthest
    )


def distance_field(state: DrillitState) -> dict[Hex, int]:
    """Pieces still needed from each free cell to the exit (1 = a piece here can win)."""
    blocked = frozenset(p.cell for p in state.placed) | frozenset(state.abysses)
    return _distance_field(state.distance, state.exit, blocked)


@functools.lru_cache(maxsize=256)
def _distance_field(
    distance_name: str, exit_option: str, blocked: frozenset[Hex]
) -> dict[Hex, int]:
    lay = CONTENT.layouts[distance_name]
    free = _open_ground(distance_name) - blocked
    field: dict[Hex, int] = {}
    queue: deque[Hex] = deque()
    for n in lay.exits[exit_option].neighbours():
        if n in free:
            field[n] = 1
            queue.append(n)
    while queue:
        cell = queue.popleft()
        step = field[cell] + 1
        for n in cell.neighbours():
            if n in free and n not in field:
                field[n] = step
                queue.append(n)
    return field


def abyss_cell(state: DrillitState) -> Hex | None:
    """Next to the Path piece closest to the exit, where it fits the path (on a free cell
    an opening of that piece faces); before any piece is laid, next to the Tank.

    Worked out on the map's cell numbers (``_Dug``): a free cell is one of open ground
    not taken (``is_free``), the nearest is the one of least distance to the exit
    (``_Ground.to_exit``), ties going to the first in ``Hex`` order, as cells are
    numbered."""
    dug = _dug(state)
    ground = dug.ground
    if state.placed:
        (goal,) = exits(state)
        # latest piece wins ties: it is the head of the tunnel being dug (the last laid
        # of those closest to the exit, its cell's piece)
        head_piece, nearest = state.placed[-1], -1
        for p in reversed(state.placed):
            near = _distance(p.cell, goal)
            if nearest < 0 or near < nearest:
                head_piece, nearest = p, near
        head = head_piece.cell
        number = ground.number(head)
        if number is None:  # (never: pieces lie on open ground) its neighbours looked up
            toward = tuple(ground.index.get(n, -1) for n in head.neighbours())
        else:
            toward = ground.toward[number]  # (-1: not open ground)
        taken = dug.taken
        shape = openings(head_piece.piece, head_piece.rotation)
        candidates = [n for d in shape if (n := toward[d]) >= 0 and n not in taken]
        if not candidates:
            candidates = [n for n in toward if n >= 0 and n not in taken]
    else:
        candidates = list(dug.frontier_cells)
    if not candidates:
        return None
    to_exit = ground.to_exit[state.exit]
    return ground.cells[min(candidates, key=lambda n: (to_exit[n], n))]
