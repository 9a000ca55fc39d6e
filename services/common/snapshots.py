"""Snapshots of a stream service's state, so a restart reads a snapshot plus the tail of
its stream instead of the whole history.

A snapshot is a list of parts (protobuf messages of ``tabletop/v1/snapshot.proto``, packed
in Any): the stream writer's (``StreamWriter.snapshot``) and its owner's. It lives on the
compacted topic ``<prefix><stream>.snapshots``, in the partition ``shard % partitions``:
first its chunks (records well under Kafka's 1 MB limit, keyed ``<shard>/<slot>/<index>``),
then its head (keyed ``<shard>/head``) naming the snapshot id, the slot and the number of
chunks. With several shards the keys start ``<shard>of<shards>/``: a service whose shard
count changed never reads a snapshot of matches it no longer owns. A reader takes a
snapshot only through its head, so a snapshot whose writer died midway is never read.
Each snapshot writes the slot the current head does not name: the chunks the head needs
are never overwritten, so compaction (which keeps the newest record of each key) never
removes them. Chunks a smaller snapshot leaves beyond its count get
tombstones.

``Snapshotter`` takes the state synchronously (a consistent cut between two appends) and
writes it in the background, every so many events or seconds and at a clean stop.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from google.protobuf import any_pb2, message

from services.common.eventlog import KAFKA_TIMEOUT_S, MAX_RECORD_BYTES
from services.common.logging import get_logger
from services.common.metrics import (
    SNAPSHOT_AGE,
    SNAPSHOT_BYTES,
    SNAPSHOT_DURATION,
    SNAPSHOT_FAILURES,
)
from tabletop.v1 import snapshot_pb2

log = get_logger(__name__)

#: the most bytes of parts in one chunk (a record stays far below Kafka's 1 MB limit)
CHUNK_BYTES = 512 * 1024
#: a part (one of the owner's lists) holds at most this many entries, so that it fits a chunk
PART_ENTRIES = 2000
#: envelopes go into parts of at most this many bytes (one larger envelope goes alone)
PART_BYTES = 256 * 1024
#: a part alone in its chunk may be as large as one envelope the event log accepts, so any
#: envelope fits a snapshot record as it fits an event record
MAX_PART_BYTES = MAX_RECORD_BYTES + 1024
#: no two snapshots closer than this (seconds): catching up with a long history (scoring
#: following board.events from the start) would otherwise write one every second or so
MIN_GAP_S = 30.0

M = TypeVar("M", bound=message.Message)


@dataclass(frozen=True)
class Snapshot:
    snapshot_id: str
    taken_at_ms: int
    parts: Sequence[any_pb2.Any]

    def of(self, kind: type[M]) -> list[M]:
        """The parts of one kind, in the order they were written."""
        found: list[M] = []
        for part in self.parts:
            if part.TypeName() == kind.DESCRIPTOR.full_name:
                item = kind()
                part.Unpack(item)
                found.append(item)
        return found


def pack(parts: Sequence[message.Message]) -> list[any_pb2.Any]:
    packed = []
    for part in parts:
        wrapped = any_pb2.Any()
        wrapped.Pack(part)
        packed.append(wrapped)
    return packed


def chunked(
    parts: Sequence[any_pb2.Any], limit: int = CHUNK_BYTES, most: int = MAX_PART_BYTES
) -> list[list[any_pb2.Any]]:
    """``parts`` in order, grouped so that each group's parts add up to at most ``limit``
    bytes, or is one part of at most ``most`` bytes (a larger part is refused: its
    producer must split it)."""
    chunks: list[list[any_pb2.Any]] = [[]]
    size = 0
    for part in parts:
        part_size = part.ByteSize()
        if part_size > most:
            raise ValueError(f"a snapshot part of {part_size} bytes exceeds {most}")
        if size + part_size > limit and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append(part)
        size += part_size
    return chunks


def batches(count: int, size: int = PART_ENTRIES) -> list[slice]:
    """Slices cutting ``count`` entries into parts of at most ``size``."""
    return [slice(i, i + size) for i in range(0, count, size)]


def revealed_seeds(revealed: dict[str, str]) -> list[message.Message]:
    """Dice's or decks' revealed (closed) matches → their commitments, as snapshot parts."""
    entries = list(revealed.items())
    return [
        snapshot_pb2.RevealedSeeds(
            match_ids=[m for m, _ in entries[part]], commitments=[c for _, c in entries[part]]
        )
        for part in batches(len(entries))
    ]


def restore_revealed_seeds(snapshot: Snapshot, into: dict[str, str]) -> None:
    for seeds in snapshot.of(snapshot_pb2.RevealedSeeds):
        into.update(zip(seeds.match_ids, seeds.commitments, strict=True))


def sized(items: Sequence[message.Message], limit: int = PART_BYTES) -> list[slice]:
    """Slices cutting ``items`` (envelopes) into parts of at most ``limit`` bytes; an item
    larger than that is a part of its own."""
    cuts: list[slice] = []
    start, size = 0, 0
    for i, item in enumerate(items):
        item_size = item.ByteSize() + 8  # its tag and length in the part
        if size + item_size > limit and i > start:
            cuts.append(slice(start, i))
            start, size = i, 0
        size += item_size
    if start < len(items):
        cuts.append(slice(start, len(items)))
    return cuts


class SnapshotStore(Protocol):
    async def load(self) -> Snapshot | None: ...

    async def save(self, parts: Sequence[any_pb2.Any]) -> int:
        """Write a snapshot; returns its size in bytes."""


class KafkaSnapshotStore:
    """One shard's snapshots on the compacted snapshots topic."""

    def __init__(
        self,
        bootstrap: str,
        topic: str,
        stream: str,
        shard: int = 0,
        timeout: float = KAFKA_TIMEOUT_S,
        shards: int = 1,
    ) -> None:
        self.topic = topic
        self._bootstrap = bootstrap
        self._stream = stream
        self._shard = shard
        #: a snapshot holds the matches its shard owned under this shard count; after a
        #: rescale the same shard number owns other matches, so it reads only snapshots
        #: taken under the same count (keys "<shard>/…" for one shard, "<shard>of<n>/…")
        self._owner = str(shard) if shards <= 1 else f"{shard}of{shards}"
        self._timeout = timeout
        self._producer: AIOKafkaProducer | None = None
        self._partition = 0
        #: the slot the current head names (the next snapshot writes the other)
        self._slot = 1
        #: slot → how many chunks it holds (tombstones go to those past a new count)
        self._chunks: dict[int, int] = {0: 0, 1: 0}

    async def start(self) -> None:
        producer = AIOKafkaProducer(
            bootstrap_servers=self._bootstrap,
            acks="all",
            enable_idempotence=True,
            request_timeout_ms=int(self._timeout * 1000),
            max_request_size=MAX_PART_BYTES + 64 * 1024,
        )
        await producer.start()
        self._producer = producer
        try:
            partitions = sorted(
                await asyncio.wait_for(producer.partitions_for(self.topic), self._timeout)
            )
        except Exception as error:
            raise RuntimeError(
                f"topic {self.topic!r} cannot be found; create the topics first"
            ) from error
        self._partition = partitions[self._shard % len(partitions)]

    async def stop(self) -> None:
        if self._producer is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._producer.stop(), self._timeout)

    def _key(self, name: str) -> bytes:
        return f"{self._owner}/{name}".encode()

    async def load(self) -> Snapshot | None:
        """The newest complete snapshot of this shard, or None."""
        latest = await asyncio.wait_for(self._read_latest(), 6 * self._timeout)
        head_value = latest.get(self._key("head"))
        for key, value in latest.items():  # learn how full each slot is
            name = key.decode().split("/")
            if len(name) == 3 and value is not None:
                slot, index = int(name[1]), int(name[2])
                self._chunks[slot] = max(self._chunks.get(slot, 0), index + 1)
        if head_value is None:
            return None
        head = snapshot_pb2.SnapshotHead.FromString(head_value)
        self._slot = head.slot
        parts: list[any_pb2.Any] = []
        for index in range(head.chunks):
            value = latest.get(self._key(f"{head.slot}/{index}"))
            if value is None:
                log.error("snapshot_incomplete", stream=self._stream, missing=index)
                return None
            chunk = snapshot_pb2.SnapshotChunk.FromString(value)
            if chunk.snapshot_id != head.snapshot_id or chunk.index != index:
                log.error("snapshot_mismatch", stream=self._stream, chunk=index)
                return None
            parts.extend(chunk.parts)
        return Snapshot(head.snapshot_id, head.taken_at_ms, parts)

    async def _read_latest(self) -> dict[bytes, bytes | None]:
        """The newest value of each of this shard's keys in its partition."""
        consumer = AIOKafkaConsumer(
            bootstrap_servers=self._bootstrap,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            max_partition_fetch_bytes=2 * (MAX_PART_BYTES + 64 * 1024),
        )
        await consumer.start()
        try:
            tp = TopicPartition(self.topic, self._partition)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            end = (await consumer.end_offsets([tp]))[tp]
            prefix = self._key("")
            latest: dict[bytes, bytes | None] = {}
            while await consumer.position(tp) < end:
                batches = await consumer.getmany(tp, timeout_ms=500)
                for record in batches.get(tp, []):
                    if record.key is not None and record.key.startswith(prefix):
                        latest[record.key] = record.value
            return latest
        finally:
            await consumer.stop()

    async def save(self, parts: Sequence[any_pb2.Any]) -> int:
        snapshot_id = str(uuid.uuid4())
        slot = 1 - self._slot
        chunks = chunked(parts)
        sent: list[asyncio.Future[object]] = []
        size = 0
        for index, chunk_parts in enumerate(chunks):
            value = snapshot_pb2.SnapshotChunk(
                snapshot_id=snapshot_id, index=index, parts=chunk_parts
            ).SerializeToString()
            size += len(value)
            sent.append(await self._send(self._key(f"{slot}/{index}"), value))
        for index in range(len(chunks), self._chunks.get(slot, 0)):
            sent.append(await self._send(self._key(f"{slot}/{index}"), None))
        await asyncio.wait_for(asyncio.gather(*sent), self._timeout)
        head = snapshot_pb2.SnapshotHead(
            snapshot_id=snapshot_id,
            stream=self._stream,
            shard=self._shard,
            slot=slot,
            chunks=len(chunks),
            taken_at_ms=int(time.time() * 1000),
        ).SerializeToString()
        await asyncio.wait_for(await self._send(self._key("head"), head), self._timeout)
        self._slot, self._chunks[slot] = slot, len(chunks)
        return size + len(head)

    async def _send(self, key: bytes, value: bytes | None) -> asyncio.Future[object]:
        assert self._producer is not None
        future: asyncio.Future[object] = await self._producer.send(
            self.topic, key=key, value=value, partition=self._partition
        )
        return future


