"""Open streams counted per identity, connection and address (services/gateway/streams.py):
one past any bound is refused, and a closed stream gives its places back."""

from __future__ import annotations

import contextlib

import grpc
import pytest

from services.gateway.refusals import Refused
from services.gateway.streams import StreamBounds, Streams


def test_each_bound_refuses_the_stream_past_it_and_a_closed_one_frees_its_places() -> None:
    streams = Streams(StreamBounds(per_identity=2, per_connection=3, per_address=4))
    with contextlib.ExitStack() as held:
        held.enter_context(streams.opened("p1", "c1", "a1"))
        held.enter_context(streams.opened("p1", "c1", "a1"))
        with pytest.raises(Refused) as identity:
            held.enter_context(streams.opened("p1", "c2", "a1"))
        assert identity.value.code == grpc.StatusCode.RESOURCE_EXHAUSTED
        held.enter_context(streams.opened(None, "c1", "a1"))  # no token: no identity bound
        with pytest.raises(Refused) as connection:
            held.enter_context(streams.opened("p2", "c1", "a1"))
        assert "connection" in str(connection.value.message)
        held.enter_context(streams.opened("p2", "c2", "a1"))
        with pytest.raises(Refused) as address:
            held.enter_context(streams.opened("p3", "c3", "a1"))
        assert "address" in str(address.value.message)
        held.enter_context(streams.opened("p3", "c3", "a2"))  # another address
        assert streams.count("identity p1") == 2
    # all closed: nothing counted, every place free again
    assert [streams.count(k) for k in ("identity p1", "connection c1", "address a1")] == [0, 0, 0]
    with streams.opened("p1", "c1", "a1"):
        assert streams.count("address a1") == 1


def test_a_bound_of_zero_is_no_bound() -> None:
    streams = Streams(StreamBounds(per_identity=0, per_connection=0, per_address=0))
    with contextlib.ExitStack() as held:
        for _ in range(50):
            held.enter_context(streams.opened("p1", "c1", "a1"))
