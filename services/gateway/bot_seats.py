"""The bots service at the gateway: it presents its own credential (TABLETOP_BOTS_TOKEN, as
``x-tabletop-bots`` metadata) and may then take the seats reserved for bots (those with a
bot level, MatchLobby.bot_levels) and only those; nobody else may take them. The board holds
that rule (services/board/lobby.py, the ``bots`` claim): this module only says whether a
call comes from the bots service. It also lists the private matches that have such seats,
which nobody else sees listed, so that no bot seat goes unplayed; and to it only the matches
with such seats, so that its rounds page through those alone."""

from __future__ import annotations

import hmac

import grpc

from services.gateway.edge import Call
from services.gateway.refusals import Refused
from tabletop.v1 import match_pb2

#: the metadata key the bots service's credential travels in
BOTS_HEADER = "x-tabletop-bots"


class BotsCredential:
    def __init__(self, token: bytes) -> None:
        self._token = token

    def presented(self, call: Call) -> bool:
        """The call carries the bots service's credential (a wrong one is refused)."""
        value = call.header(BOTS_HEADER)
        if value is None:
            return False
        if not self._token or not hmac.compare_digest(value.encode(), self._token):
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the bots credential is not valid")
        return True


def has_bot_seats(summary: match_pb2.MatchSummary) -> bool:
    """A match the bots service plays seats of."""
    return bool(summary.bot_levels)
