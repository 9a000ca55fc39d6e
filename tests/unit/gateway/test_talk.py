"""Table talk's pure parts (services/gateway/talk.py): what a message may hold, the quotas
(a fake clock), each match's talk kept and followed, who reads which channel, and talk
in a replay's steps (services/gateway/replay.py)."""

from __future__ import annotations

import asyncio

import pytest

from services.gateway.replay import replay_steps, step_batches
from services.gateway.talk import (
    MAX_TALK_BYTES,
    PLAYERS,
    SPECTATORS,
    BadTalk,
    TalkQuotas,
    TalkStore,
    by_step,
    check_text,
    readable,
)
from services.gateway.talklog import envelope, message_of
from tabletop.v1 import gateway_pb2, talk_pb2
from tests.unit.adapters.test_step_views import board_events


def said(
    match_id: str, text: str, version: int = 1, channel: int = PLAYERS
) -> talk_pb2.TalkMessage:
    return talk_pb2.TalkMessage(
        match_id=match_id,
        text=text,
        board_version=version,
        channel=channel,  # type: ignore[arg-type]
    )


# -- the text -----------------------------------------------------------------------------
def test_a_message_is_kept_as_said_without_surrounding_blanks() -> None:
    assert check_text("  dig left, I take the goblin ") == "dig left, I take the goblin"


def test_the_bound_is_in_utf8_bytes_not_characters() -> None:
    assert check_text("a" * MAX_TALK_BYTES) == "a" * MAX_TALK_BYTES
    with pytest.raises(BadTalk, match="longer than 500 bytes"):
        check_text("a" * (MAX_TALK_BYTES + 1))
    # 250 two-byte characters fit, 251 do not
    assert check_text("é" * 250)
    with pytest.raises(BadTalk):
        check_text("é" * 251)


@pytest.mark.parametrize("text", ["", "   ", "\u3000"])
def test_a_blank_message_is_refused(text: str) -> None:
    with pytest.raises(BadTalk, match="blank"):
        check_text(text)


def test_a_refusal_never_echoes_the_text() -> None:
    text = "secret" * 200
    with pytest.raises(BadTalk) as refused:
        check_text(text)
    assert "secret" not in str(refused.value)


