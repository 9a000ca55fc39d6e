"""Table talk at the gateway, without Kafka: what a message may hold, how often a caller
and a match may talk, and each match's talk as this gateway has read it.

Talk is beside the game, never in its path: its own topic (``talk.events``, see
services/gateway/talklog.py), its own producer and reader, its own quotas. Who reads what:
the players' channel is everyone's; the spectators' channel is the spectators' while the
match is in play (a spectator sees every hand a seat does not, and must not be able to
tell a seat), and everyone's once it is over.

Every gateway replica reads the whole talk topic, as it reads the views topic, and keeps
each match's messages in memory (``TalkStore``), bounded; a message's sequence is its place
in the match's partition, so every replica numbers the talk of a match alike.
"""

from __future__ import annotations

import asyncio
import bisect
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable

from services.gateway.auth import Quota
from tabletop.v1 import talk_pb2

#: the longest message, in UTF-8 bytes (a few sentences; a chat line, not a document)
MAX_TALK_BYTES = 500
#: a caller (token) posts at most this many messages a second, in bursts of at most
TALK_RATE = 1.0
TALK_BURST = 5.0
#: a whole match (every seat and spectator together) likewise: a crowd of spectators cannot
#: flood a table, nor the memory its talk takes
MATCH_TALK_RATE = 5.0
MATCH_TALK_BURST = 20.0
#: the newest messages each match keeps in memory (replays and late watchers see these),
#: and the most messages kept for all matches (the least recently talked-in go first)
MAX_KEPT_PER_MATCH = 2_000
MAX_KEPT = 200_000

PLAYERS = talk_pb2.TALK_CHANNEL_PLAYERS
SPECTATORS = talk_pb2.TALK_CHANNEL_SPECTATORS


class BadTalk(ValueError):
    """A message that cannot be posted (the text says why, never echoes the input)."""


def check_text(text: str) -> str:
    """The message to post (surrounding blanks removed); BadTalk if it is blank or long.
    The edge has already refused text that is not printable (services/gateway/inputs.py)."""
    size = len(text.encode())
    if size > MAX_TALK_BYTES:
        raise BadTalk(f"text is longer than {MAX_TALK_BYTES} bytes (UTF-8)")
    text = text.strip()
    if not text:
        raise BadTalk("text must not be blank")
    return text


class TalkQuotas:
    """A token bucket per caller and one per match: a post takes one from each."""

    def __init__(
        self,
        rate: float = TALK_RATE,
        burst: float = TALK_BURST,
        match_rate: float = MATCH_TALK_RATE,
        match_burst: float = MATCH_TALK_BURST,
    ) -> None:
        self._callers = Quota(rate, burst)
        self._matches = Quota(match_rate, match_burst)

    def take(self, caller: str, match_id: str, now: float | None = None) -> float:
        """0 if the post may go, else the seconds to wait. A caller refused by its own
        bucket takes nothing from the match's, so one flooding caller does not silence
        the others."""
        wait = self._callers.take(caller, now)
        if wait > 0:
            return wait
        return self._matches.take(match_id, now)


def readable(message: talk_pb2.TalkMessage, seat: str, finished: bool) -> bool:
    """May a reader (``seat``: its seat, "" for a spectator) read ``message``?"""
    return message.channel != SPECTATORS or not seat or finished


class TalkStore:
    """Each match's talk as read from the talk topic, in order; bounded per match and in
    all (the least recently talked-in match goes first)."""

    def __init__(self, per_match: int = MAX_KEPT_PER_MATCH, kept: int = MAX_KEPT) -> None:
        self._per_match = per_match
        self._max_kept = kept
        self._talk: OrderedDict[str, list[talk_pb2.TalkMessage]] = OrderedDict()
        #: the next message of a match someone waits on: set once, then dropped
        self._signals: dict[str, asyncio.Event] = {}
        #: every match's message count (a few bytes each, never dropped): a match's talk
        #: keeps its numbering after its messages were dropped from memory
        self._counts: dict[str, int] = {}
        self._kept = 0

    def add(self, message: talk_pb2.TalkMessage) -> talk_pb2.TalkMessage:
        """Keep the next message of its match (numbered here), wake its watchers."""
        match_id = message.match_id
        count = self._counts.get(match_id, 0) + 1
        self._counts[match_id] = count
        message.sequence = count
        talk = self._talk.get(match_id)
        if talk is None:
            talk = self._talk[match_id] = []
        else:
            self._talk.move_to_end(match_id)
        talk.append(message)
        self._kept += 1
        if len(talk) > self._per_match:
            del talk[0]
            self._kept -= 1
        while self._kept > self._max_kept and len(self._talk) > 1:
            _, oldest = self._talk.popitem(last=False)
            self._kept -= len(oldest)
        signal = self._signals.pop(match_id, None)
        if signal is not None:
            signal.set()
        return message

    def since(self, match_id: str, after: int = 0) -> list[talk_pb2.TalkMessage]:
        """The kept messages of the match numbered above ``after``, in order."""
        talk = self._talk.get(match_id)
        if not talk:
            return []
        return talk[max(0, after - talk[0].sequence + 1) :]

    async def follow(self, match_id: str, after: int = 0) -> AsyncIterator[talk_pb2.TalkMessage]:
        """The kept messages numbered above ``after``, then each new one, for ever."""
        seen = after
        while True:
            for message in self.since(match_id, seen):
                seen = message.sequence
                yield message
            if self._counts.get(match_id, 0) <= seen:
                signal = self._signals.get(match_id)
                if signal is None:
                    signal = self._signals[match_id] = asyncio.Event()
                await signal.wait()
            else:  # numbered past what is kept (dropped from memory): go on from there
                seen = max(seen, self._counts.get(match_id, 0) - len(self._talk.get(match_id, ())))


def by_step(
    messages: Iterable[talk_pb2.TalkMessage], sequences: list[int]
) -> dict[int, list[talk_pb2.TalkMessage]]:
    """The messages shown with each replay step, by the step's event sequence: a message
    goes with the newest step at or before the version its author saw (the first step
    for one posted before it, the last for one posted after)."""
    shown: dict[int, list[talk_pb2.TalkMessage]] = {}
    if not sequences:
        return shown
    for message in messages:
        index = bisect.bisect_right(sequences, message.board_version) - 1
        shown.setdefault(sequences[max(0, index)], []).append(message)
    return shown
