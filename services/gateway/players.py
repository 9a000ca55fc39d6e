"""Players: who a person (or a bot, or a script) is beyond one match.

A device credential (a secret the client makes once and keeps, at least 32 random
characters) is a player: its id is derived from the credential with the gateway's key, so
nothing is stored and every replica, after any restart, knows the same credential as the
same player. A sign-in answers a session (services/gateway/auth.py ``Tokens.session``): a
short-lived access token and a refresh token that ``Sessions`` lets be traded once (in
the order the log of every replica's trades gives: services/gateway/sessionlog.py).
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict
from typing import Protocol

#: a player id: "p-" and 32 hex digits (128 bits of the credential's HMAC)
PREFIX = "p-"
PLAYER_ID = re.compile(r"^p-[0-9a-f]{32}$")
#: a device credential: url-safe characters, long enough not to be guessed
DEVICE_SECRET = re.compile(r"^[A-Za-z0-9_-]{32,128}$")


class BadCredential(ValueError):
    """The credential cannot be a player's (the message says why, never echoing it)."""


def device_player(key: bytes, secret: str) -> str:
    """The player a device credential is."""
    if not DEVICE_SECRET.match(secret):
        raise BadCredential(
            "a device secret is 32 to 128 characters of A-Z, a-z, 0-9, '-' and '_' "
            "(make it once from a random source and keep it)"
        )
    digest = hmac.new(key, f"device:{secret}".encode(), hashlib.sha256).hexdigest()
    return PREFIX + digest[:32]


def is_player(subject: str) -> bool:
    """A token subject that names a player (not an anonymous spectator's random id)."""
    return bool(PLAYER_ID.match(subject))


#: refresh families a replica remembers (the least recently used are forgotten first)
MAX_FAMILIES = 200_000


class Trades(Protocol):
    async def trade(self, family: str, generation: int) -> bool:
        """True: the refresh token of ``generation`` in ``family`` may be traded."""
        ...


class Sessions:
    """Refresh tokens are traded once: each names its family and generation, and a family
    moves on one generation per refresh. The trades are claims folded in one order (the
    log's, services/gateway/sessionlog.py, so every replica folds the same): a claim of the
    family's next generation or later wins and moves it on; a claim of an older one is a
    reuse (the token was copied), which closes the family, so the thief's session and the
    owner's both end and the device credential signs in again.

    A family never folded is taken at its word (its signature and expiry are checked), and
    memory is bounded: the least recently used families are forgotten first. A client that
    lost its session still has its device credential, so closing a family costs it one
    sign-in."""

    def __init__(self, max_families: int = MAX_FAMILIES) -> None:
        self._max = max_families
        #: family → the generation its next refresh must present (-1: closed)
        self._next: OrderedDict[str, int] = OrderedDict()

    def fold_claim(self, family: str, generation: int) -> bool:
        """Fold one claim; True if it won (the token may be traded)."""
        expected = self._next.get(family)
        if expected is not None and (expected < 0 or generation < expected):
            self._remember(family, -1)
            return False
        self._remember(family, generation + 1)
        return True

    def fold_closed(self, family: str) -> None:
        self._remember(family, -1)

    async def trade(self, family: str, generation: int) -> bool:
        """One replica on its own (no log): the claim folded at once."""
        return self.fold_claim(family, generation)

    def _remember(self, family: str, state: int) -> None:
        self._next[family] = state
        self._next.move_to_end(family)
        while len(self._next) > self._max:
            self._next.popitem(last=False)
