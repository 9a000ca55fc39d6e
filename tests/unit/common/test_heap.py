"""A service's heap once it has started: what startup built is out of every collection."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from services.common.heap import YOUNG_THRESHOLD, settle_after_startup


@pytest.fixture
def restored_gc() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


@pytest.mark.usefixtures("restored_gc")
def test_what_startup_built_is_frozen_and_young_collections_are_rarer() -> None:
    built_at_startup = [[i] for i in range(1_000)]  # long-lived containers, tracked by gc
    tracked = len(gc.get_objects())
    settle_after_startup()
    # startup's objects are frozen: a full collection now walks a few, not all of them
    assert gc.get_freeze_count() > tracked * 0.9
    assert len(gc.get_objects()) < tracked // 10
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700
    assert built_at_startup[-1] == [999]
