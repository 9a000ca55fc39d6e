"""The bots service's round: find the matches in play with seats reserved for bots (through
the gateway's lobby listing, also after a restart: nothing is kept but in the gateway), take
this replica's share of them, and play each of their bot seats until its match ends.

A seat another replica joined after this one (a rescale, an overlap) is left to it; if its
match then stands still for ``takeover_s`` while this replica still owns it, the other is
taken to be gone and this one takes the seat again."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass

import grpc

from services.bots.gateway_client import BotsGateway, SeatCalls
from services.bots.replicas import Replica
from services.bots.seat import Decider, Ending, SeatPlayer
from services.common.logging import get_logger
from services.common.metrics import BOTS_SEATS

log = get_logger(__name__)

Seat = tuple[str, str]  # (match id, seat)


@dataclass
class _Left:
    """A seat left to another replica: the match's version then, and since when."""

    version: int
    since: float


class Dealer:
    def __init__(
        self,
        gateway: BotsGateway,
        replica: Replica,
        decider: Decider,
        every_s: float = 1.0,
        takeover_s: float = 15.0,
    ) -> None:
        self._gateway = gateway
        self._replica = replica
        self._decide = decider
        self._every_s = every_s
        self._takeover_s = takeover_s
        self._playing: dict[Seat, asyncio.Task[None]] = {}
        self._left: dict[Seat, _Left] = {}
        #: seats whose match ended here, until the listing no longer shows it in play
        self._done: set[Seat] = set()

    @property
    def playing(self) -> int:
        return len(self._playing)

    async def run(self) -> None:
        """Rounds until cancelled; a round that fails (the gateway away) is tried again."""
        try:
            while True:
                try:
                    await self.round()
                except grpc.aio.AioRpcError as error:
                    log.warning("bots_round_failed", code=error.code().name)
                await asyncio.sleep(self._every_s)
        finally:
            for task in self._playing.values():
                task.cancel()
            await asyncio.gather(*self._playing.values(), return_exceptions=True)

    async def round(self) -> None:
        listed: set[Seat] = set()
        now = time.monotonic()
        async for summary in self._gateway.matches_with_bot_seats():
            if not self._replica.owns(summary.match_id):
                continue
            for seat, level in summary.bot_levels.items():
                key = (summary.match_id, seat)
                listed.add(key)
                if (
                    key in self._playing
                    or key in self._done
                    or self._left_to_another(key, summary.version, now)
                ):
                    continue
                self._playing[key] = asyncio.create_task(
                    self._play(summary.match_id, summary.game, seat, level)
                )
        for key in set(self._left) - listed:
            del self._left[key]
        self._done &= listed
        BOTS_SEATS.set(len(self._playing))

    def _left_to_another(self, key: Seat, version: int, now: float) -> bool:
        left = self._left.get(key)
        if left is None:
            return False
        if left.version != version:  # the other replica plays it
            self._left[key] = _Left(version, now)
            return True
        if now - left.since < self._takeover_s:
            return True
        log.info("bot_seat_taken_over", match_id=key[0], seat=key[1], version=version)
        del self._left[key]
        return False

    async def _play(self, match_id: str, game: str, seat: str, level: str) -> None:
        key = (match_id, seat)
        try:
            token = await self._gateway.join(match_id, seat, f"{level} bot")
            calls = SeatCalls(self._gateway, match_id, seat, token)
            ending = await SeatPlayer(calls, game, level, self._decide).play()
            if ending is Ending.TAKEN:
                log.info("bot_seat_left_to_another", match_id=match_id, seat=seat)
                self._left[key] = _Left(-1, time.monotonic())
            else:
                self._done.add(key)
        except grpc.aio.AioRpcError as error:
            # the next round tries again (a match that ended refuses the join: done)
            if error.code() == grpc.StatusCode.FAILED_PRECONDITION:
                self._done.add(key)
            log.warning(
                "bot_seat_failed",
                match_id=match_id,
                seat=seat,
                code=error.code().name,
                detail=(error.details() or "")[:200],
            )
        except Exception:
            log.exception("bot_seat_failed", match_id=match_id, seat=seat)
        finally:
            del self._playing[key]
            BOTS_SEATS.set(len(self._playing))
