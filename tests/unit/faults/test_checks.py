"""The fault and cluster suites' "every finished match is scored" check: a lobby its board
closed because nobody joined (MatchEnded.expired) is not scored by design."""

from __future__ import annotations

from tabletop.v1 import envelope_pb2, platform_events_pb2
from tests.faults.checks import unscored


def ended(expired: bool) -> envelope_pb2.EventEnvelope:
    envelope = envelope_pb2.EventEnvelope()
    envelope.payload.Pack(platform_events_pb2.MatchEnded(reason="ended", expired=expired))
    return envelope


def test_a_finished_match_without_a_score_is_reported_but_an_expired_lobby_is_not() -> None:
    log = {
        "board": {"played": [ended(False)], "lobby": [ended(True)], "scored": [ended(False)]},
        "scoring": {"scored": [envelope_pb2.EventEnvelope()]},
    }
    assert unscored(log) == ["played"]
