"""Folding a match's envelopes into its table record and its published ``ViewUpdate``
(pure: no Faust, no Kafka; the agent in ``app.py`` reads and writes).

The folder keeps each match it folds in memory (``MatchFold``: the projection, the ids of
its last board events, and the record it was last stored as), so a batch folds straight
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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from services.adapters.folding import FoldedMatch
from services.adapters.projection import Projection, revealed_seed
from services.common.eventlog import BATCH_CONTENT_TYPE, CONTENT_TYPE, MAX_RECORD_BYTES
from services.common.logging import get_logger
from services.common.metrics import LOG_DUPLICATES
from tabletop.v1 import envelope_pb2, platform_events_pb2

log = get_logger(__name__)

#: a table record or a published view of one match may not exceed this (Kafka's limit is
#: 1 MiB per record batch); the projector checks before it writes
MAX_VIEW_BYTES = MAX_RECORD_BYTES
#: board event ids kept per match to tell a duplicate append from a re-read
RECENT_IDS = 32

#: the first byte of a binary record (a JSON record starts with "{")
_RECORD_V1 = b"\x01"
_LENGTH = struct.Struct(">I")
_MATCH_CREATED = platform_events_pb2.MatchCreated.DESCRIPTOR.full_name

#: what folding one event did to its match
UNCHANGED, CHANGED, WHOLE = 0, 1, 2


class TooLarge(ValueError):
    """A match's record or view would exceed the broker's message limit."""


@dataclass
class MatchFold:
    """A match as the folder holds it between events."""

    #: None until its MatchCreated is folded
    projection: Projection | None = None
    #: seeds revealed before the match was known (a rebuild reading dice before board)
    seeds: dict[str, str] = field(default_factory=dict)
    #: board sequence → event id of its newest events, oldest first
    recent: dict[int, str] = field(default_factory=dict)
    #: the table record this fold was last read from or encoded to
    stored: bytes | None = None


def encode_record(fold: MatchFold) -> bytes:
    """The table record of ``fold``: see the module's docstring."""
    p = fold.projection
    if p is None:
        facts: dict[str, Any] = dict(fold.seeds)
        state = b""
    else:
        m = p.match
        facts = {
            "match_id": m.match_id,
            "game": m.game.name,
            "players": m.players,
            "options": m.options,
            "version": m.version,
            "finished": m.finished,
            "results": m.results,
            "end_reason": m.end_reason,
            "dice_commitment": m.dice_commitment,
            "decks_commitment": m.decks_commitment,
            "dice_seed": p.dice_seed,
            "decks_seed": p.decks_seed,
            "private": m.private,
            "bots": m.bots,
            "creator": m.creator,
            "seats": m.seats,
            "seat_tokens": m.seat_tokens,
            # the ids of the board events up to the version, oldest first
            "recent": list(fold.recent.values()),
        }
        state = p.encoded_state().encode()
    encoded = json.dumps(facts, separators=(",", ":")).encode()
    return b"".join((_RECORD_V1, _LENGTH.pack(len(encoded)), encoded, state))


