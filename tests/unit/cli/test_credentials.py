"""The CLI's player credential (services/cli/session.py): made on first use, kept in a file
only its owner reads, found where the user's config goes (XDG, or TABLETOP_CREDENTIALS),
read back as the same player, and its session used while it has a while to live."""

from __future__ import annotations

import stat
import time
from pathlib import Path

import pytest

from services.cli.session import REFRESH_MARGIN_S, Credential, default_path
from tabletop.v1 import gateway_pb2


def test_the_credential_file_is_where_the_users_config_goes_unless_moved(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TABLETOP_CREDENTIALS", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert default_path() == tmp_path / "config" / "tabletop" / "credentials.json"
    monkeypatch.setenv("TABLETOP_CREDENTIALS", str(tmp_path / "mine.json"))
    assert default_path() == tmp_path / "mine.json"


def test_a_credential_is_made_once_kept_private_and_read_back_as_the_same(tmp_path: Path) -> None:
    path = tmp_path / "tabletop" / "credentials.json"
    made = Credential.load(path)
    assert path.exists() and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert len(made.secret) >= 32
    session = gateway_pb2.Session(
        player_id="p-" + "1" * 32,
        access_token="a",
        access_expires_at=int(time.time()) + 900,
        refresh_token="r",
        refresh_expires_at=int(time.time()) + 86_400,
        provider="device",
    )
    made.keep("gw:1", session)
    again = Credential.load(path)
    assert again.secret == made.secret
    assert again.sessions["gw:1"] == session
    assert again.usable("gw:1") == session
    assert again.usable("gw:2") is None  # another gateway: its own session


def test_a_session_about_to_expire_is_not_used_but_its_refresh_token_is(tmp_path: Path) -> None:
    credential = Credential()
    now = time.time()
    credential.keep(
        "gw",
        gateway_pb2.Session(
            access_token="a",
            access_expires_at=int(now + REFRESH_MARGIN_S - 1),
            refresh_token="r",
            refresh_expires_at=int(now + 3600),
        ),
    )
    assert credential.usable("gw", now) is None
    assert credential.refreshable("gw", now) == "r"
    assert credential.refreshable("gw", now + 3600) is None  # then: sign in again
