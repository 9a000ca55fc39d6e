"""Players and their sessions (services/gateway/players.py, auth.Tokens.session, the
Authenticate and RefreshSession RPCs): a device credential is one player everywhere,
access and refresh tokens are not each other, a refresh token is traded once, forged,
expired and wrong-kind tokens are refused with a reason, and a player's limits are its
own."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, cast

import grpc
import pytest

from services.gateway.auth import BadToken, Role, Tokens
from services.gateway.players import BadCredential, Sessions, device_player, is_player
from services.gateway.service import GatewayService
from services.gateway.shards import Shard
from services.gateway.viewstore import ViewStore
from tabletop.v1 import board_pb2, gateway_pb2, match_pb2
from tests.unit.fakes import Aborted, FakeContext, Served
from tests.unit.gateway.test_scoring_and_gateway import CONFIG

KEY = b"k" * 32
SECRET = "d" * 40


def test_a_device_credential_is_the_same_player_for_every_replica_and_no_other() -> None:
    player = device_player(KEY, SECRET)
    assert is_player(player) and player == device_player(KEY, SECRET)
    assert device_player(KEY, "e" * 40) != player
    assert device_player(b"x" * 32, SECRET) != player  # derived with the gateway's key


@pytest.mark.parametrize("secret", ["", "short", "a" * 31, "a" * 129, "a" * 31 + " ", "é" * 40])
def test_a_credential_too_short_or_not_url_safe_is_refused_without_echo(secret: str) -> None:
    with pytest.raises(BadCredential) as refused:
        device_player(KEY, secret)
    assert secret not in str(refused.value) or not secret


def test_a_session_holds_an_access_token_that_verifies_and_a_refresh_token_that_does_not() -> None:
    tokens = Tokens(KEY, 3600)
    player = device_player(KEY, SECRET)
    session = tokens.session(player, "fam", 0)
    assert session.player_id == player
    claims = tokens.verify(session.access_token)
    assert (claims.role, claims.subject, claims.match_id) == (Role.PLAYER, player, "")
    assert session.access_expires_at <= time.time() + 15 * 60 + 1
    assert session.refresh_expires_at > time.time() + 29 * 24 * 3600
    with pytest.raises(BadToken):
        tokens.verify(session.refresh_token)  # not an access token
    refresh = tokens.verify_refresh(session.refresh_token)
    assert (refresh.player, refresh.family, refresh.generation) == (player, "fam", 0)
    with pytest.raises(BadToken):
        tokens.verify_refresh(session.access_token)  # not a refresh token
    seat, _ = tokens.issue("m-1", Role.SEAT, player, "ann")
    with pytest.raises(BadToken):
        tokens.verify_refresh(seat)


def test_an_expired_access_token_is_refused() -> None:
    tokens = Tokens(KEY, 3600)
    session = tokens.session(device_player(KEY, SECRET), "fam", 0, now=time.time() - 3600)
    with pytest.raises(BadToken) as expired:
        tokens.verify(session.access_token)
    assert "expired" in str(expired.value)


def test_a_refresh_token_is_traded_once_and_a_reuse_closes_its_family() -> None:
    sessions = Sessions()
    assert sessions.fold_claim("fam", 0)  # the owner refreshes: generation 1 is out
    assert sessions.fold_claim("fam", 1)  # and again: generation 2
    assert not sessions.fold_claim("fam", 1)  # a copy of generation 1 comes back: closed
    assert not sessions.fold_claim("fam", 2)  # ... and the owner's newest is closed with it
    assert sessions.fold_claim("other", 0)  # families are apart


def test_of_two_claims_of_one_generation_the_first_folded_wins_and_closes_on_the_second() -> None:
    """Two replicas trading one copied token: whichever claim the log holds first."""
    sessions = Sessions()
    assert sessions.fold_claim("fam", 3)
    assert not sessions.fold_claim("fam", 3)
    assert not sessions.fold_claim("fam", 4)  # the winner's next refresh: closed too


def test_a_family_closed_on_record_stays_closed() -> None:
    sessions = Sessions()
    sessions.fold_closed("fam")  # a replica starting reads a compacted closing
    assert not sessions.fold_claim("fam", 0)


def test_a_family_never_folded_is_taken_at_its_word_then_followed() -> None:
    sessions = Sessions()
    assert sessions.fold_claim("fam", 5)
    assert not sessions.fold_claim("fam", 5)


def test_the_families_remembered_are_bounded() -> None:
    sessions = Sessions(max_families=2)
    for family in ("a", "b", "c"):
        assert sessions.fold_claim(family, 0)
    assert not sessions.fold_claim("c", 0)  # remembered
    assert sessions.fold_claim("a", 0)  # forgotten: taken at its word again


async def test_one_replica_without_a_log_trades_in_memory() -> None:
    sessions = Sessions()
    assert await sessions.trade("fam", 0)
    assert not await sessions.trade("fam", 0)


# -- through the gateway's edge: sign-in, refresh, and what each token may do ------------------
class Board:
    """A board shard's CreateMatch: what the gateway forwards."""

    def __init__(self) -> None:
        self.created: list[board_pb2.CreateMatchRequest] = []

    async def CreateMatch(self, request: board_pb2.CreateMatchRequest) -> Any:
        self.created.append(request)
        return board_pb2.CreateMatchReply(match_id=request.match_id, version=1)


