"""The gateway's judgement of a seat token once its seat was given up (services/gateway/
access.py): given the match's updates as a gateway holds them, when a seat token asks for
its seat's view, then it is refused with a reason its player reads, and a seat never joined
or joined by that token is judged as before."""

from __future__ import annotations

import grpc
import pytest

from services.gateway.access import Access, Caller
from services.gateway.auth import Claims, Role
from services.gateway.refusals import Refused
from services.gateway.viewstore import ViewStore
from tabletop.v1 import match_pb2

MATCH = "m-1"


def _update(version: int, tokens: dict[str, str], states: dict[str, str]) -> match_pb2.ViewUpdate:
    return match_pb2.ViewUpdate(
        summary=match_pb2.MatchSummary(
            match_id=MATCH,
            game="drillit",
            players=["ann", "bob"],
            version=version,
            status=match_pb2.MATCH_STATUS_ACTIVE,
            seat_states=states,
        ),
        seat_tokens=tokens,
    )


def _seat(seat: str, token_id: str, version: int = 2) -> Caller:
    claims = Claims(MATCH, Role.SEAT, seat, "p-" + "a" * 32, token_id, 2**40, version)
    return Caller(claims, "ipv4:127.0.0.1")


async def test_a_given_up_seats_token_sees_nothing_and_is_told_why() -> None:
    store = ViewStore()
    await store.put(_update(3, {"ann": "t-ann", "bob": "t-bob"}, {"ann": "held", "bob": "held"}))
    access = Access(store)
    assert access.viewer(_seat("bob", "t-bob"), MATCH, "") == "bob"
    await store.put(_update(4, {"ann": "t-ann"}, {"ann": "held", "bob": "left"}))
    with pytest.raises(Refused) as refused:
        access.viewer(_seat("bob", "t-bob"), MATCH, "")
    assert refused.value.code == grpc.StatusCode.PERMISSION_DENIED
    assert "given up" in refused.value.message
    # another seat's token, and a seat joined again elsewhere, as before
    assert access.viewer(_seat("ann", "t-ann"), MATCH, "") == "ann"
    with pytest.raises(Refused) as again:
        access.viewer(_seat("ann", "older"), MATCH, "")
    assert "joined again elsewhere" in again.value.message


async def test_a_token_newer_than_the_update_held_is_not_judged_yet() -> None:
    store = ViewStore()
    await store.put(_update(4, {"ann": "t-ann"}, {"ann": "held", "bob": "open"}))
    # the new holder's join (version 6) is not projected here yet: its token is let through
    assert Access(store).viewer(_seat("bob", "t-new", version=6), MATCH, "") == "bob"