# -- quotas -------------------------------------------------------------------------------
def test_a_caller_talks_in_bursts_then_at_its_rate() -> None:
    quotas = TalkQuotas(rate=1.0, burst=3.0, match_rate=100.0, match_burst=100.0)
    assert [quotas.take("ana", "m", now=0.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert quotas.take("ana", "m", now=0.0) == pytest.approx(1.0)  # the truthful wait
    assert quotas.take("ana", "m", now=0.5) == pytest.approx(0.5)
    assert quotas.take("ana", "m", now=1.0) == 0.0
    assert quotas.take("ana", "m", now=1.0) > 0
    assert quotas.take("bo", "m", now=1.0) == 0.0  # another caller has its own bucket


def test_a_match_bounds_its_crowd_but_a_flooder_does_not_use_it_up() -> None:
    quotas = TalkQuotas(rate=1.0, burst=2.0, match_rate=1.0, match_burst=4.0)
    # one caller floods: refused by its own bucket after 2, taking nothing from the match's
    assert [quotas.take("flood", "m", now=0.0) > 0 for _ in range(10)] == [False] * 2 + [True] * 8
    assert quotas.take("ana", "m", now=0.0) == 0.0
    assert quotas.take("bo", "m", now=0.0) == 0.0
    # the match's bucket is empty now: a fresh caller waits for the match's rate
    assert quotas.take("cy", "m", now=0.0) == pytest.approx(1.0)
    assert quotas.take("cy", "other match", now=0.0) == 0.0


# -- who reads what -----------------------------------------------------------------------
def test_seats_read_spectators_only_once_the_match_is_over() -> None:
    players, spectators = said("m", "hi"), said("m", "hi", channel=SPECTATORS)
    assert readable(players, "ana", finished=False)
    assert readable(players, "", finished=False)
    assert readable(spectators, "", finished=False)
    assert not readable(spectators, "ana", finished=False)
    assert readable(spectators, "ana", finished=True)


# -- the store ----------------------------------------------------------------------------
def test_each_match_numbers_its_talk_from_one() -> None:
    store = TalkStore()
    for match_id, text in (("a", "1"), ("b", "1"), ("a", "2"), ("a", "3")):
        store.add(said(match_id, text))
    assert [(m.sequence, m.text) for m in store.since("a")] == [(1, "1"), (2, "2"), (3, "3")]
    assert [m.text for m in store.since("a", after=1)] == ["2", "3"]
    assert [m.sequence for m in store.since("b")] == [1]
    assert store.since("nobody talked") == []


def test_memory_is_bounded_per_match_and_in_all_yet_numbering_goes_on() -> None:
    store = TalkStore(per_match=3, kept=5)
    for i in range(1, 6):
        store.add(said("a", str(i)))
    assert [m.sequence for m in store.since("a")] == [3, 4, 5]
    for i in range(3):
        store.add(said("b", str(i)))
    store.add(said("c", "x"))  # 3 + 3 + 1 > 5: "a", talked in least recently, goes
    assert store.since("a") == []
    assert [m.sequence for m in store.since("b")] == [1, 2, 3]
    store.add(said("a", "again"))
    assert [m.sequence for m in store.since("a")] == [6]  # its sixth message, as elsewhere


async def test_a_follower_gets_the_kept_messages_then_each_new_one() -> None:
    store = TalkStore()
    store.add(said("a", "before"))
    got: list[str] = []

    async def follow() -> None:
        async for message in store.follow("a"):
            got.append(message.text)
            if len(got) == 3:
                return

    follower = asyncio.create_task(follow())
    await asyncio.sleep(0)
    store.add(said("other", "not mine"))
    store.add(said("a", "one"))
    await asyncio.sleep(0)
    store.add(said("a", "two"))
    await asyncio.wait_for(follower, 1)
    assert got == ["before", "one", "two"]


async def test_a_follower_resumes_after_the_sequence_it_saw() -> None:
    store = TalkStore()
    for text in ("1", "2", "3"):
        store.add(said("a", text))
    stream = store.follow("a", after=2)
    assert (await anext(stream)).text == "3"

    async def next_message() -> talk_pb2.TalkMessage:
        return await anext(stream)

    waiting = asyncio.create_task(next_message())
    await asyncio.sleep(0)
    assert not waiting.done()
    store.add(said("a", "4"))
    assert (await asyncio.wait_for(waiting, 1)).sequence == 4


# -- on the log -----------------------------------------------------------------------------
def test_a_talk_event_carries_the_message() -> None:
    posted = talk_pb2.TalkPosted(
        channel=SPECTATORS, display_name="kibitzer", text="nice", board_version=7
    )
    event = envelope("m1", "drillit", posted, "spectator", now=1_700_000_000.25)
    assert event.stream == "talk" and event.match_id == "m1" and event.sequence == 0
    message = message_of(event)
    assert message == talk_pb2.TalkMessage(
        match_id="m1",
        channel=SPECTATORS,
        display_name="kibitzer",
        text="nice",
        board_version=7,
        posted_at_ms=1_700_000_000_250,
        message_id=event.event_id,
    )
    event.event_type = "tabletop.v1.DiceRolled"
    assert message_of(event) is None


# -- in a replay ----------------------------------------------------------------------------
def test_talk_goes_with_the_step_its_author_saw() -> None:
    messages = [said("m", t, v) for t, v in (("early", 0), ("a", 1), ("b", 4), ("c", 9))]
    shown = by_step(messages, [1, 2, 4, 5])
    assert {k: [m.text for m in v] for k, v in shown.items()} == {
        1: ["early", "a"],
        4: ["b"],
        5: ["c"],
    }
    assert by_step(messages, []) == {}


def test_a_replay_step_carries_its_talk_and_batches_the_same() -> None:
    events = board_events("crashland", seed=2)
    talk = {1: [said("m", "gl hf")], 3: [said("m", "oops"), said("m", "ok", 3, SPECTATORS)]}
    serialize = gateway_pb2.ReplayStep.SerializeToString
    steps = [
        gateway_pb2.ReplayStep.FromString(serialize(m))
        for m in replay_steps(events, "", True, talk)
    ]
    by_number = {s.event.sequence: [m.text for m in s.talk] for s in steps}
    assert by_number[1] == ["gl hf"] and by_number[3] == ["oops", "ok"]
    assert sum(len(s.talk) for s in steps) == 3
    plain = [
        gateway_pb2.ReplayStep.FromString(serialize(m)) for m in replay_steps(events, "", True)
    ]
    for with_talk, without in zip(steps, plain, strict=True):
        with_talk.ClearField("talk")
        assert with_talk == without
    batches = step_batches(events, "", True, 7, 1 << 20, talk)
    batched = [
        s
        for b in batches
        for s in gateway_pb2.ReplayStepBatch.FromString(
            gateway_pb2.ReplayStepBatch.SerializeToString(b)
        ).steps
    ]
    assert [list(s.talk) for s in batched] == [
        list(gateway_pb2.ReplayStep.FromString(serialize(m)).talk)
        for m in replay_steps(events, "", True, talk)
    ]
