"""Refresh trades decided by the log, so a copied refresh token is caught at any replica.

Every gateway replica appends each refresh it is asked for to ``gateway.sessions`` (a
``RefreshClaimed`` keyed by the session's family, so one family's claims are in one
partition, in one order) and follows the whole topic, folding every claim into its
``Sessions`` (services/gateway/players.py). A replica answers a refresh once it has
folded its own claim: the first claim of a generation in the log wins, wherever it was
made, and a later one closes the family for every replica at once. The refused replica
appends ``SessionClosed`` as well, so the closing outlives the compaction of the claims.

A refresh waits for one append and its return through the reader (milliseconds); Kafka
trouble refuses refreshes (UNAVAILABLE) and nothing else, since access tokens still work
until they expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid

from aiokafka import AIOKafkaProducer
from google.protobuf import any_pb2

from services.common.eventlog import Follower, LogRecord
from services.common.kafka_access import KafkaAccess
from services.common.logging import get_logger
from services.common.topics import SESSIONS_STREAM, sessions_topic
from services.gateway.players import Sessions
from tabletop.v1 import envelope_pb2, sessions_pb2

log = get_logger(__name__)

#: the longest a refresh waits for its claim to be appended and read back
TRADE_TIMEOUT_S = 5.0


class SessionsUnavailable(Exception):
    """The claim's outcome is not known: the client may refresh again."""


def _record(
    family: str, payload: sessions_pb2.RefreshClaimed | sessions_pb2.SessionClosed
) -> bytes:
    packed = any_pb2.Any()
    packed.Pack(payload)
    return envelope_pb2.EventEnvelope(
        event_id=str(uuid.uuid4()),
        match_id=family,  # the key the partition is chosen by
        stream=SESSIONS_STREAM,
        event_type=payload.DESCRIPTOR.full_name,
        payload=packed,
        last_in_batch=True,
    ).SerializeToString()


class SessionLog:
    def __init__(self, kafka: KafkaAccess, prefix: str, sessions: Sessions | None = None) -> None:
        self.sessions = sessions or Sessions()
        self._topic = sessions_topic(prefix)
        self._producer = AIOKafkaProducer(
            **kafka.client_options(),
            acks="all",
            enable_idempotence=True,
            linger_ms=0,
            request_timeout_ms=int(TRADE_TIMEOUT_S * 1000),
        )
        self._follower = Follower(kafka, self._topic)
        self._reader: asyncio.Task[None] | None = None
        #: this replica's claims waiting to be read back, by nonce
        self._waiting: dict[str, asyncio.Future[bool]] = {}

    async def start(self) -> None:
        await self._producer.start()
        await self._follower.start()
        self._reader = asyncio.create_task(self._read())

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._producer.stop(), TRADE_TIMEOUT_S)
        await self._follower.stop()

    async def trade(self, family: str, generation: int) -> bool:
        """True once this replica has read its claim back and it won."""
        nonce = uuid.uuid4().hex
        outcome = asyncio.get_running_loop().create_future()
        self._waiting[nonce] = outcome
        claim = sessions_pb2.RefreshClaimed(family=family, generation=generation, nonce=nonce)
        try:
            async with asyncio.timeout(TRADE_TIMEOUT_S):
                await self._producer.send_and_wait(
                    self._topic, _record(family, claim), key=family.encode()
                )
                won: bool = await outcome
        except Exception as error:  # Kafka's, or the timeout: the outcome is not known
            log.warning("refresh_claim_failed", error=type(error).__name__)
            raise SessionsUnavailable from error
        finally:
            self._waiting.pop(nonce, None)
        if not won:
            log.warning("refresh_token_reused", family=family, generation=generation)
            closed = sessions_pb2.SessionClosed(family=family)
            with contextlib.suppress(Exception):  # the claims still close it until compacted
                await asyncio.wait_for(
                    self._producer.send_and_wait(
                        self._topic, _record(family, closed), key=family.encode()
                    ),
                    TRADE_TIMEOUT_S,
                )
        return won

    async def _read(self) -> None:
        while True:
            try:
                async for records in self._follower.fetches():
                    for record in records:
                        self._take(record)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("sessions_read_failed")
                await asyncio.sleep(1.0)

    def _take(self, record: LogRecord) -> None:
        payload = record.envelope.payload
        claim, closed = sessions_pb2.RefreshClaimed(), sessions_pb2.SessionClosed()
        if payload.Unpack(claim) and claim.family:
            won = self.sessions.fold_claim(claim.family, claim.generation)
            waiting = self._waiting.get(claim.nonce)
            if waiting is not None and not waiting.done():
                waiting.set_result(won)
        elif payload.Unpack(closed) and closed.family:
            self.sessions.fold_closed(closed.family)
        else:  # a record no gateway wrote: skipped, never the reader's end
            log.warning("sessions_record_skipped", partition=record.partition, offset=record.offset)
