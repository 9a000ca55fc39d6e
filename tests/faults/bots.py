"""Bots for the fault suite: play whole matches through the gateway while processes die.

A bot opens a match through the lobby (its seats marked as bots), joins every seat with the
creator's token and acts for each seat with that seat's token, as any client does. It
retries a call that failed with UNAVAILABLE or DEADLINE_EXCEEDED with the same request (the
same command id: a retried create is the same match), and one refused with
RESOURCE_EXHAUSTED after the wait the gateway asks for; any other failure of an action is
counted by its code. Every acknowledged create, join and action is recorded with the
correlation id the board logs for it, so the suite can check none was lost.
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

from services.cli.session import Credential, signed_in
from services.gateway.auth import Tokens, creation
from tabletop.v1 import board_pb2, gateway_pb2, gateway_pb2_grpc

T = TypeVar("T")
RETRYABLE = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
Metadata = tuple[tuple[str, str], ...]
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
    #: (match id, board correlation id, version) of every acknowledged creation, join and
    #: action
    acked: list[tuple[str, str, int]] = field(default_factory=list)
    #: how many of them were creations, joins and actions
    kinds: Counter[str] = field(default_factory=Counter)
    finished: set[str] = field(default_factory=set)
    retries: Counter[str] = field(default_factory=Counter)
    refused: Counter[str] = field(default_factory=Counter)
    #: (time, ok) of every call, to see when the platform served again after a kill
    last_ok: float = 0.0

    def ok(self) -> None:
        self.last_ok = time.monotonic()


class Bot(threading.Thread):
    def __init__(
        self, address: str, token_key: bytes, seed: int, stop: threading.Event, record: Record
    ) -> None:
        super().__init__(daemon=True, name=f"bot-{seed}")
        #: the gateway's key: to know the ids a create derives and a join's token id (the
        #: correlation ids the board logs), which a client is not told
        self._key = token_key
        self._tokens = Tokens(token_key, ttl_seconds=0)
        self._address = address
        self._raw = grpc.insecure_channel(address)
        #: the bot is a player of its own (its calls signed with its session)
        self._credential = Credential()
        self._channel = signed_in(self._raw, address, self._credential)
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
            self._raw.close()

    def _call(self, method: Callable[..., T], request: object, metadata: Metadata = ()) -> T:
        """``method(request)`` until it succeeds; retryable failures are retried with the
        same request (the same command id), a quota refusal after the wait it asks for."""
        delay = 0.1
        while True:
            try:
                result = method(request, metadata=metadata, timeout=CALL_TIMEOUT_S)
                self._record.ok()
                return result
            except grpc.RpcError as error:
                code = error.code()
                if code not in (*RETRYABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
                    raise
                with self._record.lock:
                    self._record.retries[code.name] += 1
                if self._halt.is_set():
                    raise Stopped from error
                if code == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    trailing = dict(error.trailing_metadata() or ())
                    time.sleep(int(trailing.get("retry-after-ms", "1000")) / 1000)
                    continue
                time.sleep(delay)
                delay = min(delay * 2, 1.0)

    def _acked(self, kind: str, match_id: str, correlation_id: str, version: int) -> None:
        with self._record.lock:
            self._record.acked.append((match_id, correlation_id, version))
            self._record.kinds[kind] += 1

    def _open(self, game: str, players: list[str]) -> tuple[str, dict[str, Metadata]]:
        """A new match with every seat joined: its id and each seat's call metadata."""
        open_ = gateway_pb2.OpenMatchRequest(
            game=game, players=players, command_id=uuid.uuid4().hex, bots=players
        )
        opened = self._call(self._stub.CreateMatch, open_)
        player = self._credential.sessions[self._address].player_id
        ids = creation(self._key, player, open_.command_id)
        assert opened.match_id == ids.match_id, "a create answered another match"
        self._acked("create", opened.match_id, ids.command_id, opened.version)
        creator = (("authorization", f"Bearer {opened.creator_token}"),)
        seats: dict[str, Metadata] = {}
        for seat in players:
            join = gateway_pb2.JoinMatchRequest(
                match_id=opened.match_id, seat=seat, display_name=seat
            )
            joined = self._call(self._stub.JoinMatch, join, creator)
            join_id = self._tokens.verify(joined.token).token_id  # the board's correlation id
            self._acked("join", opened.match_id, join_id, joined.version)
            seats[seat] = (("authorization", f"Bearer {joined.token}"),)
        return opened.match_id, seats

    def _play_one(self) -> None:
        game, players = self._rng.choice(GAMES)
        match_id, seats = self._open(game, players)
        mover = players[0]
        for _ in range(2000):
            if self._halt.is_set():
                return
            request = board_pb2.GetLegalActionsRequest(match_id=match_id, player=mover)
            legal = self._call(self._stub.GetLegalActions, request, seats[mover])
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
                reply = self._call(self._stub.SubmitAction, submit, seats[mover])
            except grpc.RpcError as error:
                with self._record.lock:
                    self._record.refused[error.code().name] += 1
                continue
            self._acked("action", match_id, submit.command_id, reply.version)
