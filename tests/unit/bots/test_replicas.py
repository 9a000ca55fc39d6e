"""How replicas of the bots service share matches, and the one id of a bot's action
(services/bots/replicas.py)."""

from __future__ import annotations

import uuid

import pytest

from services.bots.replicas import Replica, command_id, decision_seed
from services.gateway.auth import MAX_ID

MATCHES = [str(uuid.UUID(int=i * 7919 + 1, version=4)) for i in range(600)]


@pytest.mark.parametrize("count", [1, 2, 3, 5])
def test_every_match_has_exactly_one_replica(count: int) -> None:
    replicas = [Replica(i, count) for i in range(count)]
    owners = [[r.index for r in replicas if r.owns(m)] for m in MATCHES]
    assert all(len(o) == 1 for o in owners)
    shares = [sum(1 for o in owners if o == [i]) for i in range(count)]
    assert min(shares) > len(MATCHES) / count / 2  # a fair split, not one replica's all


def test_a_replica_that_does_not_exist_is_refused() -> None:
    with pytest.raises(ValueError, match="does not exist"):
        Replica(2, 2)


def test_a_turn_has_one_command_id_within_the_gateways_bound() -> None:
    match = MATCHES[0]
    seat = "s" * 40  # the longest seat name
    assert command_id(match, seat, 7) == command_id(match, seat, 7)
    ids = {command_id(match, seat, v) for v in range(100)}
    ids |= {command_id(match, "other", 7), command_id(MATCHES[1], seat, 7)}
    assert len(ids) == 102
    assert all(len(i) <= MAX_ID for i in ids)
    assert decision_seed(match, seat, 7) == decision_seed(match, seat, 7)
    assert decision_seed(match, seat, 7) != decision_seed(match, seat, 8)
