"""Folding a match's envelopes into its table record and its published ``ViewUpdate``
(pure: no Faust, no Kafka; the agent in ``match_views.py`` reads and writes).

The folder keeps each match it folds in memory (a ``Match``, beside it the ids of its
newest board events and the record it was last stored as), so a batch folds straight
into it: no record is decoded while the table holds what the folder wrote, and none is
built per event. A batch ends with one record (``encode_record``) and at most one update.

A table record is binary: a tag byte, the length of the match's facts as JSON, those
facts, then the engine state as ``encode_state`` wrote it (the bytes the update carries),
so the state is neither escaped into a JSON string nor parsed again to read the facts.
Records written before (JSON objects, the state as a string or as data) still read.
"""

from __future__ import annotations

import json
import struct
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from services.adapters import folding
from services.adapters.game_adapter import game_and_messages
from services.adapters.views import decode_state, encode_state, state_from_data, update_bytes
from services.common.eventlog import BATCH_CONTENT_TYPE, CONTENT_TYPE, MAX_RECORD_BYTES
from services.common.logging import get_logger
from services.common.metrics import LOG_DUPLICATES
from services.games import clock
from services.games.match import Match
from tabletop.v1 import envelope_pb2

log = get_logger(__name__)

#: a table record or a published view of one match may not exceed this (Kafka's limit is
#: 1 MiB per record batch); the projector checks before it writes
MAX_VIEW_BYTES = MAX_RECORD_BYTES
#: board event ids kept per match to tell a duplicate append from a re-read
RECENT_IDS = 32

#: the first byte of a binary record (a JSON record starts with "{")
_RECORD_V1 = b"\x01"
_LENGTH = struct.Struct(">I")

#: what folding one event did to its match
UNCHANGED, CHANGED, WHOLE = 0, 1, 2


class TooLarge(ValueError):
    """A match's record or view would exceed the broker's message limit."""


def encode_record(
    match: Match | None,
    seeds: Mapping[str, str],
    recent: Mapping[int, str],
    state: str | None = None,
) -> bytes:
    """The table record of a match (see the module's docstring): its facts and state; or,
    before it is created, the ``seeds`` revealed for it so far. ``recent``: the ids of
    its newest board events; ``state``: its state's ``encode_state``, when made already."""
    if match is None:
        facts: dict[str, Any] = dict(seeds)
        encoded = b""
    else:
        # the ids of the board events up to the version, oldest first
        facts = {**_facts(match), "recent": list(recent.values())}
        encoded = (encode_state(match.state) if state is None else state).encode()
    text = json.dumps(facts, separators=(",", ":")).encode()
    return b"".join((_RECORD_V1, _LENGTH.pack(len(text)), text, encoded))


def decode_record(stored: bytes | None) -> tuple[Match | None, dict[str, str], dict[int, str]]:
    """A match as a table record holds it: the match (None before it is created), the
    seeds revealed before it was, and the ids of its newest board events by sequence."""
    if stored is None:
        return None, {}, {}
    if stored[:1] == _RECORD_V1:
        (length,) = _LENGTH.unpack_from(stored, 1)
        facts = json.loads(stored[5 : 5 + length])
        state: Any = stored[5 + length :]
        if "game" not in facts:
            return None, facts, {}
        version = int(facts["version"])
        recent = facts.get("recent", [])
        ids = dict(zip(range(version - len(recent) + 1, version + 1), recent, strict=True))
    else:  # a JSON record, written before records were binary
        facts = json.loads(stored)
        if "game" not in facts:
            return None, facts, {}
        state = facts["state"]
        ids = {int(s): i for s, i in sorted(facts.get("recent_ids", {}).items(), key=_seq)}
    return _match(facts, state), {}, ids


