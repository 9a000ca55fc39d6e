"""Players: who a person (or a bot, or a script) is beyond one match.

A device credential (a secret the client makes once and keeps, at least 32 random
characters) is a player: its id is derived from the credential with the gateway's key, so
nothing is stored and every replica, after any restart, knows the same credential as the
same player. A sign-in answers a session (services/gateway/auth.py ``Tokens.session``): a
short-lived access token and a refresh token that ``Sessions`` lets be traded once.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict

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


class Sessions:
    """Refresh tokens are traded once: each names its family and generation, and a family
    moves on one generation per refresh. A token of an older generation than one this
    replica issued or took is a reuse (the token was copied): the family is closed, so the
    thief's session and the owner's both end and the device credential signs in again.

    Remembered per replica (a family a replica never saw is taken at its word, its
    signature and expiry checked), bounded in memory: a copied refresh token traded at two
    replicas is caught only where both trades reach the same one. A client that lost its
    session still has its device credential, so closing a family costs it one sign-in."""

    def __init__(self, max_families: int = MAX_FAMILIES) -> None:
        self._max = max_families
        #: family → the generation its next refresh must present (or -1: closed)
        self._next: OrderedDict[str, int] = OrderedDict()

    def trade(self, family: str, generation: int) -> bool:
        """True: the token may be traded (the family moves on); False: a reuse, or a
        closed family (it is closed now)."""
        expected = self._next.get(family)
        if expected is not None and (expected < 0 or generation < expected):
            self._next[family] = -1
            self._next.move_to_end(family)
            return False
        self._next[family] = generation + 1
        self._next.move_to_end(family)
        while len(self._next) > self._max:
            self._next.popitem(last=False)
        return True

    def issued(self, family: str, generation: int) -> None:
        """A family begun here (a sign-in): its first refresh presents ``generation``."""
        self._next[family] = generation
        self._next.move_to_end(family)
        while len(self._next) > self._max:
            self._next.popitem(last=False)
