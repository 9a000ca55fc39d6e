"""Every reach of the projector into Faust's and aiokafka's internals, and why.

Checked against faust-streaming 0.15.3 and aiokafka 0.14.0 (``FAUST_VERSION``,
``AIOKAFKA_VERSION``; pyproject.toml pins both). ``tests/unit/projector/
test_faust_internals.py`` holds a test per reach that fails when the library changes what
it relies on (a name, a signature, a line it depends on, or the effect): after an upgrade,
run it, then ``python -m tests.bench.ab`` against the code before, and the integration
tests of the projector. The rest of the projector uses Faust's public API only
(``services/projector/app.py``: settings, topics, a table, an agent taking batches with
``Stream.take_events``); this module plugs in as a transport driver does
(``app.transport`` with its ``Consumer`` and ``Conductor``) and as the ``Stream`` setting.
Taken through the public API instead (these were reaches too): static membership
(Faust's ``consumer_group_instance_id`` setting), the consumer and conductor classes (a
driver subclass set as ``app.transport``), and the producer buffer's bound
(``ProducerBufferT.max_messages``, in app.py).

1. **A read_committed consumer without exactly_once** (correctness; DESIGN-NOTES 6).
   Faust reads read_committed only under exactly_once, whose transactions delay every
   view by a commit interval; folds are idempotent by sequence, so at-least-once with
   read_committed gives both: no fold sees an aborted board transaction, and views follow
   within milliseconds. Faust builds the aiokafka consumer without an isolation level:
   ``AIOKafkaConsumer._isolation_level`` is set before ``start()`` reads it.
2. **The fetch long-poll** (Faust hard-codes 1,500 ms; aiokafka keeps one fetch in flight
   per broker, so a fetch for quiet partitions held busy ones back: views 0.7-4 s behind
   at 100 matches). ``AIOKafkaConsumer._fetch_max_wait_ms`` before ``start()``; then
   per fetch (``Fetcher._proc_fetch_request`` wrapped, ``Fetcher._fetch_max_wait_ms`` and
   ``_fetch_min_bytes`` set): while events flow a fetch waits up to ``max_wait_ms`` for
   ``min_bytes`` (the broker's fetches 0.45 → 0.28 per action, the projector's CPU
   0.46 → 0.30 ms); after an empty fetch with no partition paused, up to 500 ms for any
   byte (an idle projector 50 → 12 ms of CPU a second).
3. **Delivery without per-message tasks** (CPU: a no-op agent body cost 0.13-0.16 ms per
   event through Faust's path, 0.03 through this one; a rebuild 0.60 → 0.13 ms per event,
   then 0.052 with the conductor's and the acks' part). Faust's consumer awaits
   ``wait_first`` (four tasks and an ``asyncio.wait``) around the conductor's callback per
   record, its stream runs processors per event, and every ack goes through an interval
   tree of the offsets transaction markers leave out. The projector has one agent reading
   its topics in order and acking a batch once folded: ``LeanConsumer._drain_messages``
   hands a record to the channels directly when nothing would wait
   (``LeanConductor.deliver_nowait``, which reads the conductor's ``_tp_index``),
   ``getmany`` reads a partition's high-water mark once per fetch,
   ``BatchStream.take_events`` takes what the channel holds at once and acks it under
   one lock (the consumer's ack bookkeeping: ``_acked``, ``_acked_index``,
   ``_unacked_messages``, ``_n_acked``), and a partition commits after its highest acked
   offset (``_new_offset``; nothing between acked offsets was delivered, so there are no
   gaps to track: ``_add_gap``).
4. **Records a resume of the flow drops are fetched again** (correctness; one projector
   start in four left records unfolded). Faust resumes the flow at the end of a
   rebalance, after seeking to the committed offsets, and a resume clears every channel's
   queue: records fetched while that seek was awaited were queued past the read offset,
   then dropped, and nothing fetched them again. ``FlowControlEvent.resume`` is wrapped to
   say so (it reads the event's ``_queues``), and the consumer seeks again; a partition
   never committed goes to its beginning (``Consumer._thread.seek_to_beginning``), which
   aiokafka's ``seek_to_committed`` leaves where its fetcher is.
5. **Abort markers parsed only while a transaction is being skipped** (CPU: 5-6% of a
   rebuild's samples; 0.058 → 0.049 ms per event). aiokafka parses the control record after
   every transactional batch (a dataclass) to learn whether it ends an aborted
   transaction, which only matters while one is being skipped.
   ``PartitionRecords._contains_abort_marker`` is replaced for the process (it answers
   the same: with no aborted producer held there is nothing to discard).
6. **The partitions of the topics it writes, learnt before the first send** (correctness:
   without it the agent crashed on its first view, over and over). Faust asks aiokafka's
   producer for a topic's partitions as it sends (``key_partition``) and fails on a topic
   the producer has not seen; it learns them when it declares a topic, which the
   projector's Kafka user may not do (the installation creates the topics; a declare of
   an existing topic needs the right to create it). ``learn_partitions`` asks aiokafka's
   producer (``Producer._ensure_producer``, then the public ``partitions_for``).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import faust
from aiokafka.consumer.fetcher import PartitionRecords
from faust.transport.conductor import Conductor
from faust.transport.consumer import CONSUMER_FETCHING
from faust.transport.drivers.aiokafka import AIOKafkaConsumerThread
from faust.transport.drivers.aiokafka import Consumer as AIOKafkaConsumer
from faust.transport.drivers.aiokafka import Transport as AIOKafkaTransport
from faust.types import TP, EventT, Message
from faust.types.tuples import ack_lock
from mode.utils.futures import notify
from mode.utils.times import Seconds, want_seconds

#: the versions every reach here was checked against (pyproject.toml pins them)
FAUST_VERSION = "0.15.3"
AIOKAFKA_VERSION = "0.14.0"

#: the long-poll after an empty fetch while no partition is paused (reach 2)
IDLE_FETCH_WAIT_MS = 500


@dataclass(frozen=True)
class Fetching:
    """How the projector's consumer fetches: options aiokafka has and Faust does not pass."""

    #: the longest a fetch waits on the broker while events flow
    max_wait_ms: int
    #: the least data such a fetch waits for (after an empty fetch: any)
    min_bytes: int = 1