def release_memory() -> None:
    """After recovery: hand the memory the decoded snapshot and the tail occupied back to
    the operating system (glibc keeps freed heap otherwise: ~30 MB after restoring
    100,000 matches), so the resident size is what the state needs."""
    gc.collect()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


#: the owner's (and its writer's) state as snapshot parts, taken synchronously
Take = Callable[[], list[message.Message]]


class Snapshotter:
    """Writes a snapshot every ``every_events`` changes or ``every_seconds`` (when anything
    changed), never two within ``MIN_GAP_S``, and at a clean stop. ``changes`` counts what
    the state took in so far."""

    def __init__(
        self,
        store: SnapshotStore,
        stream: str,
        take: Take,
        changes: Callable[[], int],
        every_events: int,
        every_seconds: float,
    ) -> None:
        self._store = store
        self._stream = stream
        self._take = take
        self._changes = changes
        self._every_events = every_events
        self._every_seconds = every_seconds
        #: the changes the newest snapshot holds, and when it was taken (monotonic)
        self._at = 0
        self._taken = time.monotonic()
        #: when the newest attempt began (a failing one is retried only after the gap)
        self._tried = self._taken
        self._runner: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        SNAPSHOT_AGE.labels(stream).set_function(lambda: time.monotonic() - self._taken)

    async def load(self) -> Snapshot | None:
        """The newest snapshot, or None (none yet, or unreadable: recover from the log)."""
        started = time.perf_counter()
        try:
            snapshot = await self._store.load()
        except Exception as error:  # a full replay is slower, never wrong
            SNAPSHOT_FAILURES.labels(self._stream, "load").inc()
            log.error("snapshot_unreadable", stream=self._stream, error=repr(error))
            return None
        SNAPSHOT_DURATION.labels(self._stream, "load").observe(time.perf_counter() - started)
        if snapshot is not None:
            self._taken -= max(0.0, time.time() - snapshot.taken_at_ms / 1000)
        return snapshot

    def start(self) -> None:
        self._runner = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(min(1.0, self._every_seconds))
            pending = self._changes() - self._at
            now = time.monotonic()
            if now - self._tried < min(MIN_GAP_S, self._every_seconds):
                continue
            due = now - self._taken >= self._every_seconds
            if pending >= self._every_events or (pending and due):
                await self.snapshot()

    async def snapshot(self) -> bool:
        """Take the state now and write it; False if writing failed (retried later)."""
        async with self._lock:
            started = time.perf_counter()
            self._tried = cut = time.monotonic()
            at = self._changes()
            try:
                parts = pack(self._take())  # synchronous: a consistent cut of the state
            except Exception:  # a bug in an owner's part: serve on, say so loudly
                SNAPSHOT_FAILURES.labels(self._stream, "take").inc()
                log.exception("snapshot_not_taken", stream=self._stream)
                return False
            took = time.perf_counter()
            SNAPSHOT_DURATION.labels(self._stream, "take").observe(took - started)
            try:
                size = await self._store.save(parts)
            except Exception as error:
                SNAPSHOT_FAILURES.labels(self._stream, "write").inc()
                log.warning("snapshot_failed", stream=self._stream, error=repr(error))
                return False
            SNAPSHOT_DURATION.labels(self._stream, "write").observe(time.perf_counter() - took)
            SNAPSHOT_BYTES.labels(self._stream).set(size)
            self._at, self._taken = at, cut
            log.info("snapshot_written", stream=self._stream, bytes=size, parts=len(parts))
            return True

    async def stop(self) -> None:
        """At a clean stop: a last snapshot if anything changed since the newest (and the
        state was complete: snapshots had started)."""
        if self._runner is None:
            return
        self._runner.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._runner
        if self._changes() != self._at:
            await self.snapshot()
