"""Faust's delivery path for a projector that folds batches: the same consumer group,
conductor, channel, agent, stream, acks and commits, without the per-message tasks.

Faust hands a fetched record to its agent through a chain built for any topology (many
agents per topic, any order of acks): per record its fetcher ran ``wait_first`` (four
tasks and an ``asyncio.wait``) around the conductor's callback, the stream yielded to the
loop and ran its processors, ``take_events`` put the event into its buffer through a
processor, and every ack went through the message's and the consumer's bookkeeping plus
an interval tree of the offsets transaction markers leave out. A no-op agent body cost
0.15 ms of CPU per event (a fresh projector rebuilding a corpus). The projector has one
agent reading its topics in order and acking a batch once it is folded, so:

- ``LeanConsumer._drain_messages`` calls the conductor's callback directly when it
  cannot block (flow active, the producer's buffer below its bound, every queue of the
  partition's channels with room), and falls back to Faust's ``wait_first`` otherwise;
- ``LeanConsumer.getmany`` reads a partition's high-water mark once per fetch, not once
  per record;
- ``BatchStream.take_events`` takes what the channel's queue holds in one go (waiting
  ``within`` for more only while it holds less than ``max_``) and acks the batch after
  the agent's body handled it;
- offsets commit after the highest acked offset of each partition (``_new_offset``):
  its events are acked in order, so what lies between acked offsets (transaction
  markers, aborted records) was never delivered and needs no gap bookkeeping;
- records that Faust drops from the channel when it resumes the flow are read again
  (``refetch_what_resuming_clears``), from a partition's beginning when it has no
  committed offset (``seek_to_committed_or_beginning``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncGenerator, Callable, Mapping, Sequence
from typing import Any, cast

import faust
from aiokafka.consumer.fetcher import PartitionRecords
from aiokafka.partitioner import murmur2
from faust.exceptions import KeyDecodeError, ValueDecodeError
from faust.transport.conductor import Conductor
from faust.transport.consumer import CONSUMER_FETCHING
from faust.transport.drivers.aiokafka import Consumer as AIOKafkaConsumer
from faust.transport.drivers.aiokafka import Producer as AIOKafkaProducer
from faust.transport.producer import ProducerBuffer
from faust.types import TP, EventT, Message
from faust.types.tuples import ack_lock
from mode.utils.futures import notify
from mode.utils.times import Seconds, want_seconds


@functools.lru_cache(maxsize=65_536)
def _key_hash(key: bytes) -> int:
    return int(murmur2(key)) & 0x7FFFFFFF


def key_partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """aiokafka's default partitioner (murmur2 of the key, in Python), each key hashed once:
    a batch sends a view and a changelog record per match, keyed by its id."""
    if key is None:
        return all_partitions[0] if not available else available[0]
    return all_partitions[_key_hash(key) % len(all_partitions)]


def parse_abort_markers_only_when_aborting() -> None:
    """aiokafka (read_committed) parses each control batch's record (ControlRecord.parse,
    a dataclass) to learn whether it ends an aborted transaction, and if so discards its
    producer from the set of producers it is skipping. Every record of a transactional
    writer is followed by such a marker; while that set is empty there is nothing to
    discard, so the parse is skipped (5-6% of a rebuild's samples holding the GIL)."""
    original = PartitionRecords._contains_abort_marker
    if getattr(original, "lean", False):
        return

    def contains_abort_marker(self: Any, next_batch: Any) -> bool:
        if not self._aborted_producers:
            return False
        return bool(original(self, next_batch))

    contains_abort_marker.lean = True  # type: ignore[attr-defined]
    PartitionRecords._contains_abort_marker = contains_abort_marker


def refetch_what_resuming_clears(flow_control: Any, on_cleared: Callable[[], None]) -> None:
    """Tell ``on_cleared`` when resuming the flow drops events from a channel's queue.

    Faust resumes the flow once more at the end of a rebalance, after seeking the stream's
    partitions to their committed offsets, and a resume clears every channel's queue
    (events fetched before the rebalance may be of partitions this worker lost). Records
    fetched while that seek is awaited were delivered to the queue, past the read offset,
    and then dropped: nothing fetched them again, so a projector restarted after some
    appends published the first and left the rest unfolded until the next record of the
    partition, whose sequence then skipped theirs (the match dead-lettered). Seen in a
    test that stops the projector, plays three commands and starts it again: about one
    start in four. The consumer seeks to the committed offsets again instead; anything
    read twice is folded once (folds skip a sequence they hold)."""
    resume = flow_control.resume

    def resume_and_tell() -> None:
        cleared = any(queue.qsize() for queue in list(flow_control._queues))
        resume()
        if cleared:
            on_cleared()

    flow_control.resume = resume_and_tell


async def seek_to_committed_or_beginning(
    thread: Any, streamed: Callable[[str], bool]
) -> Mapping[TP, int]:
    """Seek every partition to its committed offset, and one of a ``streamed`` topic
    never committed to its beginning (where ``auto_offset_reset=earliest`` starts it;
    the tables' changelogs are Faust's recovery's to place).

    aiokafka's ``seek_to_committed`` moves only partitions whose committed offset is above
    0 and leaves the others where its fetcher is: past the records it fetched. When a
    resume of the flow had dropped those (``refetch_what_resuming_clears``), nothing read
    them again: a restarted projector whose first records of a partition came before the
    rebalance's seek left them unfolded (seen in about 1 restart in 8 with the fetch
    held for more data, ``projector_fetch_min_bytes``)."""
    committed: Mapping[TP, int] = await thread.seek_to_committed()
    # None for a partition never committed, whatever Faust's annotation says
    never = [
        tp
        for tp, offset in committed.items()
        if (offset is None or offset <= 0) and streamed(tp.topic)
    ]
    if never:
        await thread.seek_to_beginning(*never)
    return committed


class _Buffer(ProducerBuffer):
    #: A batch writes one table record per match (Faust sends those from this buffer, one
    #: at a time): at Faust's 100 a rebuild's batch of a few hundred matches made the
    #: conductor stop and flush (log: "producer buffer full") before every next record.
    max_messages = 2_000

    # Faust's size and put read the producer_threaded setting (a descriptor walk) on every
    # call (the conductor asks for the size per record, every table write puts); the
    # projector's producer is not threaded (LeanProducer uses this buffer only then).
    @property
    def size(self) -> int:
        return self.pending.qsize()

    def put(self, fut: Any) -> None:
        self.pending.put_nowait(fut)


class LeanProducer(AIOKafkaProducer):
    """Faust's aiokafka producer with a buffer whose size is cheap to read."""

    def __init__(self, transport: Any, loop: Any = None, **kwargs: Any) -> None:
        super().__init__(transport, loop=loop, **kwargs)
        if not self.app.conf.producer_threaded:
            buffer = _Buffer(loop=self.loop, beacon=self.beacon)
            buffer.app = self.app
            self.buffer = buffer


class LeanConductor(Conductor):
    """Faust's conductor, with a way to deliver a record without a coroutine per step."""

    def __init__(self, app: Any, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._pressure: dict[TP, tuple[Any, Any]] = {}
        self._routes: dict[Any, tuple[Any, list[tuple[Any, Any]], Any, Any]] = {}

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

    def _route(self, message_tp: Any) -> tuple[Any, list[tuple[Any, Any]], Any, Any] | None:
        """For a record of this partition: its channels (the index's set, to tell when it
        changed), each with its decoding into the event, and the pressure callbacks."""
        channels = self._tp_index.get(message_tp)
        if not channels:
            return None
        route = self._routes.get(message_tp)
        if route is None or route[0] is not channels or len(route[1]) != len(channels):
            high, drop = self._pressure_callbacks(message_tp)
            route = (channels, [(c, self._decoder(c)) for c in channels], high, drop)
            self._routes[message_tp] = route
        return route

    def _decoder(self, channel: Any) -> Any:
        """``channel``'s decoding of a record into its event, as its schema does it; for raw
        keys and values of no declared type (the projector's topics) that is the bytes."""
        app = self.app
        schema = channel.schema
        event_type: Any = app.conf.Event  # a settings lookup: once, not per record
        untyped = (None, bytes)
        if (
            schema.key_serializer == "raw"
            and schema.value_serializer == "raw"
            and schema.key_type in untyped
            and schema.value_type in untyped
        ):

            def decode_raw(message: Message) -> Any:
                return event_type(app, message.key, message.value, message.headers, message)

            return decode_raw
        serializers = app.serializers
        allow_empty = channel.allow_empty

        def decode(message: Message) -> Any:
            key = schema.loads_key(app, message, loads=serializers.loads_key)
            if message.value is None and allow_empty:
                value = None
            else:
                value = schema.loads_value(app, message, loads=serializers.loads_value)
            return event_type(app, key, value, message.headers, message)

        return decode

    def deliver_nowait(self, message: Message) -> bool:
        """Put ``message``'s event on every channel of its partition, as the conductor's
        callback does (decoded once per channel, one reference each), if that needs no
        waiting: False, and nothing done, while flow is stopped, the producer's buffer is
        over its bound, a channel's queue is full, the index is being updated or the
        record does not decode (the callback then takes it, with its error handling)."""
        route = self._route(message.tp)
        if route is None or self._tp_to_callback_lock.locked():
            return False
        app = self.app
        if not app.flow_control.is_active():
            return False
        buffer = app.producer.buffer
        if buffer.size > buffer.max_messages:
            return False
        _, decoders, on_pressure_high, on_pressure_drop = route
        for channel, _ in decoders:
            if channel.queue.full():
                return False
        try:
            events = [(channel, decode(message)) for channel, decode in decoders]
        except (KeyDecodeError, ValueDecodeError):
            return False
        message.refcount += len(events)  # Message.incref, without its lock (as Faust's
        # compiled conductor does): only this loop's thread references a new message
        for channel, event in events:
            channel.queue.put_nowait_enhanced(
                event, on_pressure_high=on_pressure_high, on_pressure_drop=on_pressure_drop
            )
        return True


class LeanConsumer(AIOKafkaConsumer):
    """Faust's aiokafka consumer, delivering records without per-message tasks."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: a resume of the flow dropped queued events: seek to the committed offsets again
        self._fetch_again = False
        refetch_what_resuming_clears(self.app.flow_control, self._must_fetch_again)

    def _must_fetch_again(self) -> None:
        self._fetch_again = True

    async def seek_to_committed(self) -> Mapping[TP, int]:
        changelogs = self.app.tables.changelog_topics
        acked = self.app.topics.acks_enabled_for
        return await seek_to_committed_or_beginning(
            self._thread, lambda topic: acked(topic) and topic not in changelogs
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