def install(app: faust.App, fetching: Fetching) -> None:
    """Make ``app`` deliver through this module (call before the app starts)."""
    app.transport = LeanTransport(app.conf.broker_consumer, app, fetching)
    parse_abort_markers_only_when_aborting()


# -- 6: the partitions of the topics the app writes -----------------------------------------
async def learn_partitions(app: faust.App, topics: Sequence[str]) -> None:
    """Have the app's (started) producer know these topics' partitions."""
    producer = cast(Any, app.producer)._ensure_producer()
    for topic in topics:
        await producer.partitions_for(topic)


# -- 1 and 2: the aiokafka consumer Faust builds --------------------------------------------
class _ReadCommittedConsumerThread(AIOKafkaConsumerThread):
    def _create_worker_consumer(self, transport: Any) -> Any:
        consumer = super()._create_worker_consumer(transport)
        # read by AIOKafkaConsumer.start(); Faust's constructor call does not pass them
        consumer._isolation_level = "read_committed"
        consumer._fetch_max_wait_ms = transport.fetching.max_wait_ms
        return consumer

    async def on_start(self) -> None:
        await super().on_start()
        consumer = cast(Any, self._consumer)
        adapt_fetches(consumer._fetcher, self.transport.fetching, consumer.paused)  # type: ignore[attr-defined]


def adapt_fetches(fetcher: Any, fetching: Fetching, paused: Callable[[], Any]) -> None:
    """After each fetch, the next one's wait: ``fetching``'s while events flow (or while a
    partition is paused: resumed, it waits for the fetch in flight, so that one stays
    short); after an empty one, up to ``IDLE_FETCH_WAIT_MS`` for any byte. Such a fetch
    asks for every partition (aiokafka fetches from a broker only once all its records
    are consumed), so it returns as soon as any has data."""
    fetch = fetcher._proc_fetch_request
    busy = fetching.max_wait_ms
    idle = max(busy, IDLE_FETCH_WAIT_MS)
    min_bytes = fetching.min_bytes
    fetcher._fetch_max_wait_ms = busy
    fetcher._fetch_min_bytes = min_bytes

    async def fetch_then_adapt(*args: Any) -> bool:
        fetched = bool(await fetch(*args))  # aiokafka: True when it buffered records
        flowing = fetched or paused()
        fetcher._fetch_max_wait_ms = busy if flowing else idle
        fetcher._fetch_min_bytes = min_bytes if flowing else 1
        return fetched

    fetcher._proc_fetch_request = fetch_then_adapt