def _served(views: ViewStore | None = None, **config: Any) -> tuple[Served, Board]:
    board = Board()
    shard = cast(Shard, type("FakeShard", (), {"board": board})())
    settings = dataclasses.replace(CONFIG, max_view_lag_ms=0, **config)
    channel = grpc.aio.insecure_channel("127.0.0.1:9")  # connected lazily: never used
    return Served(GatewayService([shard], channel, views or ViewStore(), settings)), board


def _bearer(token: str) -> FakeContext:
    return FakeContext((("authorization", f"Bearer {token}"),))


def _device(secret: str = SECRET) -> gateway_pb2.AuthenticateRequest:
    return gateway_pb2.AuthenticateRequest(device=gateway_pb2.DeviceCredential(secret=secret))


def _opening() -> gateway_pb2.OpenMatchRequest:
    return gateway_pb2.OpenMatchRequest(game="crashland", players=["solo"])


async def _refusal(call: Any) -> Aborted:
    with pytest.raises(Aborted) as aborted:
        await call
    return aborted.value


async def test_a_device_signs_in_as_the_same_player_on_every_sign_in() -> None:
    served, _ = _served()
    first = await served.Authenticate(_device(), FakeContext())
    again = await served.Authenticate(_device(), FakeContext())
    other = await served.Authenticate(_device("e" * 40), FakeContext())
    assert first.player_id == again.player_id != other.player_id
    assert first.provider == "device" and first.access_token != again.access_token
    external = gateway_pb2.AuthenticateRequest(
        external=gateway_pb2.ExternalCredential(provider="oidc", token="x")
    )
    refused = await _refusal(served.Authenticate(external, FakeContext()))
    assert refused.code == grpc.StatusCode.UNIMPLEMENTED
    refused = await _refusal(served.Authenticate(_device("short"), FakeContext()))
    assert refused.code == grpc.StatusCode.INVALID_ARGUMENT and "short" not in refused.details


async def test_a_refresh_token_is_traded_once_and_a_reused_one_is_refused_with_its_reason() -> None:
    served, _ = _served()
    session = await served.Authenticate(_device(), FakeContext())
    refresh = gateway_pb2.RefreshSessionRequest(refresh_token=session.refresh_token)
    fresh = await served.RefreshSession(refresh, FakeContext())
    assert fresh.player_id == session.player_id and fresh.refresh_token != session.refresh_token
    reused = await _refusal(served.RefreshSession(refresh, FakeContext()))
    assert reused.code == grpc.StatusCode.UNAUTHENTICATED and "used before" in reused.details
    # the thief's refresh closed the family: the owner's newest refresh token too
    newest = gateway_pb2.RefreshSessionRequest(refresh_token=fresh.refresh_token)
    closed = await _refusal(served.RefreshSession(newest, FakeContext()))
    assert closed.code == grpc.StatusCode.UNAUTHENTICATED
    access = gateway_pb2.RefreshSessionRequest(refresh_token=session.access_token)
    wrong = await _refusal(served.RefreshSession(access, FakeContext()))
    assert wrong.code == grpc.StatusCode.UNAUTHENTICATED and "not a refresh token" in wrong.details