def decode_record(stored: bytes | None) -> MatchFold:
    """A match as a table record holds it (an empty fold for no record)."""
    if stored is None:
        return MatchFold()
    if stored[:1] == _RECORD_V1:
        (length,) = _LENGTH.unpack_from(stored, 1)
        facts = json.loads(stored[5 : 5 + length])
        state: Any = stored[5 + length :]
        if "game" not in facts:
            return MatchFold(seeds=facts, stored=stored)
        version = int(facts["version"])
        recent = facts.get("recent", [])
        ids = dict(zip(range(version - len(recent) + 1, version + 1), recent, strict=True))
    else:  # a JSON record, written before records were binary
        facts = json.loads(stored)
        if "game" not in facts:
            return MatchFold(seeds=facts, stored=stored)
        state = facts["state"]
        ids = {int(s): i for s, i in sorted(facts.get("recent_ids", {}).items(), key=_seq)}
    return MatchFold(Projection.from_record({**facts, "state": state}), recent=ids, stored=stored)


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
    decodes the stored record only after a restart, a rebalance or a failed fold); the
    table (and its changelog) stays the authority."""

    def __init__(self) -> None:
        self._matches: dict[str, MatchFold] = {}

    def forget(self) -> None:
        """Drop every match (partitions moved: another worker may have folded since)."""
        self._matches.clear()

    def forget_match(self, match_id: str) -> None:
        """Decode this match from its stored record next time (a fold of it failed)."""
        self._matches.pop(match_id, None)

    def projection(self, match_id: str) -> Projection:
        """The match as folded so far (one this folder has folded since its creation)."""
        projection = self._matches[match_id].projection
        if projection is None:
            raise KeyError(match_id)
        return projection

    def projections(self) -> dict[str, Projection]:
        """Every match folded since its creation."""
        return {k: m.projection for k, m in self._matches.items() if m.projection is not None}

    def match(self, match_id: str, stored: bytes | None = None) -> MatchFold:
        """The match as held, or as ``stored`` holds it if that is not what was held."""
        held = self._matches.get(match_id)
        if held is None or held.stored is not stored:
            held = self._matches[match_id] = decode_record(stored)
        return held

    def fold(self, fold: MatchFold, envelope: envelope_pb2.EventEnvelope) -> int:
        """Fold one envelope into ``fold``: UNCHANGED, CHANGED (mid-command), or WHOLE
        (a state to publish: a command's last event, or a seed revealed)."""
        p = fold.projection
        if envelope.stream != "board":
            seed = revealed_seed(envelope)
            if seed is None:
                return UNCHANGED
            if p is None:
                fold.seeds[seed[0]] = seed[1]
                return CHANGED
            setattr(p, seed[0], seed[1])
            return WHOLE
        sequence = envelope.sequence
        if p is not None and sequence <= p.match.version:
            # Read again (at-least-once, after a restart): folded already. A re-read
            # MatchCreated must not start the match over (it would drop revealed seeds).
            seen = fold.recent.get(sequence)
            if seen is not None and seen != envelope.event_id:
                LOG_DUPLICATES.labels("board").inc()
                log.error(
                    "duplicate_sequence",
                    match_id=envelope.match_id,
                    sequence=sequence,
                    event_id=envelope.event_id,
                )
            return UNCHANGED
        recent = fold.recent
        if envelope.payload.type_url.rpartition("/")[2] == _MATCH_CREATED:  # as Any.Is reads
            p = fold.projection = Projection(FoldedMatch.created(envelope))
            if fold.seeds:  # revealed before the board stream was read (a rebuild)
                p.dice_seed = fold.seeds.get("dice_seed", "")
                p.decks_seed = fold.seeds.get("decks_seed", "")
                fold.seeds = {}
            recent.clear()
        elif p is None:
            return UNCHANGED  # a board event of a match not created here: nothing to show
        else:
            p.match.fold(envelope)
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
        fold = self.match(match_id, stored)
        # events after the last one that ends a command belong to an unfinished command
        end = _last_command_end(appends)
        owed = False  # a whole state not rendered yet
        changed = False
        rendered: bytes | None = None
        fold_one = self.fold
        for r, envelopes in enumerate(appends):
            for i, envelope in enumerate(envelopes):
                if owed and envelope.stream == "board" and (r, i) > end:
                    rendered, owed = _update(fold), False
                done = fold_one(fold, envelope)
                if done:
                    changed = True
                    if done == WHOLE:
                        owed = True
        if owed:
            rendered = _update(fold)
        if not changed:
            return None, rendered
        fold.stored = encode_record(fold)
        return fold.stored, rendered


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


def _update(fold: MatchFold) -> bytes:
    return cast(Projection, fold.projection).update_bytes()
