"""tabletop.v1.Scoring: records each finished match's result and serves standings.

It folds board events with the game's engine (for the statistics the engine reports at
the end) and is the single writer of scoring.events.
"""

from __future__ import annotations

import asyncio

import grpc

from services.adapters.folding import FoldedMatch
from services.common.envelope import Cause, is_a, unpack
from services.common.eventlog import LogUnavailable
from services.common.ledger import StreamWriter
from services.common.logging import get_logger
from services.scoring.standings import GameStandings
from tabletop.v1 import envelope_pb2, platform_events_pb2, scoring_pb2, scoring_pb2_grpc

log = get_logger(__name__)

#: pause between attempts to record a result while the log is unavailable
RETRY_S = 1.0


class ScoringService(scoring_pb2_grpc.ScoringServicer):
    def __init__(self, writer: StreamWriter) -> None:
        self._writer = writer
        self._playing: dict[str, FoldedMatch] = {}
        #: matches already scored (a redelivered end is not scored twice)
        self._scored: set[str] = set()
        self._standings: dict[str, GameStandings] = {}

    # own stream: rebuilt first
    def apply(self, envelope: envelope_pb2.EventEnvelope) -> None:
        if is_a(envelope, platform_events_pb2.MatchScored):
            scored = unpack(envelope, platform_events_pb2.MatchScored)
            assert isinstance(scored, platform_events_pb2.MatchScored)
            self._scored.add(envelope.match_id)
            self._writer.close(envelope.match_id)  # read back from the log on demand
            self._standings.setdefault(scored.game, GameStandings()).add(scored)

    async def on_board_event(self, envelope: envelope_pb2.EventEnvelope) -> None:
        """Fold a board event; score the match when it ends (once)."""
        if envelope.match_id in self._scored:
            return
        if is_a(envelope, platform_events_pb2.MatchCreated):
            self._playing[envelope.match_id] = FoldedMatch.created(envelope)
            return
        match = self._playing.get(envelope.match_id)
        if match is None or not match.fold(envelope) or not match.finished:
            return
        del self._playing[envelope.match_id]
        ended = unpack(envelope, platform_events_pb2.MatchEnded)
        assert isinstance(ended, platform_events_pb2.MatchEnded)
        scored = platform_events_pb2.MatchScored(
            game=match.game.name,
            results=ended.results,
            reason=ended.reason,
            scores=ended.scores,
            statistics=match.game.statistics(match.state),
            board_events=match.version,
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