async def test_create_match_needs_a_valid_unexpired_access_token_of_a_player() -> None:
    served, board = _served()
    session = await served.Authenticate(_device(), FakeContext())
    forged = Tokens(b"f" * 32, 60).session(session.player_id, "fam", 0).access_token
    expired = Tokens(CONFIG.token_key, 60).session(
        session.player_id, "fam", 0, now=time.time() - 3600
    )
    seat, _ = Tokens(CONFIG.token_key, 60).issue("m-1", Role.SEAT, session.player_id, "solo")
    cases = {
        "none": (FakeContext(), "sign in first"),
        "forged": (_bearer(forged), "not valid"),
        "expired": (_bearer(expired.access_token), "expired"),
        "refresh": (_bearer(session.refresh_token), "refresh token"),
        "seat": (_bearer(seat), "sign in first"),
    }
    for name, (call, reason) in cases.items():
        refused = await _refusal(served.CreateMatch(_opening(), call))
        assert refused.code == grpc.StatusCode.UNAUTHENTICATED, name
        assert reason in refused.details, name
    assert board.created == []  # nothing forwarded
    opened = await served.CreateMatch(_opening(), _bearer(session.access_token))
    (forwarded,) = board.created
    assert forwarded.lobby.creator == session.player_id
    creator = Tokens(CONFIG.token_key, 60).verify(opened.creator_token)
    assert creator.subject == session.player_id


async def test_a_session_token_neither_acts_for_a_seat_nor_sees_one() -> None:
    served, _ = _served()
    session = await served.Authenticate(_device(), FakeContext())
    acting = board_pb2.GetLegalActionsRequest(match_id="m-1", player="solo")
    refused = await _refusal(served.GetLegalActions(acting, _bearer(session.access_token)))
    assert refused.code == grpc.StatusCode.PERMISSION_DENIED and "seat's token" in refused.details
    seeing = gateway_pb2.GetViewRequest(match_id="m-1", viewer="solo")
    refused = await _refusal(served.GetView(seeing, _bearer(session.access_token)))
    assert refused.code == grpc.StatusCode.PERMISSION_DENIED


def _lobby_of(match_id: str, creator: str, open_until: int) -> match_pb2.ViewUpdate:
    return match_pb2.ViewUpdate(
        summary=match_pb2.MatchSummary(
            match_id=match_id,
            game="crashland",
            version=1,
            status=match_pb2.MATCH_STATUS_ACTIVE,
            open_until=open_until,
        ),
        creator=creator,
    )


async def test_a_player_with_as_many_waiting_matches_as_allowed_is_told_when_one_closes() -> None:
    views = ViewStore()
    served, board = _served(views, max_open_lobbies_per_player=2)
    ana = await served.Authenticate(_device(), FakeContext())
    bo = await served.Authenticate(_device("e" * 40), FakeContext())
    now = int(time.time())
    await views.put(_lobby_of("m-1", ana.player_id, now + 100))
    await views.put(_lobby_of("m-2", ana.player_id, now + 40))
    call = _bearer(ana.access_token)
    refused = await _refusal(served.CreateMatch(_opening(), call))
    assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "2 matches waiting for players" in refused.details
    retry_ms = int(dict(call.trailing)["retry-after-ms"])
    assert 35_000 <= retry_ms <= 40_000  # when m-2 closes, not a guess
    assert board.created == []
    await served.CreateMatch(_opening(), _bearer(bo.access_token))  # another player can
    assert len(board.created) == 1


async def test_sign_ins_are_limited_per_address() -> None:
    served, _ = _served(signup_rate=0.01, signup_burst=2)
    await served.Authenticate(_device(), FakeContext())
    await served.Authenticate(_device("e" * 40), FakeContext())
    call = FakeContext()
    refused = await _refusal(served.Authenticate(_device("f" * 40), call))
    assert refused.code == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert int(dict(call.trailing)["retry-after-ms"]) > 0


async def test_a_player_in_as_many_unfinished_matches_as_allowed_finishes_one_first() -> None:
    views = ViewStore()
    served, board = _served(views, max_open_matches_per_player=2, max_open_lobbies_per_player=0)
    ana = await served.Authenticate(_device(), FakeContext())
    created = _lobby_of("m-1", ana.player_id, 0)
    created.summary.started = True
    seated = _lobby_of("m-2", "p-" + "c" * 32, 0)
    seated.summary.started = True
    seated.holders["ann"] = ana.player_id
    finished = _lobby_of("m-3", ana.player_id, 0)
    finished.summary.status = match_pb2.MATCH_STATUS_FINISHED
    for update in (created, seated, finished):
        await views.put(update)
    refused = await _refusal(served.CreateMatch(_opening(), _bearer(ana.access_token)))
    assert refused.code == grpc.StatusCode.FAILED_PRECONDITION
    assert "2 matches that have not ended" in refused.details
    assert board.created == []
    finished_now = _lobby_of("m-2", "p-" + "c" * 32, 0)
    finished_now.summary.version = 2
    finished_now.summary.status = match_pb2.MATCH_STATUS_FINISHED
    await views.put(finished_now)  # one of them ended: the player may start another
    await served.CreateMatch(_opening(), _bearer(ana.access_token))
    assert len(board.created) == 1
