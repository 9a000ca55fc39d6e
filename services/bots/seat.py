"""One bot seat played to the end of its match: wait until the seat must act, decide from
the seat's view and legal actions (in a worker process), submit under the turn's one
command id, and go on from the legal actions the acknowledgement brings back."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from enum import StrEnum

import grpc

from services.bots.decide import decide
from services.bots.gateway_client import SeatCalls
from services.bots.replicas import command_id, decision_seed
from services.common.logging import get_logger
from services.common.metrics import BOTS_ACTIONS, BOTS_LAG
from tabletop.v1 import board_pb2, match_pb2

log = get_logger(__name__)

#: the board's reason when an older token of a seat acts after the seat was joined again
SEAT_REJOINED = "SEAT_REJOINED"


class Ending(StrEnum):
    FINISHED = "finished"  # the match is over
    TAKEN = "taken"  # another replica joined the seat after us: it plays it now


Decider = Callable[[str, str, int, str, bytes, bytes], Awaitable[bytes]]


def in_workers(workers: Executor) -> Decider:
    async def run(game: str, level: str, seed: int, seat: str, view: bytes, legal: bytes) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(workers, decide, game, level, seed, seat, view, legal)

    return run


def _reason(error: grpc.aio.AioRpcError) -> str:
    return str(dict(error.trailing_metadata() or ()).get("tabletop-reason", ""))


class SeatPlayer:
    def __init__(self, calls: SeatCalls, game: str, level: str, decider: Decider) -> None:
        self._calls = calls
        self._game = game
        self._level = level
        self._decide = decider

    async def play(self) -> Ending:
        try:
            return await self._play()
        except grpc.aio.AioRpcError as error:
            if error.code() == grpc.StatusCode.PERMISSION_DENIED and (
                _reason(error) == SEAT_REJOINED or "joined again" in (error.details() or "")
            ):
                return Ending.TAKEN
            raise

    async def _play(self) -> Ending:
        legal = await self._calls.legal()
        #: when this replica saw the current turn of the seat begin
        began = time.monotonic()
        while not legal.next.finished:
            if self._calls.seat not in legal.next.players:
                view = await self._calls.view(legal.version + 1)
                if view is not None and view.status == match_pb2.MATCH_STATUS_FINISHED:
                    return Ending.FINISHED
                legal, began = await self._calls.legal(), time.monotonic()
                continue
            legal = await self._act(legal, began)
            began = time.monotonic()
        return Ending.FINISHED

    async def _act(
        self, legal: board_pb2.GetLegalActionsReply, began: float
    ) -> board_pb2.GetLegalActionsReply:
        """One action at ``legal.version``; the seat's legal actions after it."""
        calls, version = self._calls, legal.version
        view = await calls.view(version)
        if view is None or view.version != version:  # the match moved on meanwhile
            return await calls.legal()
        seed = decision_seed(calls.match_id, calls.seat, version)
        chosen = match_pb2.LegalAction.FromString(
            await self._decide(
                self._game,
                self._level,
                seed,
                calls.seat,
                view.SerializeToString(),
                legal.SerializeToString(),
            )
        )
        try:
            reply = await calls.submit(
                chosen.action, version, command_id(calls.match_id, calls.seat, version)
            )
        except grpc.aio.AioRpcError as error:
            code = error.code()
            if code == grpc.StatusCode.ABORTED or _reason(error) == "COMMAND_ID_REUSED":
                # another replica acted at this version first (its action stands)
                BOTS_ACTIONS.labels(self._game, "stale").inc()
                return await calls.legal()
            if code in (grpc.StatusCode.FAILED_PRECONDITION, grpc.StatusCode.INVALID_ARGUMENT):
                BOTS_ACTIONS.labels(self._game, "refused").inc()
                log.warning(
                    "bot_action_refused",
                    match_id=calls.match_id,
                    seat=calls.seat,
                    reason=_reason(error),
                    detail=(error.details() or "")[:200],
                )
                await asyncio.sleep(1.0)  # not at once again: the match may move on
                return await calls.legal()
            raise
        if reply.duplicate:
            BOTS_ACTIONS.labels(self._game, "duplicate").inc()
            return await calls.legal()
        BOTS_ACTIONS.labels(self._game, "accepted").inc()
        BOTS_LAG.labels(self._game, self._level).observe(time.monotonic() - began)
        return reply.legal_actions if reply.HasField("legal_actions") else await calls.legal()
