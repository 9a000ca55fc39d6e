"""A full Imperial Miners state consistent with a seat's view, for search bots.

Public: every Mine, coins, VP, Progress markers, the Event in force, the sizes of hands,
draw piles and discard piles, and each seat's chain stage. Hidden from the seat: the other
seats' hands and their secret choices before the reveal, which cards lie in the discard
piles and in what order the draw piles and the Event deck are (the view lists no
discards nor past Events).

Each level's cards not seen (in no Mine, not in the seat's hand, not a revealed choice) are
dealt uniformly to that level's draw pile and discard pile by their sizes; the rest of
them are in the other seats' hands (so how many of each level a hand holds is fixed by the
counts) and are dealt to those hands by their sizes. A seat shown to have chosen gets a
card of its sampled hand as its choice. The remaining Events are drawn among all but the
one in force. Another seat's chain shows only its stage: it is placed at the card that
seat played, the start of every chain.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from services.bots.search.determinization import Determinization
from services.games.imperial_miners.content import CONTENT
from services.games.imperial_miners.evolve import LEVEL_DECKS
from services.games.imperial_miners.flow import SHUFFLED_AT_SETUP
from services.games.imperial_miners.rules import playable
from services.games.imperial_miners.state import (
    Chain,
    ImperialMinersState,
    Phase,
    PlacedCard,
    Stage,
)
from services.games.imperial_miners.view import ImperialMinersView

_LEVEL_4 = CONTENT.deck(4)


def _level(card: str) -> str:
    return f"level_{CONTENT.cards[card].level}"


def sample(
    view: ImperialMinersView, player: str, legal: Sequence[Any], rng: random.Random
) -> Determinization:
    phase = Phase(view.phase)
    revealed = phase is Phase.MINE
    mines = {s.player: s.mine for s in view.seats}
    others = [s for s in view.seats if s.player != player]
    seen = Counter(c.card for mine in mines.values() for c in mine)
    seen.update(view.hand)
    seen.update(s.played for s in others if s.played is not None and revealed)
    if view.my_choice is not None and view.my_choice not in view.hand:
        seen[view.my_choice] += 1  # a card played at once, drawn for want of a playable one
    level_4_left = view.deck_sizes.get("level_4", 0)
    face_up_4 = _LEVEL_4[len(_LEVEL_4) - level_4_left :] if level_4_left else ()
    seen.update(face_up_4)
    piles: dict[str, tuple[str, ...]] = {}
    discards: dict[str, tuple[str, ...]] = {}
    in_hands: list[str] = []
    for deck in (*LEVEL_DECKS, "level_4"):
        level = int(deck[-1])
        unseen = [c for c in CONTENT.deck(level) if not seen[c]]
        rng.shuffle(unseen)
        if deck == "level_4":
            in_hands += unseen[view.discard_sizes.get(deck, 0) :]
            discards_4 = tuple(unseen[: view.discard_sizes.get(deck, 0)])
            if discards_4:
                discards[deck] = discards_4
            continue
        pile, thrown = view.deck_sizes.get(deck, 0), view.discard_sizes.get(deck, 0)
        piles[deck] = tuple(unseen[:pile])
        discards[deck] = tuple(unseen[pile : pile + thrown])
        in_hands += unseen[pile + thrown :]
    hands, chosen = _hands(view, player, in_hands, rng)
    current = view.event
    events = [e for e in CONTENT.events if e != current]
    rng.shuffle(events)
    piles["events"] = tuple(events[: view.deck_sizes.get("events", 0)])
    chains = _chains(view, player, mines) if revealed else {}
    state = ImperialMinersState(
        players=tuple(s.player for s in view.seats),
        first_game=False,
        phase=phase,
        sides=view.progress_sides,
        shuffled=frozenset(SHUFFLED_AT_SETUP),
        piles={deck: len(cards) for deck, cards in piles.items()},
        level_4=face_up_4,
        discards=discards,
        draws=(),
        hands=hands,
        kept=frozenset(
            s.player for s in view.seats if phase is not Phase.KEEP or s.player != player
        ),
        coins={s.player: s.coins for s in view.seats},
        vp={s.player: s.vp for s in view.seats},
        progress={s.player: s.progress for s in view.seats},
        mines=mines,
        round=view.round,
        event=current,
        events_revealed=CONTENT.event_deck - view.rounds_left,
        forced=(),
        chosen=chosen,
        revealed=revealed,
        chains=chains,
        end_resolved=False,
        scores=dict(view.scores),
        results=dict(view.results),
        end_reason="",
    )
    return Determinization(state, piles)


def _hands(
    view: ImperialMinersView, player: str, in_hands: list[str], rng: random.Random
) -> tuple[dict[str, tuple[str, ...]], dict[str, str]]:
    """The other seats' hands, and the choices of those shown to have chosen. In the choose
    phase a seat still choosing holds a card it can play (else it would have been made to
    play the top Level I card): deals that break this are drawn again (a few times)."""
    others = [s for s in view.seats if s.player != player]
    revealed = view.phase == Phase.MINE.value
    coins = {s.player: s.coins for s in view.seats}
    mines = {s.player: s.mine for s in view.seats}
    hands: dict[str, tuple[str, ...]] = {}
    chosen: dict[str, str] = {}
    for _ in range(20):
        rng.shuffle(in_hands)
        hands = {player: view.hand}
        chosen = {player: view.my_choice} if view.my_choice is not None else {}
        at = 0
        consistent = True
        for seat in others:
            hand = tuple(in_hands[at : at + seat.hand_size])
            at += seat.hand_size
            hands[seat.player] = hand
            if revealed:
                if seat.played is not None:
                    chosen[seat.player] = seat.played
                continue
            if view.phase != Phase.CHOOSE.value:
                continue
            probe = ImperialMinersState(
                players=(seat.player,),
                hands={seat.player: hand},
                coins=coins,
                mines=mines,
                event=view.event,
            )
            can_play = playable(probe, seat.player)
            if seat.has_chosen:
                if can_play:
                    chosen[seat.player] = can_play[rng.randrange(len(can_play))]
                elif at < len(in_hands):  # made to play the top Level I card
                    chosen[seat.player] = in_hands[-1]
            elif not can_play:
                consistent = False
        if consistent:
            break
    return hands, chosen


def _chains(
    view: ImperialMinersView, player: str, mines: dict[str, tuple[PlacedCard, ...]]
) -> dict[str, Chain]:
    chains: dict[str, Chain] = {}
    for seat in view.seats:
        if seat.player == player and view.chain is not None:
            c = view.chain
            chains[player] = Chain(c.card, Stage(c.stage), c.level, c.column)
            continue
        if not seat.chain_stage:
            continue
        stage = Stage(seat.chain_stage)
        card = seat.played or ""
        start = next((p for p in mines[seat.player] if p.card == card), None)
        if start is None or stage in (Stage.PLACE, Stage.SURFACE, Stage.FINISHING, Stage.DONE):
            chains[seat.player] = Chain(card, stage)
        else:
            chains[seat.player] = Chain(card, stage, start.level, start.column)
    return chains
