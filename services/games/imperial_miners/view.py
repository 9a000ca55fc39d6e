"""What a seat sees: its own hand (and its secret choice), everyone's Mine, coins, VP,
Progress markers, the Event in force and the rounds left. Other seats' hands and chosen
cards stay hidden (only their sizes and "has chosen"), until the reveal; face-down decks
show only their sizes. A spectator (viewer None) sees no hand."""

from __future__ import annotations

from dataclasses import dataclass

from services.games.frozen import quick_init
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.mine import complete_carts
from services.games.imperial_miners.state import ImperialMinersState, PlacedCard


@quick_init
@dataclass(frozen=True)
class ImperialMinersSeatView:
    player: str
    coins: int
    vp: int
    progress: int
    carts: int
    mine: tuple[PlacedCard, ...]
    hand_size: int
    has_chosen: bool
    #: the card played this round, once revealed (None before the reveal)
    played: str | None
    chain_stage: str


@quick_init
@dataclass(frozen=True)
class ImperialMinersChainView:
    card: str
    stage: str
    level: int
    column: int


@quick_init
@dataclass(frozen=True)
class ImperialMinersView:
    viewer: str | None
    phase: str
    round: int
    rounds_left: int
    event: str | None
    progress_sides: tuple[str, ...]
    seats: tuple[ImperialMinersSeatView, ...]
    hand: tuple[str, ...]
    my_choice: str | None
    chain: ImperialMinersChainView | None
    deck_sizes: dict[str, int]
    discard_sizes: dict[str, int]
    scores: dict[str, int]
    results: dict[str, str]


def _seat(s: ImperialMinersState, p: str) -> ImperialMinersSeatView:
    chain = s.chains.get(p)
    return ImperialMinersSeatView(
        player=p,
        coins=s.coins[p],
        vp=s.vp[p],
        progress=s.progress[p],
        carts=complete_carts(s.mine(p)),
        mine=s.mine(p),
        hand_size=len(s.hands[p]),
        has_chosen=p in s.chosen,
        played=s.chosen.get(p) if s.revealed else None,
        chain_stage=chain.stage.value if chain is not None else "",
    )


#: per seat: what its view was drawn from and the view, kept from view to view, so a seat
#: that did not change is the same object (a replay sees it unchanged at once); its mine's
#: complete carts are counted again only when the mine changed
_seats: dict[str, tuple[tuple[object, ...], ImperialMinersSeatView]] = {}


def _seat_kept(s: ImperialMinersState, p: str) -> ImperialMinersSeatView:
    chain = s.chains.get(p)
    key = (
        s.coins[p],
        s.vp[p],
        s.progress[p],
        s.mine(p),
        len(s.hands[p]),
        p in s.chosen,
        s.chosen.get(p) if s.revealed else None,
        chain.stage if chain is not None else None,
    )
    kept = _seats.get(p)
    if kept is not None:
        last = kept[0]
        if last[3] is key[3] and last == key:
            return kept[1]
    seat = _seat(s, p)
    if len(_seats) >= 256:  # seats of many matches met in turn: start again
        _seats.clear()
    _seats[p] = (key, seat)
    return seat


def make_view(s: ImperialMinersState, viewer: str | None) -> ImperialMinersView:
    seat = viewer if viewer in s.players else None
    chain = s.chains.get(seat) if seat is not None else None
    return ImperialMinersView(
        viewer=viewer,
        phase=s.phase.value,
        round=s.round,
        # the cards left in the Event deck show the rounds that remain
        rounds_left=CONTENT.event_deck - s.events_revealed,
        event=s.event,
        progress_sides=s.sides,
        seats=tuple([_seat_kept(s, p) for p in s.players]),
        hand=s.hands.get(seat, ()) if seat is not None else (),
        my_choice=s.chosen.get(seat) if seat is not None else None,
        chain=(
            ImperialMinersChainView(chain.card, chain.stage.value, chain.level, chain.column)
            if chain is not None
            else None
        ),
        deck_sizes={**s.piles, "level_4": len(s.level_4)},
        discard_sizes={d: len(cards) for d, cards in s.discards.items()},
        scores=dict(s.scores),
        results=dict(s.results),
    )
