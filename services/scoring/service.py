"""tabletop.v1.Scoring: records each finished match's result and serves standings.

It folds board events with the game's engine (for the statistics the engine reports at
the end) and is the single writer of scoring.events. It follows board.events by itself
(no consumer group): its position there, the board envelopes of the matches it has not
scored yet, the scored matches and the standings are in its snapshot, so a restart reads
only the tails of board.events and scoring.events. A second event id at a board sequence
already folded is a duplicate append on the board's side: counted and logged, not folded.

A match in play is held decoded only while its events come: one without an event for
``idle_held_s``, or the least recently folded past ``matches_held``, is kept as its board
events compressed (a few hundred bytes to a few KB, not a decoded state and envelope
objects of ~30 KB), and folded again from them at its next event: the same state, so
the same statistics and score.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Sequence

import grpc
from google.protobuf import message

from services.adapters.folding import created, fold
from services.common.envelope import Cause, is_a, unpack
from services.common.eventlog import LogRecord, LogUnavailable
from services.common.holding import Holding
from services.common.ledger import StreamWriter
from services.common.logging import get_logger
from services.common.metrics import LOG_DUPLICATES, MATCHES_LET_GO, MATCHES_READ_BACK
from services.common.snapshots import Snapshot, batches, sized
from services.games.match import Match
from services.scoring.standings import GameStandings
from tabletop.v1 import (
    envelope_pb2,
    platform_events_pb2,
    scoring_pb2,
    scoring_pb2_grpc,
    snapshot_pb2,
)

log = get_logger(__name__)

#: pause between attempts to record a result while the log is unavailable
RETRY_S = 1.0


class ScoringService(scoring_pb2_grpc.ScoringServicer):
    def __init__(self, writer: StreamWriter, holding: Holding | None = None) -> None:
        self._writer = writer
        #: when each match in ``_playing`` last had an event: which ones to let go of
        self.holding = holding if holding is not None else Holding()
        self._playing: dict[str, Match] = {}
        #: the board envelopes of the matches in ``_playing`` (for snapshots, and to tell
        #: a redelivered event from a duplicate sequence)
        self._followed: dict[str, list[envelope_pb2.EventEnvelope]] = {}
        #: matches in play let go of → their board envelopes, an EventBatch compressed
        self._let_go: dict[str, bytes] = {}
        #: matches already scored (a redelivered end is not scored twice)
        self._scored: set[str] = set()
        self._standings: dict[str, GameStandings] = {}
        #: board.events partition → the next offset to fold
        self.position: dict[int, int] = {}
        #: board events taken in since the start (for the snapshot cadence)
        self.followed_events = 0

    # own stream: rebuilt first
    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if is_a(envelope, platform_events_pb2.MatchScored):
            scored = unpack(envelope, platform_events_pb2.MatchScored)
            assert isinstance(scored, platform_events_pb2.MatchScored)
            self._scored.add(envelope.match_id)
            self._forget(envelope.match_id)
            self._writer.close(envelope.match_id)  # read back from the log on demand
            self._standings.setdefault(scored.game, GameStandings()).add(scored)

    # -- snapshots ------------------------------------------------------------------------
    def snapshot(self) -> list[message.Message]:
        parts: list[message.Message] = [snapshot_pb2.BoardPosition(next=self.position)]
        scored = sorted(self._scored)
        parts.extend(snapshot_pb2.ScoredMatches(match_ids=scored[p]) for p in batches(len(scored)))
        followed = [e for envelopes in self._followed.values() for e in envelopes]
        followed.extend(e for packed in self._let_go.values() for e in _unpacked(packed))
        parts.extend(snapshot_pb2.FollowedEvents(envelopes=followed[p]) for p in sized(followed))
        for game, standings in self._standings.items():
            parts.extend(standings.states(game))
        return parts

    def restore(self, snapshot: Snapshot) -> None:
        """Before the tail of scoring.events: what the snapshot holds."""
        for position in snapshot.of(snapshot_pb2.BoardPosition):
            self.position.update(position.next)
        for scored in snapshot.of(snapshot_pb2.ScoredMatches):
            self._scored.update(scored.match_ids)
        for standings in snapshot.of(snapshot_pb2.StandingsState):
            self._standings.setdefault(standings.game, GameStandings()).merge(standings)
        for followed in snapshot.of(snapshot_pb2.FollowedEvents):
            for envelope in followed.envelopes:
                self._fold(envelope)

    async def resume(self) -> None:
        """After a restore: score the matches that ended before the snapshot but were not
        scored by the end of scoring.events (the snapshot was taken while scoring them)."""
        for match_id, match in list(self._playing.items()):
            if match.finished and match_id not in self._scored:
                await self._score(match, self._followed[match_id][-1])

    # -- board.events ---------------------------------------------------------------------
    async def on_board_records(self, records: Sequence[LogRecord]) -> None:
        """Fold a fetch's board records in offset order, then score the matches they ended
        all at once: their results share one transaction. Scored one after another, each
        took a transaction of its own (0.04 per action at 20 matches, ~1 ms of broker CPU
        each) and the next waited for it. A record that cannot be folded, or a match that
        cannot be scored, is logged and skipped: one bad match must not stop the others.

        The position moves past a match's end before its result is recorded; a snapshot
        taken meanwhile still holds the match's envelopes, and ``resume`` scores it."""
        ended: list[tuple[Match, envelope_pb2.EventEnvelope]] = []
        for record in records:
            try:
                match = self._take(record.envelope)
            except Exception:
                log.exception("scoring_failed", match_id=record.envelope.match_id)
                match = None
            if match is not None:
                ended.append((match, record.envelope))
            self.position[record.partition] = record.offset + 1
        outcomes = await asyncio.gather(
            *(self._score(match, envelope) for match, envelope in ended), return_exceptions=True
        )
        for (_, envelope), outcome in zip(ended, outcomes, strict=True):
            if isinstance(outcome, Exception):
                log.error("scoring_failed", match_id=envelope.match_id, exc_info=outcome)
            elif isinstance(outcome, BaseException):
                raise outcome

    def _take(self, envelope: envelope_pb2.EventEnvelope) -> Match | None:
        """Fold a board event; the match if this event ended it (and it is not scored)."""
        self.followed_events += 1
        if envelope.match_id in self._scored:
            return None
        match = self._fold(envelope)
        if match is None or not match.finished:
            return None
        if not match.started and not match.results:
            # a lobby its board closed (MatchEnded.expired): nobody played, nothing to score
            self._forget(envelope.match_id)
            return None
        return match

    def _forget(self, match_id: str) -> None:
        self._playing.pop(match_id, None)
        self._followed.pop(match_id, None)
        self._let_go.pop(match_id, None)
        self.holding.forget(match_id)

    # -- holding only the matches in use ------------------------------------------------
    def evict_idle(self) -> int:
        """Matches in play past the holding limits are kept as their compressed events
        only; a finished one (its result being recorded) stays. Returns how many went."""
        evicted = 0
        for match_id in self.holding.to_evict():
            match = self._playing.get(match_id)
            if match is None or match.finished or self._writer.lock(match_id).locked():
                continue
            batch = envelope_pb2.EventBatch(events=self._followed.pop(match_id))
            self._let_go[match_id] = zlib.compress(batch.SerializeToString())
            del self._playing[match_id]
            self.holding.forget(match_id)
            evicted += 1
        MATCHES_LET_GO.labels("scoring").inc(evicted)
        return evicted

    def _read_back(self, match_id: str) -> None:
        """A match let go of, folded again from its events: held as before."""
        envelopes = _unpacked(self._let_go.pop(match_id))
        match = created(envelopes[0])
        for envelope in envelopes[1:]:
            fold(match, envelope)
        self._playing[match_id], self._followed[match_id] = match, envelopes
        MATCHES_READ_BACK.labels("scoring").inc()

    def _fold(self, envelope: envelope_pb2.EventEnvelope) -> Match | None:
        """Fold the next envelope of a followed match; None for a match not followed, or
        an envelope folded already."""
        match_id = envelope.match_id
        if match_id in self._let_go:
            self._read_back(match_id)
        followed = self._followed.get(match_id)
        if followed is not None and envelope.sequence <= len(followed):
            first = followed[envelope.sequence - 1]
            if first.event_id != envelope.event_id:
                LOG_DUPLICATES.labels("board").inc()
                log.error(
                    "duplicate_sequence",
                    stream="board",
                    reader="scoring",
                    match_id=match_id,
                    sequence=envelope.sequence,
                    kept=first.event_id,
                    dropped=envelope.event_id,
                )
            return None
        if is_a(envelope, platform_events_pb2.MatchCreated):
            self._playing[match_id] = created(envelope)
            self._followed[match_id] = [envelope]
            self.holding.use(match_id)
            return self._playing[match_id]
        match = self._playing.get(match_id)
        if match is None or followed is None:
            return None
        fold(match, envelope)
        followed.append(envelope)
        self.holding.use(match_id)
        return match

    async def _score(self, match: Match, envelope: envelope_pb2.EventEnvelope) -> None:
        ended = unpack(envelope, platform_events_pb2.MatchEnded)
        assert isinstance(ended, platform_events_pb2.MatchEnded)
        scored = platform_events_pb2.MatchScored(
            game=match.game.name,
            results=ended.results,
            reason=ended.reason,
            scores=ended.scores,
            statistics=match.game.statistics(match.state),
            board_events=match.version,
            holders={seat: player for seat, player in match.holders.items() if player},
            names=match.seats,
            bot_levels={seat: match.bot_levels.get(seat, "") for seat in match.bots},
        )
        cause = Cause(
            causation_id=envelope.event_id,
            correlation_id=envelope.correlation_id,
            actor="scoring",
        )
        async with self._writer.lock(envelope.match_id):
            # The board event is consumed already: retry until the result is recorded (the
            # writer settles an unknown outcome, so a retry never records it twice).
            while envelope.match_id not in self._scored:
                try:
                    appended = await self._writer.append(
                        envelope.match_id,
                        [scored],
                        cause,
                        match.game.name,
                        match.game.rules_version,
                    )
                except LogUnavailable as error:
                    log.warning(
                        "score_append_retried", match_id=envelope.match_id, detail=str(error)
                    )
                    await asyncio.sleep(RETRY_S)
                    continue
                for event in appended:
                    self.apply(event)
        log.info("match_scored", match_id=envelope.match_id, reason=ended.reason)

    async def GetStandings(
        self, request: scoring_pb2.GetStandingsRequest, context: grpc.aio.ServicerContext
    ) -> scoring_pb2.GetStandingsReply:
        return self._standings.get(request.game, GameStandings()).reply(request.game)


def _unpacked(packed: bytes) -> list[envelope_pb2.EventEnvelope]:
    return list(envelope_pb2.EventBatch.FromString(zlib.decompress(packed)).events)
