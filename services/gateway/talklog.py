"""Table talk on Kafka: the gateway appends each message to ``talk.events`` (one record,
an EventEnvelope keyed by match id, so a match's talk is in one partition, as its events
are in theirs) and follows the whole topic into its ``TalkStore``.

Its own producer and reader, never the game's: the talk producer is idempotent but not
transactional (many gateway replicas write talk; talk needs no exactly-once beyond a
post's own retries), a post waits at most ``POST_TIMEOUT_S``, and at most
``MAX_POSTS_IN_FLIGHT`` posts wait at once, so Kafka trouble on the talk topic refuses
talk (UNAVAILABLE, RESOURCE_EXHAUSTED) while moves go on as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid

from aiokafka import AIOKafkaProducer
from google.protobuf import any_pb2, timestamp_pb2

from services.common.eventlog import Follower, LogRecord
from services.common.kafka_access import KafkaAccess
from services.common.logging import get_logger
from services.common.topics import TALK_STREAM, talk_topic
from services.gateway.talk import TalkStore
from tabletop.v1 import envelope_pb2, talk_pb2

log = get_logger(__name__)

#: the longest a post waits for Kafka's acknowledgement
POST_TIMEOUT_S = 5.0
#: posts waiting for Kafka at once, at most (more: RESOURCE_EXHAUSTED)
MAX_POSTS_IN_FLIGHT = 256
EVENT_TYPE = "tabletop.v1.TalkPosted"


class TalkUnavailable(Exception):
    """The message was not recorded (or its outcome is unknown): the client may retry."""


class TalkBusy(Exception):
    """Too many posts wait for Kafka: the client should retry shortly."""


def envelope(
    match_id: str, game: str, posted: talk_pb2.TalkPosted, actor: str, now: float
) -> envelope_pb2.EventEnvelope:
    """The talk event of one message (sequence 0: its partition orders it)."""
    payload = any_pb2.Any()
    payload.Pack(posted)
    occurred = timestamp_pb2.Timestamp()
    occurred.FromMilliseconds(int(now * 1000))
    event_id = str(uuid.uuid4())
    return envelope_pb2.EventEnvelope(
        event_id=event_id,
        match_id=match_id,
        stream=TALK_STREAM,
        event_type=EVENT_TYPE,
        occurred_at=occurred,
        causation_id=event_id,
        actor=actor,
        game=game,
        payload=payload,
        last_in_batch=True,
    )


def message_of(event: envelope_pb2.EventEnvelope) -> talk_pb2.TalkMessage | None:
    """The message a talk event holds (None: not a talk event)."""
    posted = talk_pb2.TalkPosted()
    if event.event_type != EVENT_TYPE or not event.payload.Unpack(posted):
        return None
    return talk_pb2.TalkMessage(
        match_id=event.match_id,
        channel=posted.channel,
        seat=posted.seat,
        display_name=posted.display_name,
        text=posted.text,
        board_version=posted.board_version,
        posted_at_ms=event.occurred_at.ToMilliseconds(),
        message_id=event.event_id,
    )


class TalkLog:
    def __init__(self, kafka: KafkaAccess, prefix: str, store: TalkStore) -> None:
        self.store = store
        self._topic = talk_topic(prefix)
        self._producer = AIOKafkaProducer(
            **kafka.client_options(),
            acks="all",
            enable_idempotence=True,
            linger_ms=0,
            request_timeout_ms=int(POST_TIMEOUT_S * 1000),
        )
        self._follower = Follower(kafka, self._topic)
        self._reader: asyncio.Task[None] | None = None
        self._in_flight = 0

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
            await asyncio.wait_for(self._producer.stop(), POST_TIMEOUT_S)
        await self._follower.stop()

    async def post(
        self, match_id: str, game: str, posted: talk_pb2.TalkPosted, actor: str
    ) -> talk_pb2.TalkMessage:
        """Append one message; TalkBusy or TalkUnavailable if it was not."""
        if self._in_flight >= MAX_POSTS_IN_FLIGHT:
            raise TalkBusy
        event = envelope(match_id, game, posted, actor, time.time())
        self._in_flight += 1
        try:
            await asyncio.wait_for(
                self._producer.send_and_wait(
                    self._topic, event.SerializeToString(), key=match_id.encode()
                ),
                POST_TIMEOUT_S,
            )
        except Exception as error:  # Kafka's, or the timeout: the post is not known done
            log.warning("talk_post_failed", match_id=match_id, error=type(error).__name__)
            raise TalkUnavailable from error
        finally:
            self._in_flight -= 1
        shown = message_of(event)
        assert shown is not None  # made just above
        return shown

    async def _read(self) -> None:
        while True:
            try:
                async for records in self._follower.fetches():
                    for record in records:
                        self._take(record)
            except asyncio.CancelledError:
                raise
            except Exception:  # a record that does not parse: its fetch is past, go on
                log.exception("talk_read_failed")
                await asyncio.sleep(1.0)

    def _take(self, record: LogRecord) -> None:
        try:
            message = message_of(record.envelope)
        except Exception:  # a record no gateway wrote: skipped, never the reader's end
            message = None
        if message is None or not message.match_id:
            log.warning("talk_record_skipped", partition=record.partition, offset=record.offset)
            return
        self.store.add(message)