def _facts(match: Match) -> dict[str, Any]:
    """What a record holds of a match besides its state (JSON-safe)."""
    return {
        "match_id": match.match_id,
        "game": match.game.name,
        "players": match.players,
        "options": match.options,
        "version": match.version,
        "finished": match.finished,
        "results": match.results,
        "end_reason": match.end_reason,
        "dice_commitment": match.dice_commitment,
        "decks_commitment": match.decks_commitment,
        "dice_seed": match.dice_seed,
        "decks_seed": match.decks_seed,
        "private": match.private,
        "bots": match.bots,
        "bot_levels": match.bot_levels,
        "creator": match.creator,
        "seats": match.seats,
        "seat_tokens": match.seat_tokens,
        "holders": match.holders,
        "vacated": match.vacated,
        "sealed": match.sealed,
        "started": match.started,
        "open_s": match.open_s,
        "open_until": match.open_until,
        **({"clock": match.clock.facts()} if match.clock is not None else {}),
    }


def _match(facts: dict[str, Any], state: Any) -> Match:
    game, _ = game_and_messages(facts["game"])
    return Match(
        match_id=facts["match_id"],
        game=game,
        players=tuple(facts["players"]),
        # the state as encode_state wrote it (str or its UTF-8 bytes); records written
        # before updates carried the state hold its data
        state=(
            decode_state(game.name, state)
            if isinstance(state, str | bytes)
            else state_from_data(game.name, state)
        ),
        version=facts["version"],
        finished=facts["finished"],
        results=facts["results"],
        end_reason=facts["end_reason"],
        options=facts["options"],
        dice_commitment=facts["dice_commitment"],
        decks_commitment=facts["decks_commitment"],
        dice_seed=facts["dice_seed"],
        decks_seed=facts["decks_seed"],
        # records written before the lobby existed have none
        private=facts.get("private", False),
        bots=tuple(facts.get("bots", ())),
        bot_levels=dict(facts.get("bot_levels", {})),
        creator=facts.get("creator", ""),
        seats=dict(facts.get("seats", {})),
        seat_tokens=dict(facts.get("seat_tokens", {})),
        holders=dict(facts.get("holders", {})),
        vacated=dict(facts.get("vacated", {})),
        sealed=dict(facts.get("sealed", {})),
        # records written before lobbies closed: started once every seat was joined
        started=facts.get("started", all(p in facts.get("seats", {}) for p in facts["players"])),
        open_s=facts.get("open_s", 0),
        open_until=facts.get("open_until", 0),
        clock=_clock(facts),
    )


def _clock(facts: dict[str, Any]) -> clock.Clock | None:
    """The match's clock as its record kept it (None: untimed)."""
    if "clock" not in facts:
        return None
    control = clock.parse(facts["game"], facts["options"])
    return clock.Clock.from_facts(control, facts["clock"]) if control is not None else None


def _seq(item: tuple[str, str]) -> int:
    return int(item[0])


def check_sizes(record: bytes | None, update: bytes | None) -> None:
    if update is not None and len(update) > MAX_VIEW_BYTES:
        raise TooLarge(f"the views would take {len(update)} bytes (limit {MAX_VIEW_BYTES})")
    if record is not None and len(record) > MAX_VIEW_BYTES:
        raise TooLarge(f"the record would take {len(record)} bytes (limit {MAX_VIEW_BYTES})")


def dead_letter(envelope: envelope_pb2.EventEnvelope, reason: str, error: BaseException) -> bytes:
    """The dead-letter record of an event: where to find it and why, never its payload."""
    return json.dumps(
        {
            "match_id": envelope.match_id,
            "stream": envelope.stream,
            "sequence": envelope.sequence,
            "event_id": envelope.event_id,
            "event_type": envelope.event_type,
            "reason": reason,
            "error": f"{type(error).__name__}: {error}"[:1000],
        }
    ).encode()


