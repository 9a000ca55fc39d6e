"""The projector's read model of matches: a table and an agent, as Faust has them.

The agent reads the four event topics (and the retry requests, in order with them) in
batches; the table ``match_states`` (changelog-backed, keyed by match id, co-partitioned
with the event topics) holds each match as folded so far, and once per match per batch
the agent publishes the match's ``ViewUpdate`` on the views topic, from which every
gateway renders the views its clients ask for. The folding itself is pure
(``services/projector/folder.py``); this module reads, writes and sends.

Nothing one match does can stop the stream: an event that fails to fold, or whose record
or view would exceed the broker's message limit, goes to the dead-letter topic (ids and
reason only) and is counted; that match's views stop, every other match's go on, until an
operator asks for the match to be folded again from its events (``tabletop admin
deadletter retry``, services/projector/deadletters.py).
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any, cast

import faust
from prometheus_client import Gauge

from services.adapters.folding import Gap
from services.common.config import Config
from services.common.logging import get_logger
from services.common.metrics import (
    PROJECTOR_DEAD_LETTERS,
    PROJECTOR_FOLD_ERRORS,
    PROJECTOR_FOLDED,
    PROJECTOR_GAPS,
    PROJECTOR_LAG,
)
from services.common.topics import (
    STREAMS,
    dead_letter_topic,
    event_topic,
    retry_topic,
    views_topic,
)
from services.projector import deadletters
from services.projector.acked_table import AckedTable
from services.projector.faust_internals import learn_partitions
from services.projector.folder import (
    WHOLE,
    ProjectionFolder,
    TooLarge,
    appended,
    check_sizes,
    dead_letter,
)
from tabletop.v1 import envelope_pb2

log = get_logger(__name__)

#: when the projector last finished folding a batch (staleness; a rebuild's end)
LAST_FOLD = Gauge(
    "tabletop_projector_last_fold_timestamp_seconds",
    "Unix time at which the projector last finished folding a batch of events.",
)
#: a retry reads the match's events for at most this long (the stream waits meanwhile)
RETRY_READ_LIMIT_S = 60.0
#: how often the folder evicts matches not folded lately when no batch comes to do it
EVICT_EVERY_S = 10.0

#: one record's envelopes (an append), as the agent groups them per match
Appends = Sequence[Sequence[envelope_pb2.EventEnvelope]]


class MatchViews:
    """The table of folded matches, the agent that folds into it, and the topics it
    publishes to, declared on ``app``."""

    def __init__(self, app: faust.App, config: Config) -> None:
        self.app = app
        prefix = config.topic_prefix
        self._kafka, self._prefix = config.kafka, prefix
        self._batch = config.projector_batch
        self._batch_wait_s = config.projector_batch_wait_ms / 1000
        self.retries = retry_topic(prefix)
        self.events = app.topic(
            *(event_topic(s, prefix) for s in STREAMS),
            self.retries,
            key_serializer="raw",
            value_serializer="raw",
        )
        self.views = app.topic(views_topic(prefix), key_serializer="raw", value_serializer="raw")
        self.dead_letters = app.topic(
            dead_letter_topic(prefix), key_serializer="raw", value_serializer="raw"
        )
        self.states = cast(
            AckedTable,
            app.Table(
                "match_states",
                default=None,
                partitions=config.partitions,
                key_type=str,
                value_type=bytes,  # raw: encode_record serializes once, its length is the size
                # Written once per match per batch, outside any one event's context: the
                # changelog partition comes from the key, as the board's producer chose the
                # event's (both the murmur2 partitioner over the match id's UTF-8 bytes).
                use_partitioner=True,
            ),
        )
        self.folder = ProjectionFolder(config.projector_matches_held, config.projector_idle_held_s)
        app.agent(self.events, name="match_views")(self.project)
        app.on_partitions_revoked.connect(self._revoked)  # type: ignore[arg-type]
        every = min(EVICT_EVERY_S, config.projector_idle_held_s / 2 or EVICT_EVERY_S)
        app.timer(every, name="evict_folded")(self._evict)

    async def _evict(self) -> None:
        self.folder.evict()  # between batches: the table holds every match it forgets

    async def _revoked(self, sender: Any, *args: Any, **kwargs: Any) -> None:
        self.folder.forget()  # another worker may fold these matches from now on

    async def project(self, stream: faust.StreamT[bytes]) -> None:
        """The agent: Faust acks a batch's offsets once this body has handled it."""
        batches = cast(faust.Stream[bytes], stream)  # take_events is not on StreamT
        written = [self.views, self.dead_letters, self.states.changelog_topic]
        await learn_partitions(self.app, [t.get_topic_name() for t in written])
        async for events in batches.take_events(self._batch, within=self._batch_wait_s):
            by_match: dict[str, list[Sequence[envelope_pb2.EventEnvelope]]] = {}
            retried: dict[str, int] = {}
            partition_of: dict[str, int] = {}
            folded: Counter[str] = Counter()
            last: envelope_pb2.EventEnvelope | None = None
            for event in events:
                message = event.message
                if message.topic == self.retries:
                    retried[(message.key or b"").decode()] = message.partition
                    continue
                envelopes = appended(event.value, message.headers)
                last = envelopes[-1]
                by_match.setdefault(last.match_id, []).append(envelopes)
                partition_of[last.match_id] = message.partition
                folded[last.stream] += len(envelopes)
            for key, appends in by_match.items():
                await self.fold_match(key, appends, partition_of[key])
            for key, partition in retried.items():
                await self.fold_again(key, partition)
            # before Faust acks the batch (and may commit past it): see acked_table.py
            await self.states.acked()
            if folded:  # first: a scrape that sees the new count sees this batch's end
                LAST_FOLD.set(time.time())
            for stream_name, count in folded.items():
                PROJECTOR_FOLDED.labels(stream_name).inc(count)
            if last is not None:
                PROJECTOR_LAG.set(max(0.0, time.time() - last.occurred_at.ToNanoseconds() / 1e9))

    async def fold_match(self, key: str, appends: Appends, partition: int | None = None) -> int:
        """One match's events of a batch: one table write and at most one view published.
        ``partition``: the match's, to read its events from when the table is behind them
        (None: it was just folded from them). Returns how many events were dead-lettered."""
        try:
            stored, update = self.folder.fold_batch(key, self.states.get(key), appends)
            check_sizes(stored, update)
        except Gap as gap:
            if partition is None:
                return await self.fold_one_by_one(key, appends)
            # The table is behind what the stream has read: the log, not the table, is
            # the authority, so the match is folded again from its events. (A write
            # lost before a commit did this; acked_table.py is why it should not recur.)
            PROJECTOR_GAPS.inc()
            log.error("fold_gap", match_id=key, error=str(gap))
            folded = await self.fold_from_log(key, partition)
            return await self.fold_one_by_one(key, appends) if folded is None else folded[0]
        except Exception:
            return await self.fold_one_by_one(key, appends)
        if stored is not None:
            self.states[key] = stored
        if update is not None:
            await self.views.send(key=key.encode(), value=update)
        return 0

    async def fold_one_by_one(self, key: str, appends: Appends) -> int:
        """The careful path: each event folded, checked, written and published on its own,
        so the one that fails (or outgrows the limit) is dead-lettered and the rest go on.
        Returns how many were dead-lettered."""
        folder = self.folder
        folder.forget_match(key)
        failed = 0
        for envelope in itertools.chain.from_iterable(appends):
            try:
                folder.load(key, self.states.get(key))
                done = folder.fold(envelope)
                stored = folder.record(key) if done else None
                update = folder.update(key) if done == WHOLE else None
                check_sizes(stored, update)
            except Exception as error:
                folder.forget_match(key)  # the table holds the match as it was
                reason = "too_large" if isinstance(error, TooLarge) else "fold_error"
                PROJECTOR_FOLD_ERRORS.labels(envelope.stream).inc()
                PROJECTOR_DEAD_LETTERS.labels(reason).inc()
                log.exception("fold_failed", match_id=key, stream=envelope.stream, reason=reason)
                await self.dead_letters.send(
                    key=key.encode(), value=dead_letter(envelope, reason, error)
                )
                failed += 1
                continue
            if stored is not None:
                folder.written(key, stored)
                self.states[key] = stored
            if update is not None:
                await self.views.send(key=key.encode(), value=update)
        return failed

    async def fold_again(self, key: str, partition: int) -> None:
        """A retry an operator asked for: the dead-lettered match folded from nothing."""
        folded = await self.fold_from_log(key, partition)
        if folded is not None and folded[0] == 0:
            await self.dead_letters.send(
                key=key.encode(), value=deadletters.resolved(key, folded[1])
            )

    async def fold_from_log(self, key: str, partition: int) -> tuple[int, int] | None:
        """The match folded from nothing, from all its events in the log so far (the ones
        the stream brings later are folded already and skipped by sequence). Returns how
        many events were dead-lettered and how many were read; None when the log could
        not be read or holds none of the match's."""
        try:
            envelopes = await asyncio.wait_for(
                deadletters.match_events(self._kafka, self._prefix, key, partition),
                RETRY_READ_LIMIT_S,
            )
        except Exception:  # the broker, not the match
            log.exception("match_read_failed", match_id=key)
            return None
        if not envelopes:
            log.warning("fold_of_unknown_match", match_id=key)
            return None
        self.folder.forget_match(key)
        if key in self.states:
            del self.states[key]
        failed = await self.fold_match(key, [envelopes])
        log.info("match_folded_again", match_id=key, events=len(envelopes), failed=failed)
        return failed, len(envelopes)
