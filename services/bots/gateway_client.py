"""The bots service's side of the gateway's public API (tabletop.v1.Gateway), asynchronous:
the lobby calls carry its credential (``x-tabletop-bots``), a seat's calls that seat's token.
Refusals the gateway asks to wait out (RESOURCE_EXHAUSTED with retry-after-ms) and a service
behind it restarting (UNAVAILABLE) are waited out here; every other refusal is the caller's
to judge."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import grpc

from services.common.server import CHANNEL_OPTIONS
from services.gateway.bot_seats import BOTS_HEADER
from tabletop.v1 import board_pb2, games_pb2, gateway_pb2, gateway_pb2_grpc, match_pb2

T = TypeVar("T")

#: the longest a seat waits for the match to move on in one GetView call
WAIT_MS = 20_000
#: ListMatches pages
PAGE = 200


def channel(address: str, ca_file: str = "") -> grpc.aio.Channel:
    """To the gateway: plaintext, or TLS with the given CA certificate (PEM)."""
    if ca_file:
        credentials = grpc.ssl_channel_credentials(Path(ca_file).read_bytes())
        return grpc.aio.secure_channel(address, credentials, options=CHANNEL_OPTIONS)
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS)


#: the first pause after an UNAVAILABLE (a service behind the gateway restarting); doubled
#: after each one, up to UNAVAILABLE_MAX_WAIT_S
UNAVAILABLE_FIRST_WAIT_S = 0.25
UNAVAILABLE_MAX_WAIT_S = 2.0


async def patiently(call: Callable[[], Awaitable[T]], tries: int = 60) -> T:
    """``call()``, asked again after the retry-after-ms of a RESOURCE_EXHAUSTED, and after
    an UNAVAILABLE with a growing pause: a seat's loop then waits out a restart of the board
    behind the gateway instead of giving the seat up and joining it again every round. The
    calls are safe to repeat (a submit keeps its command id; a join again only renews the
    seat's token)."""
    pause = UNAVAILABLE_FIRST_WAIT_S
    for _ in range(tries - 1):
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.UNAVAILABLE:
                wait, pause = pause, min(2 * pause, UNAVAILABLE_MAX_WAIT_S)
            elif error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                trailing = dict(error.trailing_metadata() or ())
                wait = int(str(trailing.get("retry-after-ms", "500"))) / 1000
            else:
                raise
            await asyncio.sleep(wait)
    return await call()


class BotsGateway:
    def __init__(self, channel: grpc.aio.Channel, credential: str) -> None:
        self._stub = gateway_pb2_grpc.GatewayStub(channel)
        self._lobby_auth = ((BOTS_HEADER, credential),)

    async def matches_with_bot_seats(self) -> AsyncIterator[match_pb2.MatchSummary]:
        """Every match in play that has seats reserved for bots (also private ones)."""
        token = ""
        while True:
            request = gateway_pb2.ListMatchesRequest(
                status=match_pb2.MATCH_STATUS_ACTIVE, page_size=PAGE, page_token=token
            )
            reply = await patiently(partial(self._list, request))
            for summary in reply.matches:
                if summary.bot_levels:
                    yield summary
            token = reply.next_page_token
            if not token:
                return

    async def _list(self, request: gateway_pb2.ListMatchesRequest) -> gateway_pb2.ListMatchesReply:
        reply: gateway_pb2.ListMatchesReply = await self._stub.ListMatches(
            request, metadata=self._lobby_auth, timeout=10
        )
        return reply

    async def join(self, match_id: str, seat: str, name: str) -> str:
        """The seat's token (the seat taken again if a replica held it before)."""
        request = gateway_pb2.JoinMatchRequest(match_id=match_id, seat=seat, display_name=name)
        reply = await patiently(
            lambda: self._stub.JoinMatch(request, metadata=self._lobby_auth, timeout=10)
        )
        return str(reply.token)


class SeatCalls:
    """One seat's calls, with its token."""

    def __init__(self, gateway: BotsGateway, match_id: str, seat: str, token: str) -> None:
        self._stub = gateway._stub
        self.match_id = match_id
        self.seat = seat
        self._auth = (("authorization", f"Bearer {token}"),)

    async def legal(self) -> board_pb2.GetLegalActionsReply:
        request = board_pb2.GetLegalActionsRequest(match_id=self.match_id, player=self.seat)
        reply: board_pb2.GetLegalActionsReply = await patiently(
            lambda: self._stub.GetLegalActions(request, metadata=self._auth, timeout=10)
        )
        return reply

    async def view(self, min_version: int, wait_ms: int = WAIT_MS) -> match_pb2.MatchView | None:
        """The seat's view at ``min_version`` or newer; None if it did not come in time."""
        request = gateway_pb2.GetViewRequest(
            match_id=self.match_id, viewer=self.seat, min_version=min_version, wait_ms=wait_ms
        )
        try:
            view: match_pb2.MatchView = await patiently(
                lambda: self._stub.GetView(request, metadata=self._auth, timeout=wait_ms / 1000 + 5)
            )
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.DEADLINE_EXCEEDED:
                return None
            raise
        return view

    async def submit(
        self, action: games_pb2.GameAction, version: int, command_id: str
    ) -> board_pb2.SubmitActionReply:
        request = board_pb2.SubmitActionRequest(
            match_id=self.match_id,
            player=self.seat,
            action=action,
            command_id=command_id,
            expected_version=version,
            return_legal_actions=True,
        )
        reply: board_pb2.SubmitActionReply = await patiently(
            lambda: self._stub.SubmitAction(request, metadata=self._auth, timeout=30)
        )
        return reply