class ProjectionFolder:
    """Folds envelopes into matches. Keeps each match in memory between batches (a fold
    decodes the stored record only after a restart, a rebalance, a failed fold or an
    eviction); the table (and its changelog) stays the authority.

    Held, a match is in memory twice: decoded here and encoded in the table. So only the
    matches folded lately are held: with ``max_held`` set, at most that many, and none
    not folded for ``idle_s`` (finished and abandoned matches, turn-based ones between
    turns); an evicted match is decoded from its table record at its next fold. Unbounded
    (0) for a rebuild, which reads every match back from the folder."""

    def __init__(
        self,
        max_held: int = 0,
        idle_s: float = 0.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._max_held = max_held
        self._idle_s = idle_s
        self._clock = clock
        #: the matches held, by when last loaded for a fold, least recently first
        self._used: OrderedDict[str, float] = OrderedDict()
        self._matches: dict[str, Match] = {}
        #: seeds revealed before their match was created (a rebuild reading dice first)
        self._seeds: dict[str, dict[str, str]] = {}
        #: board sequence → event id of each known match's newest events, oldest first
        self._recent: dict[str, dict[int, str]] = {}
        #: the table record each match was last read from or written as
        self._stored: dict[str, bytes] = {}

    def forget(self) -> None:
        """Drop every match (partitions moved: another worker may have folded since)."""
        for held in (self._matches, self._seeds, self._recent, self._stored, self._used):
            held.clear()

    def forget_match(self, match_id: str) -> None:
        """Decode this match from its stored record next time (a fold of it failed, or
        it was evicted)."""
        for held in (self._matches, self._seeds, self._recent, self._stored):
            held.pop(match_id, None)

    def _hold(self, match_id: str) -> None:
        """Evict the matches past their time (this one too: it is then decoded from its
        record, as it would be by any fold after the eviction), note this one's use, and
        evict the least recently used past the bound."""
        self.evict()
        used = self._used
        used[match_id] = self._clock()
        used.move_to_end(match_id)
        while self._max_held and len(used) > self._max_held:
            self.forget_match(used.popitem(last=False)[0])

    def evict(self) -> None:
        """Forget the matches not folded for ``idle_s`` (also called on a timer: a quiet
        projector folds nothing that would evict them)."""
        used = self._used
        if self._idle_s:
            horizon = self._clock() - self._idle_s
            while used and next(iter(used.values())) < horizon:
                self.forget_match(used.popitem(last=False)[0])

    def match(self, match_id: str) -> Match:
        """The match as folded so far (KeyError before its creation is folded)."""
        return self._matches[match_id]

    def matches(self) -> dict[str, Match]:
        """Every match folded since its creation."""
        return dict(self._matches)

    def held(self) -> int:
        """Matches held in memory (folded lately)."""
        return len(self._used)

    def load(self, match_id: str, stored: bytes | None) -> None:
        """Hold the match as the table's record ``stored`` holds it, unless that is the
        record the folder holds it as (what it wrote, or read, last)."""
        if self._max_held or self._idle_s:
            self._hold(match_id)
        if match_id in self._recent and self._stored.get(match_id) is stored:
            return
        self.forget_match(match_id)
        match, seeds, recent = decode_record(stored)
        self._recent[match_id] = recent
        if match is not None:
            self._matches[match_id] = match
        if seeds:
            self._seeds[match_id] = seeds
        if stored is not None:
            self._stored[match_id] = stored

    def record(self, match_id: str, state: str | None = None) -> bytes:
        """The match's table record as folded so far (see ``encode_record``)."""
        return encode_record(
            self._matches.get(match_id),
            self._seeds.get(match_id, {}),
            self._recent.get(match_id, {}),
            state,
        )

    def written(self, match_id: str, stored: bytes) -> None:
        """The table holds ``stored`` for the match now (from ``record``)."""
        self._stored[match_id] = stored

    def update(self, match_id: str) -> bytes:
        """The match's serialized ``ViewUpdate`` as folded so far."""
        return update_bytes(self._matches[match_id])

    def fold(self, envelope: envelope_pb2.EventEnvelope) -> int:
        """Fold one envelope into its match: UNCHANGED, CHANGED (mid-command), or WHOLE
        (a state to publish: a command's last event, or a seed revealed)."""
        match_id = envelope.match_id
        match = self._matches.get(match_id)
        if envelope.stream != "board":
            seed = folding.revealed_seed(envelope)
            if seed is None:
                return UNCHANGED
            if match is None:
                self._seeds.setdefault(match_id, {})[seed[0]] = seed[1]
                self._recent.setdefault(match_id, {})
                return CHANGED
            folding.reveal(match, seed)
            return WHOLE
        sequence = envelope.sequence
        recent = self._recent.setdefault(match_id, {})
        if match is not None and sequence <= match.version:
            # Read again (at-least-once, after a restart): folded already. A re-read
            # MatchCreated must not start the match over (it would drop revealed seeds).
            seen = recent.get(sequence)
            if seen is not None and seen != envelope.event_id:
                LOG_DUPLICATES.labels("board").inc()
                log.error(
                    "duplicate_sequence",
                    match_id=match_id,
                    sequence=sequence,
                    event_id=envelope.event_id,
                )
            return UNCHANGED
        if folding.is_created(envelope):
            match = self._matches[match_id] = folding.created(envelope)
            seeds = self._seeds.pop(match_id, None)
            if seeds:  # revealed before the board stream was read (a rebuild)
                match.dice_seed = seeds.get("dice_seed", "")
                match.decks_seed = seeds.get("decks_seed", "")
            recent.clear()
        elif match is None:
            return UNCHANGED  # a board event of a match not created here: nothing to show
        else:
            folding.fold(match, envelope)
        recent[sequence] = envelope.event_id
        if len(recent) > RECENT_IDS:
            del recent[next(iter(recent))]
        return WHOLE if envelope.last_in_batch else CHANGED

    def fold_batch(
        self,
        match_id: str,
        stored: bytes | None,
        appends: Sequence[Sequence[envelope_pb2.EventEnvelope]],
    ) -> tuple[bytes | None, bytes | None]:
        """One match's events of a batch, in order (``appends``: the envelopes of each of
        its records): the record to store after the last (None: unchanged), and the
        serialized ``ViewUpdate`` of its last whole state (None: nothing to publish).

        Views are rendered once per batch, not per command: the state to show is rendered
        only when no later whole command in the batch supersedes it; when the batch ends
        mid-command, the last whole state is rendered before that command's first event
        is folded."""
        self.load(match_id, stored)
        # events after the last one that ends a command belong to an unfinished command
        end = _last_command_end(appends)
        owed = False  # a whole state not rendered yet
        changed = False
        rendered: bytes | None = None
        fold_one = self.fold
        for r, envelopes in enumerate(appends):
            for i, envelope in enumerate(envelopes):
                if owed and envelope.stream == "board" and (r, i) > end:
                    rendered, owed = self.update(match_id), False
                done = fold_one(envelope)
                if done:
                    changed = True
                    if done == WHOLE:
                        owed = True
        match = self._matches.get(match_id)
        # the record and the update of one version share one encoding of its state
        state = encode_state(match.state) if match is not None and (owed or changed) else None
        if owed:
            assert match is not None  # (only a created match has a whole state)
            rendered = update_bytes(match, state)
        if not changed:
            return None, rendered
        stored = self._stored[match_id] = self.record(match_id, state)
        return stored, rendered


def _last_command_end(
    appends: Sequence[Sequence[envelope_pb2.EventEnvelope]],
) -> tuple[int, int]:
    """(record, position) of the last board event that ends a command; (-1, -1): none."""
    for r in range(len(appends) - 1, -1, -1):
        envelopes = appends[r]
        for i in range(len(envelopes) - 1, -1, -1):
            envelope = envelopes[i]
            if envelope.stream == "board" and envelope.last_in_batch:
                return r, i
    return -1, -1


def appended(
    value: bytes, headers: Sequence[tuple[str, bytes]] | Mapping[str, bytes] | None
) -> Sequence[envelope_pb2.EventEnvelope]:
    """The envelopes of one record of an event topic, as ``eventlog.envelopes_of`` reads
    them, but an append's left in its message (a list of them cost twice the parse)."""
    if headers and (
        headers.get(CONTENT_TYPE) == BATCH_CONTENT_TYPE
        if isinstance(headers, Mapping)
        else (CONTENT_TYPE, BATCH_CONTENT_TYPE) in headers
    ):
        return envelope_pb2.EventBatch.FromString(value).events
    return [envelope_pb2.EventEnvelope.FromString(value)]
