"""Verifying a finished match's randomness from its exported log (docs/DESIGN.md §4).

Checks that each revealed seed matches its commitment (published before play; a game
commits only with the chance services it uses, and the others must stay silent), that every
roll and shuffle re-derives from the seed and the counters in the log, that the counters
leave no gaps (nothing rolled off the record), and that every card drawn is the card the
re-derived deck order puts on top. A move taken back (ActionsUndone) must restore the
state the board's own events give at the version it names.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from services.adapters import folding
from services.adapters.views import encode_state
from services.common.envelope import is_a, unpack
from services.games.chance import DeckPiles
from services.games.contract import RuleViolation
from services.games.randomness import DerivedRandom, commitment
from tabletop.v1 import envelope_pb2
from tabletop.v1 import platform_events_pb2 as pe


@dataclass
class Verification:
    match_id: str
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems and self.checked > 0


def _of(
    envelopes: Iterable[envelope_pb2.EventEnvelope], stream: str
) -> list[envelope_pb2.EventEnvelope]:
    return sorted((e for e in envelopes if e.stream == stream), key=lambda e: e.sequence)


def _seed(
    events: list[envelope_pb2.EventEnvelope],
    revealed_cls: type,
    committed_cls: type,
    result: Verification,
    name: str,
) -> bytes | None:
    committed = [unpack(e, committed_cls) for e in events if is_a(e, committed_cls)]
    revealed = [unpack(e, revealed_cls) for e in events if is_a(e, revealed_cls)]
    if not committed:
        result.problems.append(f"{name}: no commitment in the log")
        return None
    if not revealed:
        result.problems.append(f"{name}: the seed was never revealed")
        return None
    seed = bytes.fromhex(revealed[-1].seed)  # type: ignore[attr-defined]
    if commitment(seed) != committed[0].commitment:  # type: ignore[attr-defined]
        result.problems.append(f"{name}: the revealed seed does not match its commitment")
        return None
    result.checked += 1
    return seed


def _unused(events: list[envelope_pb2.EventEnvelope], result: Verification, name: str) -> None:
    """A service the match committed no seed with: nothing of it may be in the log."""
    if events:
        result.problems.append(
            f"{name}: the match committed no {name} seed, yet {len(events)} {name} "
            "event(s) are in its log"
        )


def verify_match(envelopes: list[envelope_pb2.EventEnvelope]) -> Verification:
    match_id = envelopes[0].match_id if envelopes else ""
    result = Verification(match_id)
    for stream in ("board", "dice", "decks", "scoring"):
        sequences = [e.sequence for e in _of(envelopes, stream)]
        if sequences != list(range(1, len(sequences) + 1)):
            result.problems.append(f"{stream}: sequence numbers have gaps or repeats")
    board = _of(envelopes, "board")
    created = next((unpack(e, pe.MatchCreated) for e in board if is_a(e, pe.MatchCreated)), None)
    assert created is None or isinstance(created, pe.MatchCreated)
    dice = _of(envelopes, "dice")
    decks = _of(envelopes, "decks")
    # A game commits seeds only with the chance services it uses: the match's creation
    # says which (an empty commitment), and such a service must have nothing in the log.
    uses_dice = created is None or bool(created.dice_commitment)
    uses_decks = created is None or bool(created.decks_commitment)
    dice_seed = decks_seed = None
    if uses_dice:
        dice_seed = _seed(dice, pe.DiceSeedRevealed, pe.DiceCommitted, result, "dice")
    else:
        _unused(dice, result, "dice")
    if uses_decks:
        decks_seed = _seed(decks, pe.DecksSeedRevealed, pe.DecksCommitted, result, "decks")
    else:
        _unused(decks, result, "decks")
    if created is not None:
        for name, events, cls, attr in (
            ("dice", dice, pe.DiceCommitted, "dice_commitment"),
            ("decks", decks, pe.DecksCommitted, "decks_commitment"),
        ):
            first = next((unpack(e, cls) for e in events if is_a(e, cls)), None)
            if first is not None and first.commitment != getattr(created, attr):  # type: ignore[attr-defined]
                result.problems.append(f"{name}: the match was created with another commitment")
    _verify_takebacks(board, result)
    if dice_seed is not None:
        _verify_dice(match_id, dice_seed, dice, result)
    if decks_seed is not None:
        _verify_decks(match_id, decks_seed, decks, result)
    return result


def _verify_takebacks(board: list[envelope_pb2.EventEnvelope], result: Verification) -> None:
    """Each ActionsUndone's state (and clock) is the fold of the board's events up to its
    to_version."""
    undone: dict[int, pe.ActionsUndone] = {}
    for envelope in board:
        if is_a(envelope, pe.ActionsUndone):
            recorded = unpack(envelope, pe.ActionsUndone)
            assert isinstance(recorded, pe.ActionsUndone)
            undone[int(envelope.sequence)] = recorded
    if not undone:
        return
    if not folding.is_created(board[0]):
        result.problems.append("board: the events do not open with the match's creation")
        return
    wanted = {int(u.to_version) for u in undone.values()}
    #: version → (the state, the clock's facts) there, as the fold has them
    folded: dict[int, tuple[str, str]] = {}
    match = folding.created(board[0])

    def keep(version: int) -> None:
        if version in wanted:
            facts = json.dumps(match.clock.facts()) if match.clock is not None else ""
            folded[version] = (encode_state(match.state), facts)

    keep(1)
    try:
        for envelope in board[1:]:
            took = undone.get(int(envelope.sequence))
            if took is not None:
                to_version = int(took.to_version)
                there = folded.get(to_version)
                if there is None or there[0] != took.state:
                    result.problems.append(
                        f"board: event {envelope.sequence} takes the match back to a state "
                        f"that is not its state at version {to_version}"
                    )
                elif took.clock and json.loads(took.clock) != json.loads(there[1] or "null"):
                    result.problems.append(
                        f"board: event {envelope.sequence} sets the clock to another than "
                        f"the match's at version {to_version}"
                    )
                result.checked += 1
            folding.fold(match, envelope)
            keep(int(envelope.sequence))
    except folding.Gap as error:
        result.problems.append(f"board: the events do not fold ({error})")


def _verify_dice(
    match_id: str, seed: bytes, events: list[envelope_pb2.EventEnvelope], result: Verification
) -> None:
    counter = 0
    for envelope in events:
        if not is_a(envelope, pe.DiceRolled):
            continue
        rolled = unpack(envelope, pe.DiceRolled)
        assert isinstance(rolled, pe.DiceRolled)
        if rolled.counter_from != counter:
            result.problems.append(
                f"dice #{envelope.sequence}: counter jumps from {counter} to {rolled.counter_from}"
            )
        rng = DerivedRandom(seed, match_id, rolled.counter_from)
        values = rng.roll(rolled.count, rolled.sides)
        if list(values) != list(rolled.values) or rng.counter != rolled.counter_to:
            result.problems.append(
                f"dice #{envelope.sequence}: {list(rolled.values)} does not re-derive "
                f"(expected {list(values)})"
            )
        counter = rolled.counter_to
        result.checked += 1


def _verify_decks(
    match_id: str, seed: bytes, events: list[envelope_pb2.EventEnvelope], result: Verification
) -> None:
    counter = 0
    piles = DeckPiles()
    for envelope in events:
        if is_a(envelope, pe.DeckShuffled):
            shuffled = unpack(envelope, pe.DeckShuffled)
            assert isinstance(shuffled, pe.DeckShuffled)
            if shuffled.counter_from != counter:
                result.problems.append(
                    f"decks #{envelope.sequence}: counter jumps from {counter} "
                    f"to {shuffled.counter_from}"
                )
            rng = DerivedRandom(seed, match_id, shuffled.counter_from)
            piles.shuffle(shuffled.deck, tuple(shuffled.cards), rng)
            if rng.counter != shuffled.counter_to:
                result.problems.append(
                    f"decks #{envelope.sequence}: the shuffle used other counters"
                )
            counter = shuffled.counter_to
            result.checked += 1
        elif is_a(envelope, pe.CardsDrawn):
            drawn = unpack(envelope, pe.CardsDrawn)
            assert isinstance(drawn, pe.CardsDrawn)
            try:
                expected = piles.draw(drawn.deck, len(drawn.cards))
            except RuleViolation as problem:
                result.problems.append(f"decks #{envelope.sequence}: {problem.message}")
                continue
            if list(expected) != list(drawn.cards):
                result.problems.append(
                    f"decks #{envelope.sequence}: drew {list(drawn.cards)} "
                    f"but the derived order gives {list(expected)}"
                )
            result.checked += 1
