"""A full Crashland state consistent with the player's view, for search bots.

Hidden from the player: the face-down map cards (any arrangement of the cards not yet
explored is as likely: exploring reveals cells, never which card lies elsewhere) and the
order of the draw pile below the cards a Satellite Uplink showed (the event and equipment
cards in no hand, discard pile or uplink). The one thing the view leaves out that the rules
need, whether the astronaut flew this movement phase, shows in the legal actions (ending
the movement needs a move or a flight).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from typing import Any

from services.bots.search.determinization import Determinization
from services.games.crashland import actions as act
from services.games.crashland.content import CONTENT
from services.games.crashland.model import Phase
from services.games.crashland.rules import EVENT_DECK
from services.games.crashland.state import CrashlandState
from services.games.crashland.view import CrashlandView


def sample(
    view: CrashlandView, player: str, legal: Sequence[Any], rng: random.Random
) -> Determinization:
    known = {cell.position: cell.card for cell in view.cells if cell.card is not None}
    unseen = sorted(set(CONTENT.map_ids) - set(known.values()))
    rng.shuffle(unseen)
    deal = iter(unseen)
    grid = tuple(
        known[cell.position] if cell.position in known else next(deal) for cell in view.cells
    )
    hand = tuple(c.card for c in view.hand)
    known_top = tuple(c.card for c in view.uplink_cards)
    discard = tuple(c.card for c in view.discard_pile)
    pile = Counter(CONTENT.deck_ids)
    pile.subtract(hand + known_top + discard)
    below = sorted(pile.elements())
    rng.shuffle(below)
    flew = (
        view.phase is Phase.MOVEMENT
        and view.cards_moved == 0
        and any(isinstance(a, act.EndMovement) for a in legal)
    )
    state = CrashlandState(
        player=view.player,
        options={},
        phase=view.phase,
        turn=view.turn,
        map_shuffled=True,
        grid=grid,
        explored=frozenset(known),
        astronaut=view.astronaut,
        oxygen=view.oxygen,
        battery=view.battery,
        located={t.number: t.position for t in view.tanks if t.position is not None},
        collected=tuple(t.number for t in view.tanks if t.collected),
        hand=hand,
        deck_ready=True,
        draw_pile=view.draw_pile_size - view.uplink_size,
        known_top=known_top,
        discard=discard,
        cards_moved=view.cards_moved,
        flew=flew,
        drawn=tuple(c.card for c in view.last_drawn),
        applied_event=view.applied_event.card if view.applied_event is not None else None,
        checking_hand=view.phase is Phase.EVENTS and view.awaiting == Phase.EVENTS.value,
        uplink_count=view.arranging,
        uplink_to_draw=0,
        result=view.result,
        end_reason=view.end_reason,
    )
    return Determinization(state, {EVENT_DECK: tuple(below)})