# -- 3 and 4: the consumer, the conductor, the stream -----------------------------------------
class LeanConsumer(AIOKafkaConsumer):
    """Faust's aiokafka consumer, delivering records without per-message tasks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: a resume of the flow dropped queued events: seek to the committed offsets again
        self._fetch_again = False
        refetch_what_resuming_clears(self.app.flow_control, self._must_fetch_again)

    def _new_consumer_thread(self) -> _ReadCommittedConsumerThread:
        return _ReadCommittedConsumerThread(self, loop=self.loop, beacon=self.beacon)

    def _must_fetch_again(self) -> None:
        self._fetch_again = True

    async def seek_to_committed(self) -> Mapping[TP, int]:
        changelogs = self.app.tables.changelog_topics
        acked = self.app.topics.acks_enabled_for
        return await seek_to_committed_or_beginning(
            super().seek_to_committed,
            self._thread.seek_to_beginning,  # in the consumer's thread, as recovery seeks
            lambda topic: acked(topic) and topic not in changelogs,
        )

    def _new_offset(self, tp: TP) -> int | None:
        # The one stream of this app acks each partition's events in the order they were
        # delivered: everything up to the highest acked offset is handled, and the
        # offsets in between that were never delivered (commit markers, aborted records)
        # are nothing to wait for.
        acked = self._acked[tp]
        if not acked:
            return None
        offset = max(acked) + 1
        acked.clear()
        self._acked_index[tp].clear()
        return offset

    async def _add_gap(self, tp: TP, offset_from: int, offset_to: int) -> None:
        # Nothing to record: see _new_offset.
        return None

    async def getmany(self, timeout: float) -> AsyncGenerator[tuple[TP, Message], None]:  # noqa: ASYNC109
        records, active_partitions = await self._wait_next_records(timeout)
        if records is None or self.should_stop:
            return
        app = self.app
        generation_id = app.consumer_generation_id
        if not self.flow_active:
            self.log.dev("getmany called while flow not active. Seek back to committed offsets.")
            try:
                await self.perform_seek()
            except Exception as error:
                self.log.warning(f"exception performing seek when flow not active {error}")
            return
        to_message = self._to_message
        buffered = self._buffered_partitions
        for tp, batch in records.items():
            if not (active_partitions is None or tp in active_partitions or tp in buffered):
                continue
            app.monitor.track_tp_end_offset(tp, self.highwater(tp))
            for record in batch:
                if not self.flow_active or app.consumer_generation_id != generation_id:
                    return
                yield tp, to_message(tp, record)

    async def _drain_messages(self, fetcher: Any) -> None:  # pragma: no cover - a loop
        callback = self.callback
        consumer_should_stop = self._stopped.is_set
        fetcher_should_stop = fetcher._stopped.is_set
        read_offset = self._read_offset
        set_flag = self.diag.set_flag
        unset_flag = self.diag.unset_flag
        commit_every = self._commit_every
        suspended = self.suspend_flow.is_set
        buffered = self._buffered_partitions
        conductor = self.app.topics
        deliver_nowait = conductor.deliver_nowait if isinstance(conductor, LeanConductor) else None
        try:
            while not (consumer_should_stop() or fetcher_should_stop()):
                if self._fetch_again:
                    self._fetch_again = False
                    await self.perform_seek()
                set_flag(CONSUMER_FETCHING)
                # A partition whose channel is under pressure is left out of the fetch
                # (Faust's flow control), and its records stay in aiokafka's buffer, so
                # aiokafka fetches nothing new until they are taken: a fetch waiting for the
                # other partitions would then only return at its timeout, long after the
                # agent drained the channel and the partition was active again (rebuilds
                # stalled for up to 1 s). While one is left out, wait briefly.
                fetched = self.getmany(timeout=0.01 if buffered else 1.0)
                await self.sleep(0)
                if not self.should_stop:
                    async for tp, message in fetched:
                        if self._fetch_again:
                            break  # fetched before the seek the loop makes first
                        offset = message.offset
                        r_offset = read_offset[tp]
                        if r_offset is not None and offset < r_offset:
                            continue  # read again after a seek: dropped, as Faust does
                        if commit_every is not None and self._n_acked >= commit_every:
                            self._n_acked = 0
                            await self.commit()
                        if suspended() or deliver_nowait is None or not deliver_nowait(message):
                            await self.wait_first(callback(message), self.suspend_flow.wait())
                        read_offset[tp] = offset
                    await fetched.aclose()
                unset_flag(CONSUMER_FETCHING)
        except self.consumer_stopped_errors:
            if self.transport.app.should_stop:
                self.log.info("Broker stopped consumer, shutting down...")
                return
            raise
        except asyncio.CancelledError:
            if self.transport.app.should_stop:
                self.log.info("Consumer shutting down for user cancel.")
                return
            raise
        except Exception as exc:
            self.log.exception("Drain messages raised: %r", exc)
            raise
        finally:
            unset_flag(CONSUMER_FETCHING)


class LeanConductor(Conductor):
    """Faust's conductor, with a way to deliver a record without a coroutine per step."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._pressure: dict[TP, tuple[Any, Any]] = {}
        self._routes: dict[Any, tuple[Any, list[Any], bool, Any, Any, Any]] = {}

    def _pressure_callbacks(self, message_tp: Any) -> tuple[Any, Any]:
        callbacks = self._pressure.get(message_tp)
        if callbacks is None:
            tp = TP(message_tp.topic, message_tp.partition)  # aiokafka's, as Faust's
            app = self.app
            on_full = app.sensors.on_topic_buffer_full
            consumer = app.consumer

            def on_pressure_high() -> None:
                on_full(tp)
                consumer.on_buffer_full(tp)

            def on_pressure_drop() -> None:
                consumer.on_buffer_drop(tp)

            callbacks = self._pressure[message_tp] = (on_pressure_high, on_pressure_drop)
        return callbacks

    def _route(self, message_tp: Any) -> tuple[Any, list[Any], bool, Any, Any, Any] | None:
        """For a record of this partition: its channels (the index's set, to tell when it
        changed, and a list to deliver to), whether they all take the record's bytes as
        they came (the projector's agents do; a record for any other goes Faust's way),
        the pressure callbacks and the event type; None when no channel reads it."""
        channels = self._tp_index.get(message_tp)
        if not channels:
            return None
        route = self._routes.get(message_tp)
        if route is None or route[0] is not channels or len(route[1]) != len(channels):
            high, drop = self._pressure_callbacks(message_tp)
            raw = all(map(_raw, channels))
            event_type = self.app.conf.Event  # a settings lookup: once, not per record
            route = (channels, list(channels), raw, high, drop, event_type)
            self._routes[message_tp] = route
        return route

    def deliver_nowait(self, message: Message) -> bool:
        """Put ``message``'s event on every channel of its partition, as the conductor's
        callback does (one event and one reference per channel), if that needs no
        waiting: False, and nothing done, while flow is stopped, the producer's buffer is
        over its bound, a channel's queue is full, the index is being updated or a
        channel is not raw (the callback then takes it, as Faust does)."""
        route = self._route(message.tp)
        if route is None or not route[2] or self._tp_to_callback_lock.locked():
            return False
        app = self.app
        if not app.flow_control.is_active():
            return False
        buffer = app.producer.buffer
        if buffer.size > buffer.max_messages:
            return False
        _, channels, _, on_pressure_high, on_pressure_drop, event = route
        for channel in channels:
            if channel.queue.full():
                return False
        key, value, headers = message.key, message.value, message.headers
        message.refcount += len(channels)  # Message.incref, without its lock (as Faust's
        # compiled conductor does): only this loop's thread references a new message
        for channel in channels:
            channel.queue.put_nowait_enhanced(
                event(app, key, value, headers, message),
                on_pressure_high=on_pressure_high,
                on_pressure_drop=on_pressure_drop,
            )
        return True


