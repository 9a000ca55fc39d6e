"""Which shard owns a match: a stable hash, the same in the gateway and every service."""

from __future__ import annotations

import hashlib


def shard_of(match_id: str, shards: int) -> int:
    if shards <= 1:
        return 0
    return int.from_bytes(hashlib.sha256(match_id.encode()).digest()[:8], "big") % shards
