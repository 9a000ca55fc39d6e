"""Bots playing whole matches through the public gateway, as players would.

Each bot: create a match taking its first seat (its token and legal actions come with the
reply; the other seats are joined with the creator's token), wait until it is projected,
open ``PlayMatch`` (one stream per seat for its actions and views, as a game client holds
one socket; ``transport="unary"``: ``WatchMatch`` beside ``SubmitAction`` calls), then
loop — ``GetLegalActions`` (only when the turn changes seat; an acknowledgement carries
the mover's next ones) → pick one at random → submit it (timed until its
acknowledgement: the events are durable in Kafka) → wait until the stream delivers a view
at least as new as the acknowledged version (timed from the same start: what the player
sees). A bot acts only once it has seen its previous action's view, as a person at a
screen would. When a match ends, the bot starts another, until the run's time is up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import uuid
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import grpc
from aiokafka import AIOKafkaConsumer, TopicPartition

from services.cli.session import AsyncSigner
from services.common.kafka_access import KafkaAccess
from services.games.registry import get_game
from tabletop.v1 import board_pb2, gateway_pb2, gateway_pb2_grpc, match_pb2

from .procstat import snapshot, usage
from .servermetrics import MethodTotals, per_method, scrape_all
from .timing import ms, now

Reply = TypeVar("Reply")

#: the longest a bot waits for one reply or view before counting it lost
RPC_TIMEOUT_S = 15.0
#: a bot never plays more actions than this in one run (a bound, not a target)
MAX_ACTIONS_PER_BOT = 200_000


@dataclass
class LoadResult:
    """One load run: samples inside the measured window [start, end)."""

    concurrency: int
    start: float
    end: float
    ack_ms: list[float] = field(default_factory=list)
    view_ms: list[float] = field(default_factory=list)
    ack_stamps: list[float] = field(default_factory=list)
    create_ms: list[float] = field(default_factory=list)
    #: CreateMatch sent → the match's first action sent (its start as its player lives it)
    start_ms: list[float] = field(default_factory=list)
    #: CreateMatch refused in the window because the stack was full (RESOURCE_EXHAUSTED):
    #: the bot waited its retry-after outside any measured figure
    creates_refused: int = 0
    matches_finished: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    views_lost: int = 0
    #: (match id, acknowledged version, submit time) of each action in the window
    submitted: list[tuple[str, int, float]] = field(default_factory=list)
    #: SubmitAction → the view published on the views topic (what other replicas wait for)
    published_ms: list[float] = field(default_factory=list)
    #: matches played to their end (for replay)
    finished_ids: list[str] = field(default_factory=list)
    #: CPU seconds per process during the window (see procstat)
    cpu_s: dict[str, float] = field(default_factory=dict)
    #: gRPC handling totals per process and method at the window's start and end
    server_totals: tuple[dict[str, dict[str, MethodTotals]], dict[str, dict[str, MethodTotals]]] = (
        field(default_factory=lambda: ({}, {}))
    )

    def server_ms(self) -> dict[str, dict[str, float]]:
        """Mean server-side time and calls per acknowledged action, per method."""
        return per_method(*self.server_totals, self.actions)

    @property
    def actions(self) -> int:
        return len(self.ack_stamps)


class Watcher:
    """Reads one WatchMatch stream; tells when a version has arrived and when."""

    def __init__(self) -> None:
        self.version = 0
        self.arrivals: list[tuple[int, float]] = []
        self._changed = asyncio.Event()
        self.closed = False

    async def read(self, call: Any) -> None:
        try:
            async for view in call:
                self.arrived(int(view.version))
        except (grpc.aio.AioRpcError, asyncio.CancelledError):
            pass
        finally:
            self.close()

    def arrived(self, version: int) -> None:
        if version > self.version:
            self.version = version
            self.arrivals.append((version, now()))
            self._changed.set()

    def close(self) -> None:
        self.closed = True
        self._changed.set()

    async def arrival_of(self, version: int, limit_s: float) -> float | None:
        """When the first view with at least ``version`` arrived (None: not in ``limit_s``)."""
        deadline = now() + limit_s
        while self.version < version:
            remaining = deadline - now()
            if remaining <= 0 or self.closed:
                return None
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)
        stamp = next(s for v, s in self.arrivals if v >= version)
        self.arrivals = [(v, s) for v, s in self.arrivals if v >= version]
        return stamp


class PlayRefusedError(Exception):
    """An action refused on a PlayMatch stream (as SubmitAction's AioRpcError would say)."""

    def __init__(self, refused: gateway_pb2.PlayRefused) -> None:
        super().__init__(refused.message)
        self.refused = refused


class PlayStream:
    """One seat's PlayMatch stream: its actions answered by id; the views to a Watcher."""

    def __init__(self, call: Any, watcher: Watcher | None) -> None:
        self.call = call
        self._watcher = watcher
        self._answers: dict[int, asyncio.Future[gateway_pb2.PlayUpdate]] = {}
        self._next_id = 1
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(
        cls, stub: Any, match_id: str, viewer: str, metadata: Any, watcher: Watcher | None
    ) -> PlayStream:
        call = stub.PlayMatch(metadata=metadata)
        await call.write(
            gateway_pb2.PlayRequest(
                watch=gateway_pb2.WatchMatchRequest(match_id=match_id, viewer=viewer),
                views_with_acks=True,  # as a game client would: one message per action
            )
        )
        return cls(call, watcher)

    async def _read(self) -> None:
        failure: BaseException = grpc.aio.AioRpcError(
            grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(), "ended"
        )
        try:
            while True:
                update = await self.call.read()
                if update is grpc.aio.EOF:
                    break
                if update.HasField("view"):
                    if self._watcher is not None:
                        self._watcher.arrived(int(update.view.version))
                    continue
                if update.HasField("view_with_ack") and self._watcher is not None:
                    self._watcher.arrived(int(update.view_with_ack.version))
                answer = self._answers.pop(update.id, None)
                if answer is not None and not answer.done():
                    answer.set_result(update)
        except grpc.aio.AioRpcError as error:
            failure = error
        except asyncio.CancelledError:
            pass
        finally:
            if self._watcher is not None:
                self._watcher.close()
            for answer in self._answers.values():
                if not answer.done():
                    answer.set_exception(failure)

    async def submit(
        self, request: board_pb2.SubmitActionRequest, limit_s: float
    ) -> board_pb2.SubmitActionReply:
        ident, self._next_id = self._next_id, self._next_id + 1
        answer = asyncio.get_running_loop().create_future()
        self._answers[ident] = answer
        await self.call.write(gateway_pb2.PlayRequest(id=ident, action=request))
        update: gateway_pb2.PlayUpdate = await asyncio.wait_for(answer, limit_s)
        if update.HasField("refused"):
            raise PlayRefusedError(update.refused)
        return update.ack

    async def close(self) -> None:
        self.call.cancel()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


class ViewTap:
    """Reads the views topic directly (as the gateway does, read_uncommitted) and notes when
    each match's versions were published: how soon after an action the projector's view is
    there for other gateway replicas (the actor's gateway shows the board's update)."""

    def __init__(self, kafka: KafkaAccess, topic: str) -> None:
        self.kafka = kafka
        self.topic = topic
        self.published: dict[str, list[tuple[int, float]]] = {}
        self.records = 0

    async def run(self, stop: asyncio.Event, limit_s: float) -> None:
        consumer = AIOKafkaConsumer(
            **self.kafka.client_options(),
            isolation_level="read_uncommitted",
            enable_auto_commit=False,
        )
        await consumer.start()
        try:
            partitions = consumer.partitions_for_topic(self.topic)
            for _ in range(50):
                if partitions:
                    break
                await consumer._client.force_metadata_update()
                await asyncio.sleep(0.1)
                partitions = consumer.partitions_for_topic(self.topic)
            assigned = [TopicPartition(self.topic, p) for p in sorted(partitions or ())]
            consumer.assign(assigned)
            await consumer.seek_to_end(*assigned)
            deadline = now() + limit_s
            while not stop.is_set() and now() < deadline:
                batches = await consumer.getmany(timeout_ms=50)
                stamp = now()
                for records in batches.values():
                    for record in records:
                        update = match_pb2.ViewUpdate.FromString(record.value)
                        self.records += 1
                        self.published.setdefault(update.summary.match_id, []).append(
                            (int(update.summary.version), stamp)
                        )
        finally:
            await consumer.stop()

    def published_at(self, match_id: str, version: int) -> float | None:
        return next((s for v, s in self.published.get(match_id, ()) if v >= version), None)


class Bot:
    def __init__(
        self,
        stub: gateway_pb2_grpc.GatewayStub,
        game: str,
        seed: int,
        result: LoadResult,
        stop_at: float,
        timeout: float = RPC_TIMEOUT_S,
        transport: str = "play",
        signer: AsyncSigner | None = None,
    ) -> None:
        self.stub = stub
        #: the player the bot is (its creates are signed as it; a bot's first create signs up)
        self.signer = signer
        #: "play": actions and views on one PlayMatch stream per seat (as a game client
        #: holds one socket); "unary": SubmitAction calls beside a WatchMatch stream
        self.transport = transport
        self.streams: dict[str, PlayStream] = {}
        self.match_id = ""
        self.game = game
        self.rng = random.Random(seed)
        #: seat → its token metadata (bots join their seats like any client)
        self.auth: dict[str, tuple[tuple[str, str], ...]] = {}
        self.result = result
        self.stop_at = stop_at
        self.players = [f"player{i + 1}" for i in range(get_game(game).min_players)]
        self.actions = 0
        self.timeout = timeout

    def _in_window(self, stamp: float) -> bool:
        return self.result.start <= stamp < self.result.end

    async def run(self) -> None:
        while now() < self.stop_at and self.actions < MAX_ACTIONS_PER_BOT:
            try:
                await self.play_one()
            except grpc.aio.AioRpcError as error:
                self.result.errors[error.code().name] += 1
                await asyncio.sleep(0.05)  # no hot loop on a failing stack
            except PlayRefusedError as error:
                self.result.errors[error.refused.code] += 1
                await asyncio.sleep(0.05)
            except TimeoutError:
                self.result.errors["TIMEOUT"] += 1

    async def _create(
        self, opening: gateway_pb2.OpenMatchRequest
    ) -> tuple[gateway_pb2.OpenMatchReply, float] | None:
        """The reply, and when the attempt the stack admitted began. A refused create means
        the stack is full: wait its retry-after (counted apart, never in a latency) and ask
        again, until admitted or the run is over (None)."""
        while now() < self.stop_at:
            # the player's session (a sign-up or refresh, now and then) is not the create's
            signed = await self.signer.metadata() if self.signer is not None else ()
            began = now()
            try:
                reply = await self.stub.CreateMatch(opening, metadata=signed, timeout=self.timeout)
                return reply, began
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
                if self._in_window(now()):
                    self.result.creates_refused += 1
                retry = dict(error.trailing_metadata() or ()).get("retry-after-ms", "1000")
                # jittered, so the bots refused together do not all come back at once; never
                # past the run's end (the retry-after grows with the clients waiting: up to 30 s)
                pause = int(str(retry)) / 1000 * self.rng.uniform(0.5, 1.5)
                await asyncio.sleep(max(0.0, min(pause, self.stop_at - now())))
        return None

    async def play_one(self) -> None:
        viewer = self.players[0]
        opening = gateway_pb2.OpenMatchRequest(
            game=self.game,
            players=self.players,
            bots=self.players,
            command_id=str(uuid.uuid4()),
            seat=viewer,
        )
        admitted = await self._create(opening)
        if admitted is None:
            return
        created, began = admitted
        match_id = str(created.match_id)
        # Bots are ordinary clients: the first seat taken with the create, each other one
        # joined with the creator's token.
        creator = (("authorization", f"Bearer {created.creator_token}"),)
        joining = self.players
        first_legal = None  # the create that took the first seat brought its legal actions
        if created.seat_token:  # (a gateway before OpenMatchRequest.seat took none)
            if created.HasField("legal_actions"):
                first_legal = created.legal_actions
            self.auth[viewer] = (("authorization", f"Bearer {created.seat_token}"),)
            joining = self.players[1:]
        version = created.version
        for seat in joining:
            joined = await self.stub.JoinMatch(
                gateway_pb2.JoinMatchRequest(match_id=match_id, seat=seat),
                metadata=creator,
                timeout=self.timeout,
            )
            self.auth[seat] = (("authorization", f"Bearer {joined.token}"),)
            version = joined.version
        await self.stub.GetView(
            gateway_pb2.GetViewRequest(
                match_id=match_id,
                viewer=viewer,
                min_version=version,
                wait_ms=int(self.timeout * 1000),
            ),
            metadata=self.auth[viewer],
            timeout=self.timeout,
        )
        if self._in_window(now()):
            self.result.create_ms.append(ms(now() - began))
        watcher = Watcher()
        if self.transport == "play":
            self.match_id = match_id
            self.streams = {
                viewer: await PlayStream.open(
                    self.stub, match_id, viewer, self.auth[viewer], watcher
                )
            }
            try:
                await self._play(match_id, watcher, began, first_legal)
            finally:
                for stream in self.streams.values():
                    await stream.close()
                self.streams = {}
            return
        call = self.stub.WatchMatch(
            gateway_pb2.WatchMatchRequest(match_id=match_id, viewer=viewer),
            metadata=self.auth[viewer],
        )
        reader = asyncio.create_task(watcher.read(call))
        try:
            await self._play(match_id, watcher, began, first_legal)
        finally:
            call.cancel()
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader

    async def _submit(
        self, request: board_pb2.SubmitActionRequest, mover: str
    ) -> board_pb2.SubmitActionReply:
        """Latency counts from the first attempt, waits included (what the player sees)."""
        if self.transport == "play":
            stream = self.streams.get(mover)
            if stream is None:  # another seat of the match: its own token, its own stream
                stream = self.streams[mover] = await PlayStream.open(
                    self.stub, self.match_id, mover, self.auth[mover], None
                )
            return await self._patiently(lambda: stream.submit(request, self.timeout))
        return await self._patiently(
            lambda: self.stub.SubmitAction(request, metadata=self.auth[mover], timeout=self.timeout)
        )

    async def _patiently(self, call: Callable[[], Awaitable[Reply]]) -> Reply:
        """Call as a well-behaved client: a RESOURCE_EXHAUSTED of an action (the gateway's
        admission control) is counted and retried after its retry-after-ms with the same
        request (the same command id)."""
        while True:
            try:
                return await call()
            except PlayRefusedError as error:
                if error.refused.code != "RESOURCE_EXHAUSTED" or now() >= self.stop_at:
                    raise
                self.result.errors["RESOURCE_EXHAUSTED (retried)"] += 1
                await asyncio.sleep(max(error.refused.retry_after_ms, 1) / 1000)
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED or now() >= self.stop_at:
                    raise
                self.result.errors["RESOURCE_EXHAUSTED (retried)"] += 1
                retry = dict(error.trailing_metadata() or ()).get("retry-after-ms", "50")
                await asyncio.sleep(int(str(retry)) / 1000)

    async def _play(
        self,
        match_id: str,
        watcher: Watcher,
        created_at: float,
        legal: board_pb2.GetLegalActionsReply | None,
    ) -> None:
        # Each SubmitAction brings the mover's next legal actions back (return_legal_actions),
        # so GetLegalActions is asked only when the turn passes to another seat.
        holder = self.players[0] if legal is not None else ""
        while now() < self.stop_at and self.actions < MAX_ACTIONS_PER_BOT:
            if legal is None:
                holder = self.players[0]
                legal = await self.stub.GetLegalActions(
                    board_pb2.GetLegalActionsRequest(match_id=match_id, player=holder),
                    metadata=self.auth[holder],
                    timeout=self.timeout,
                )
            if legal.next.finished:
                self.result.matches_finished += 1
                self.result.finished_ids.append(match_id)
                return
            mover = legal.next.players[0] if legal.next.players else self.players[0]
            if mover != holder:
                holder = mover
                legal = await self.stub.GetLegalActions(
                    board_pb2.GetLegalActionsRequest(match_id=match_id, player=mover),
                    metadata=self.auth[mover],
                    timeout=self.timeout,
                )
            if not legal.actions:  # a chance node still resolving: ask again
                await asyncio.sleep(0.001)
                legal = None
                continue
            choice = legal.actions[self.rng.randrange(len(legal.actions))]
            request = board_pb2.SubmitActionRequest(
                match_id=match_id,
                player=mover,
                action=choice.action,
                command_id=str(uuid.uuid4()),
                expected_version=legal.version,
                return_legal_actions=True,
            )
            began = now()
            if created_at and self._in_window(began):
                self.result.start_ms.append(ms(began - created_at))
            created_at = 0.0
            reply = await self._submit(request, mover)
            legal = reply.legal_actions
            acked = now()
            self.actions += 1
            seen = await watcher.arrival_of(int(reply.version), self.timeout)
            if self._in_window(acked):
                self.result.ack_stamps.append(acked)
                self.result.ack_ms.append(ms(acked - began))
                self.result.submitted.append((match_id, int(reply.version), began))
                if seen is None:
                    self.result.views_lost += 1
                else:
                    self.result.view_ms.append(ms(seen - began))
            if seen is None:
                self.result.errors["VIEW_NOT_SEEN"] += 1
                return
            if reply.finished:
                self.result.matches_finished += 1
                self.result.finished_ids.append(match_id)
                return


async def run_load(
    gateway: str,
    game: str,
    concurrency: int,
    duration: float,
    warmup: float,
    seed: int = 0,
    channels: int = 8,
    rpc_limit_s: float = RPC_TIMEOUT_S,
    pids: Mapping[str, int | None] | None = None,
    metrics: Mapping[str, str] | None = None,
    views: tuple[KafkaAccess, str] | None = None,
    transport: str = "play",
) -> LoadResult:
    """``concurrency`` bots for ``warmup + duration`` s; samples from the last ``duration``,
    and the CPU each process in ``pids`` used in that window."""
    begin = now()
    result = LoadResult(concurrency, begin + warmup, begin + warmup + duration)
    watched = {**(pids or {}), "bench client": os.getpid()}

    async def cpu_window() -> None:
        await asyncio.sleep(max(0.0, result.start - now()))
        before = snapshot(watched)
        served = await asyncio.to_thread(scrape_all, metrics or {})
        await asyncio.sleep(max(0.0, result.end - now()))
        result.cpu_s = usage(before, snapshot(watched))
        result.server_totals = (served, await asyncio.to_thread(scrape_all, metrics or {}))

    meter = asyncio.create_task(cpu_window())
    tap = ViewTap(*views) if views else None
    tap_stop = asyncio.Event()
    tapping = (
        asyncio.create_task(tap.run(tap_stop, warmup + duration + 3 * rpc_limit_s + 10))
        if tap
        else None
    )
    pool = [grpc.aio.insecure_channel(gateway) for _ in range(max(1, min(channels, concurrency)))]
    try:
        bots = [
            Bot(
                gateway_pb2_grpc.GatewayStub(pool[i % len(pool)]),
                game,
                seed * 1_000 + i,
                result,
                result.end,
                rpc_limit_s,
                transport,
                AsyncSigner(gateway, channel=pool[i % len(pool)]),
            )
            for i in range(concurrency)
        ]
        await asyncio.wait_for(
            asyncio.gather(*(bot.run() for bot in bots)),
            timeout=warmup + duration + 3 * rpc_limit_s + 10,
        )
        await meter
    finally:
        meter.cancel()
        tap_stop.set()
        if tapping is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(tapping, 10)
        for channel in pool:
            await channel.close()
    if tap is not None:
        for match_id, version, began in result.submitted:
            published = tap.published_at(match_id, version)
            if published is not None:
                result.published_ms.append(ms(published - began))
    return result


async def finish_one_match(gateway: str, game: str, seed: int, limit_s: float = 120.0) -> list[str]:
    """Play one match to its end, untimed (a short run on a busy machine may finish none,
    and replay needs a finished match: ExportMatch refuses one still in play)."""
    result = LoadResult(1, 0.0, 0.0)  # an empty window: nothing is sampled
    async with grpc.aio.insecure_channel(gateway) as channel:
        bot = Bot(
            gateway_pb2_grpc.GatewayStub(channel),
            game,
            seed,
            result,
            now() + limit_s,
            signer=AsyncSigner(gateway, channel=channel),
        )
        while not result.finished_ids and now() < bot.stop_at:
            await bot.play_one()
    return result.finished_ids