def _raw(channel: Any) -> bool:
    """A channel whose events are a record's bytes as they came (raw keys and values of no
    declared type), which needs no decoding and cannot fail to decode."""
    schema = channel.schema
    untyped = (None, bytes)
    return bool(
        schema.key_serializer == "raw"
        and schema.value_serializer == "raw"
        and schema.key_type in untyped
        and schema.value_type in untyped
    )


class LeanTransport(AIOKafkaTransport):
    """Faust's aiokafka driver with the projector's consumer and conductor."""

    Consumer = LeanConsumer
    Conductor = LeanConductor

    def __init__(self, url: Any, app: Any, fetching: Fetching, **kwargs: Any) -> None:
        super().__init__(url, app, **kwargs)
        self.fetching = fetching


class BatchStream(faust.Stream[Any]):
    """A stream whose ``take_events`` takes the channel's queued events in one go."""

    async def take_events(
        self, max_: int, within: Seconds
    ) -> AsyncGenerator[Sequence[EventT[Any]], None]:
        """Lists of at most ``max_`` events: when the first arrives and fewer than
        ``max_`` are queued, what is queued ``within`` seconds later. Each list's events
        are acked once the body has handled it (at least once)."""
        self._finalized = True
        started_by_aiter = await self.maybe_start()
        channel = cast(Any, self.channel)
        queue = channel.queue
        app = self.app
        consumer = cast(Any, app.consumer)
        unacked = consumer._unacked_messages
        acking_topics = app.topics.acking_topics
        wait_s = want_seconds(within) if within else 0.0
        try:
            while not self.should_stop:
                try:
                    events: list[EventT[Any]] = [await queue.get()]
                except StopAsyncIteration:
                    return  # the channel ended (the app stops), as Faust's iterator ends
                if wait_s and queue.qsize() + 1 < max_:
                    await asyncio.sleep(wait_s)  # let more arrive
                while len(events) < max_ and not queue.empty():
                    events.append(queue.get_nowait())
                fresh: list[EventT[Any]] = []
                active = app.flow_control.is_active()
                generation = app.consumer_generation_id
                for event in events:
                    message = event.message
                    if not active or message.generation_id != generation:
                        continue  # fetched before a rebalance: another worker may own it
                    if message.topic in acking_topics and not message.tracked:
                        message.tracked = True
                        unacked.add(message)
                    fresh.append(event)
                try:
                    if fresh:
                        self.events_total += len(fresh)
                        self.current_event = fresh[-1]
                        yield fresh
                finally:
                    self.current_event = None
                    _ack(consumer, events)
        finally:
            if started_by_aiter:
                await self.stop()
                self.service_reset()


