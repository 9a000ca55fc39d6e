"""Bots for the fault suite: play whole matches through the gateway while processes die.

A bot retries a call that failed with UNAVAILABLE or DEADLINE_EXCEEDED, with the same
command id, as an obedient client does; any other failure is counted by its code. Every
acknowledged command is recorded, so the suite can check none was lost.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc

from tabletop.v1 import board_pb2, gateway_pb2_grpc

T = TypeVar("T")
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
#: one call's deadline: long enough for the board to settle an append after a broker death
CALL_TIMEOUT_S = 45.0
#: a pause before each action: load a shared 2-core machine, not saturate it
THINK_S = 0.1
GAMES = (("crashland", ["solo"]), ("drillit", ["ana", "bo"]))


class Stopped(Exception):
    pass


@dataclass
class Record:
    """What the bots were told, shared between them (under ``lock``)."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    #: (match id, command id, version) of every acknowledged action or creation
    acked: list[tuple[str, str, int]] = field(default_factory=list)
    finished: set[str] = field(default_factory=set)
    retries: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    #: (time, ok) of every call, to see when the platform served again after a kill
    last_ok: float = 0.0

    def ok(self) -> None:
        self.last_ok = time.monotonic()


class Bot(threading.Thread):
    def __init__(self, address: str, seed: int, stop: threading.Event, record: Record) -> None:
        super().__init__(daemon=True, name=f"bot-{seed}")
        self._channel = grpc.insecure_channel(address)
        self._stub = gateway_pb2_grpc.GatewayStub(self._channel)
        self._rng = random.Random(seed)
        self._halt = stop
        self._record = record
        self.failure: BaseException | None = None

    def run(self) -> None:
        try:
            while not self._halt.is_set():
                self._play_one()
        except Stopped:
            pass
        except BaseException as error:  # reported by the suite
            self.failure = error
        finally:
            self._channel.close()

    def _call(self, method: Callable[..., T], request: object) -> T:
        """``method(request)`` until it succeeds; retryable failures are retried with the
        same request (the same command id)."""
        delay = 0.1
        while True:
            try:
                result = method(request, timeout=CALL_TIMEOUT_S)
                self._record.ok()
                return result
            except grpc.RpcError as error:
                code = error.code()
                if code not in RETRYABLE:
                    raise
                with self._record.lock:
                    self._record.retries[code.name] += 1
                if self._halt.is_set():
                    raise Stopped from error
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _play_one(self) -> None:
        game, players = self._rng.choice(GAMES)
        match_id = str(uuid.uuid4())  # chosen here, so a retried create is the same create
        create = board_pb2.CreateMatchRequest(
            game=game, players=players, match_id=match_id, command_id=f"create-{match_id}"
        )
        created = self._call(self._stub.CreateMatch, create)
        with self._record.lock:
            self._record.acked.append((match_id, create.command_id, created.version))
        mover = players[0]
        for _ in range(2000):
            if self._halt.is_set():
                return
            request = board_pb2.GetLegalActionsRequest(match_id=match_id, player=mover)
            legal = self._call(self._stub.GetLegalActions, request)
            if legal.next.finished:
                with self._record.lock:
                    self._record.finished.add(match_id)
                return
            if legal.next.players and legal.next.players[0] != mover:
                mover = legal.next.players[0]
                continue
            if not legal.actions:
                time.sleep(0.05)
                continue
            time.sleep(THINK_S)
            choice = legal.actions[self._rng.randrange(len(legal.actions))]
            submit = board_pb2.SubmitActionRequest(
                match_id=match_id,
                player=mover,
                action=choice.action,
                command_id=str(uuid.uuid4()),
                expected_version=legal.version,
            )
            try:
                reply = self._call(self._stub.SubmitAction, submit)
            except grpc.RpcError as error:
                with self._record.lock:
                    self._record.refused[error.code().name] += 1
                continue
            with self._record.lock:
                self._record.acked.append((match_id, submit.command_id, reply.version))
