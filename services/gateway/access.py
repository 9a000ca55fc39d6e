"""Who may see and do what through the gateway: every rule of client authorisation, in one
place, as peer authorisation is in services/common/peer_auth.py.

The edge (services/gateway/edge.py) verifies the caller's token once per call and gives
the RPC a ``Caller``; the RPC asks ``Access`` what that caller may do with the match it
names: which seat's view it sees (``viewer``), for which seat it acts (``seat``). A seat
token acts and sees for its seat only, and only while it is the seat's newest token; a
spectator token, or no token on a public match, sees the spectator view; a token of
another match sees nothing of this one. A player's access token (its session, no match
of its own) sees what a caller without a token sees, and a private match's spectator view
when the player created it or holds one of its seats. Each answer is a refusal (``Refused``) or what
the caller may do.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import grpc

from services.gateway.auth import MAX_ID, Claims, Role, TooLong, bounded
from services.gateway.refusals import Refused
from services.gateway.viewstore import ViewStore


@dataclass(frozen=True, slots=True)
class Caller:
    """Who makes a call, as the edge found it: the verified token (None: no token), the
    client's address without its port (quotas of clients without a token), and its
    connection (the address with its port)."""

    claims: Claims | None
    host: str
    connection: str = ""

    @property
    def identity(self) -> str | None:
        """Who the caller is across calls and matches: its token's subject (the client
        that created or joined), None without a token."""
        return None if self.claims is None else self.claims.subject

    @property
    def player(self) -> str | None:
        """The player a player's access token names (None: no such token)."""
        claims = self.claims
        return claims.subject if claims is not None and claims.role == Role.PLAYER else None


def check_bounds(*checks: tuple[str, str]) -> None:
    """INVALID_ARGUMENT for the first (field, value) longer than an id may be."""
    try:
        for field, value in checks:
            bounded(field, value, MAX_ID)
    except TooLong as long:
        raise Refused(grpc.StatusCode.INVALID_ARGUMENT, str(long)) from long


class Access:
    def __init__(self, views: ViewStore) -> None:
        self._views = views

    def public(self, match_id: str) -> bool:
        update = self._views.latest(match_id)
        return update is not None and not update.summary.private

    def member(self, player: str, match_id: str) -> bool:
        """The player created the match or holds one of its seats."""
        update = self._views.latest(match_id)
        return update is not None and (
            update.creator == player or player in update.holders.values()
        )

    def superseded(self, claims: Claims) -> bool:
        """A newer join of the seat is projected, or its holder left it (one not projected
        yet cannot be judged: the token's join version tells which)."""
        update = self._views.latest(claims.match_id)
        if update is None or update.summary.version < claims.version:
            return False
        newest = update.seat_tokens.get(claims.seat)
        if newest is None:  # joined, yet no token: given up (SeatLeft)
            return claims.seat in update.summary.seat_states
        return newest != claims.token_id

    def gone(self, claims: Claims) -> str:
        """Why a superseded seat token is refused, for its client."""
        update = self._views.latest(claims.match_id)
        if update is not None and claims.seat not in update.seat_tokens:
            return "this seat was given up; its tokens no longer see or act for it"
        return "this seat was joined again elsewhere; join again to see it here"

    def viewer(self, caller: Caller, match_id: str, requested: str) -> str:
        """The seat whose view the caller may see ("" for the spectator view)."""
        check_bounds(("match_id", match_id), ("viewer", requested))
        claims = caller.claims
        if claims is None or claims.role == Role.PLAYER:
            if requested:
                raise Refused(
                    grpc.StatusCode.UNAUTHENTICATED
                    if claims is None
                    else grpc.StatusCode.PERMISSION_DENIED,
                    "a seat's view needs its seat token (JoinMatch gives one)",
                )
            if claims is not None and self.member(claims.subject, match_id):
                return ""
            if claims is not None and not self.public(match_id):
                raise Refused(
                    grpc.StatusCode.PERMISSION_DENIED,
                    "this match is private (or not known yet): only its players, or a token "
                    "of it, see it",
                )
            if not self.public(match_id):
                raise Refused(
                    grpc.StatusCode.UNAUTHENTICATED,
                    "present a token of this match (private, or not known yet)",
                )
            return ""
        if claims.match_id != match_id:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the token is for another match")
        seat = claims.seat if claims.role == Role.SEAT else ""
        if seat and self.superseded(claims):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, self.gone(claims))
        if requested and requested != seat:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the token is not for that seat")
        return seat

    def seat(self, caller: Caller, match_id: str, player: str) -> Claims:
        """The caller's seat token for acting in this match (as ``player``, if named)."""
        check_bounds(("match_id", match_id), ("player", player))
        claims = caller.claims
        if claims is None:
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "acting needs a seat token")
        if claims.role == Role.PLAYER:
            raise Refused(
                grpc.StatusCode.PERMISSION_DENIED,
                "acting needs the seat's token, not your session's (JoinMatch gives one)",
            )
        if time.time() >= claims.expires_at:  # a PlayMatch stream outlives its token
            raise Refused(grpc.StatusCode.UNAUTHENTICATED, "the token has expired; join again")
        if claims.match_id != match_id:
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the token is for another match")
        if claims.role != Role.SEAT or (player and player != claims.seat):
            raise Refused(grpc.StatusCode.PERMISSION_DENIED, "the token does not act for that seat")
        return claims