def _ack(consumer: Any, events: Sequence[EventT[Any]]) -> None:
    """``event.ack()`` for each of ``events``, under one lock: the message's reference
    dropped, and when it was the last, its offset marked done (Message.ack and
    Consumer.ack, as Faust's compiled stream iterator inlines them)."""
    acks_enabled_for = consumer.app.topics.acks_enabled_for
    committed_offsets = consumer._committed_offset
    unacked = consumer._unacked_messages
    with ack_lock:
        try:
            for event in events:
                message = event.message
                if message.acked:
                    continue
                refcount = message.refcount = max(message.refcount - 1, 0)
                if refcount:
                    continue
                message.acked = True
                if not acks_enabled_for(message.topic):
                    continue
                tp, offset = message.tp, message.offset
                committed = committed_offsets[tp]
                if committed is None or offset >= committed:
                    acked_index = consumer._acked_index[tp]
                    if offset not in acked_index:
                        unacked.discard(message)
                        acked_index.add(offset)
                        consumer._acked[tp].append(offset)
                        consumer._n_acked += 1
        finally:
            notify(consumer._waiting_for_ack)


def refetch_what_resuming_clears(flow_control: Any, on_cleared: Callable[[], None]) -> None:
    """Tell ``on_cleared`` when resuming the flow drops events from a channel's queue
    (reach 4); the consumer then seeks to the committed offsets again, and anything read
    twice is folded once (folds skip a sequence they hold)."""
    resume = flow_control.resume

    def resume_and_tell() -> None:
        cleared = any(queue.qsize() for queue in list(flow_control._queues))
        resume()
        if cleared:
            on_cleared()

    flow_control.resume = resume_and_tell


async def seek_to_committed_or_beginning(
    seek_to_committed: Callable[[], Any],
    seek_to_beginning: Callable[..., Any],
    streamed: Callable[[str], bool],
) -> Mapping[TP, int]:
    """Seek every partition to its committed offset, and one of a ``streamed`` topic
    never committed to its beginning (a table's changelog is left to Faust's recovery).

    aiokafka's ``seek_to_committed`` moves only partitions whose committed offset is above
    0 and leaves the others where its fetcher is: past the records it fetched. When a
    resume of the flow had dropped those (reach 4), nothing read them again: a restarted
    projector whose first records of a partition came before the rebalance's seek left
    them unfolded (about 1 restart in 8 with the fetch held for more data)."""
    committed: Mapping[TP, int] = await seek_to_committed()
    # None for a partition never committed, whatever Faust's annotation says
    never = [
        tp
        for tp, offset in committed.items()
        if (offset is None or offset <= 0) and streamed(tp.topic)
    ]
    if never:
        await seek_to_beginning(*never)
    return committed


# -- 5: aiokafka's abort markers ------------------------------------------------------------
def parse_abort_markers_only_when_aborting() -> None:
    """``PartitionRecords._contains_abort_marker`` asked only while an aborted transaction
    is being skipped (reach 5); applied once per process however often called."""
    original = PartitionRecords._contains_abort_marker
    if getattr(original, "lean", False):
        return

    def contains_abort_marker(self: Any, next_batch: Any) -> bool:
        if not self._aborted_producers:
            return False
        return bool(original(self, next_batch))

    contains_abort_marker.lean = True  # type: ignore[attr-defined]
    PartitionRecords._contains_abort_marker = contains_abort_marker
