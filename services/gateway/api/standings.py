"""Standings: the scoring service's tables, public to every caller (GetStandings)."""

from __future__ import annotations

import grpc

from services.gateway.auth import MAX_GAME, TooLong, bounded
from services.gateway.edge import Call
from services.gateway.refusals import Refused, relay
from tabletop.v1 import scoring_pb2, scoring_pb2_grpc


class StandingsRpcs:
    def __init__(self, scoring: scoring_pb2_grpc.ScoringStub) -> None:
        self._scoring = scoring

    async def standings(
        self, request: scoring_pb2.GetStandingsRequest, call: Call
    ) -> scoring_pb2.GetStandingsReply:
        # public, but the edge has refused a bad token already
        try:
            bounded("game", request.game, MAX_GAME)
        except TooLong as long:
            raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(long)) from long
        return await relay(self._scoring.GetStandings(request))
