"""A service's heap: what startup built and what survives a middle or full collection are out
of later collections; cycles among frozen objects are still freed, once resident memory has
doubled; every pause is counted by generation."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Callable, Iterator

import pytest
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest

from services.common import heap
from services.common.heap import (
    YOUNG_THRESHOLD,
    Settling,
    collect_young_forever,
    due_generation,
    resident_bytes,
    settle_after_startup,
)


class Node:
    """A cycle (it refers to itself) that reference counting alone never frees."""

    def __init__(self) -> None:
        self.me = self


@pytest.fixture
def restored_gc() -> Iterator[list[Settling]]:
    threshold, callbacks = gc.get_threshold(), list(gc.callbacks)
    installed: list[Settling] = []
    gc.disable()  # only the tests' own collections, counted exactly
    yield installed
    gc.enable()
    gc.callbacks[:] = callbacks
    gc.unfreeze()
    gc.set_threshold(*threshold)
    if heap._settling is not None:
        REGISTRY.unregister(heap._settling)
        heap._settling = None


def settling(installed: list[Settling], resident: Callable[[], int] = resident_bytes) -> Settling:
    """A ``Settling`` whose baseline is everything alive now (as at a service's startup)."""
    gc.collect()
    gc.freeze()
    settled = Settling(resident=resident)
    gc.callbacks.append(settled)
    installed.append(settled)
    return settled


def exported(settled: Settling, metric: str) -> dict[str, float]:
    """``{generation: value}`` of one of the exported series, as a scrape reads it."""
    found: dict[str, float] = {}
    for line in generate_latest(_registry(settled)).decode().splitlines():
        if line.startswith(metric + "{"):
            name, value = line.rsplit(" ", 1)
            found[name.split('"')[1]] = float(value)
    return found


def pauses(settled: Settling) -> dict[str, float]:
    return exported(settled, "tabletop_gc_pause_seconds_count")


def freed(settled: Settling) -> dict[str, float]:
    return exported(settled, "tabletop_gc_collected_objects_total")


def test_what_startup_built_is_frozen_and_young_collections_are_rarer(
    restored_gc: list[Settling],
) -> None:
    built_at_startup = [[i] for i in range(1_000)]  # long-lived containers, tracked by gc
    tracked = len(gc.get_objects())
    settled = settle_after_startup()
    # startup's objects are frozen: a full collection now walks a few, not all of them
    assert gc.get_freeze_count() > tracked * 0.9
    assert len(gc.get_objects()) < tracked // 10
    assert gc.get_threshold()[0] == YOUNG_THRESHOLD > 700
    assert settled in gc.callbacks and settle_after_startup() is settled
    assert built_at_startup[-1] == [999]


@pytest.mark.parametrize("generation", [1, 2])
def test_what_survives_a_middle_or_full_collection_is_frozen(
    restored_gc: list[Settling], generation: int
) -> None:
    settled = settling(restored_gc)
    frozen = gc.get_freeze_count()
    held = [[i] for i in range(20_000)]  # a service's matches and streams, after startup
    assert len(gc.get_objects()) > 20_000
    gc.collect(generation)
    # the next collection walks what came since, not these
    assert gc.get_freeze_count() >= frozen + 20_000
    assert len(gc.get_objects()) < 1_000
    assert pauses(settled)[str(generation)] == 1
    assert held[-1] == [19_999]


def test_what_survives_a_young_collection_is_not_frozen(restored_gc: list[Settling]) -> None:
    settling(restored_gc)
    frozen = gc.get_freeze_count()
    held = [[i] for i in range(20_000)]
    gc.collect(0)  # most of what a young collection sees dies young: it is not frozen
    assert gc.get_freeze_count() == frozen
    assert len(gc.get_objects()) > 20_000 and held


def test_a_cycle_frozen_then_dropped_is_freed_once_resident_memory_doubled(
    restored_gc: list[Settling],
) -> None:
    memory = [100 << 20]  # the process's resident bytes, as /proc would give them
    settled = settling(restored_gc, resident=lambda: memory[0])
    cycles = [Node() for _ in range(100)]
    alive = [weakref.ref(node) for node in cycles]
    gc.collect()  # they survive it: frozen
    del cycles
    gc.collect()
    assert all(ref() is not None for ref in alive), "a frozen cycle is not walked"
    memory[0] = 190 << 20  # grown, not doubled
    gc.collect(1)
    assert gc.get_freeze_count() > 0 and all(ref() is not None for ref in alive)
    memory[0] = 201 << 20  # doubled since startup's freeze
    gc.collect(1)  # frozen again, past the growth: unfrozen for the next full collection
    assert gc.get_freeze_count() == 0
    gc.collect(1)  # a middle collection meanwhile freezes nothing
    assert gc.get_freeze_count() == 0
    gc.collect()  # walks everything
    assert all(ref() is None for ref in alive)
    assert gc.get_freeze_count() > 0
    counted = pauses(settled)
    assert counted["all"] == 1 and counted["2"] == 2 and counted["1"] == 3
    assert freed(settled)["all"] >= 100  # the cycles, counted
    # the next doubling is measured from the memory that collection left
    gc.collect(1)
    gc.collect()
    assert gc.get_freeze_count() > 0 and pauses(settled)["all"] == 1


def test_the_resident_size_is_read_from_the_system() -> None:
    before = resident_bytes()
    grown = bytearray(64 << 20)
    grown[::4096] = b"x" * len(grown[::4096])  # touched: resident
    assert resident_bytes() >= before + (60 << 20)


def test_every_pause_is_counted_by_generation(restored_gc: list[Settling]) -> None:
    settled = settling(restored_gc)
    gc.collect(0)
    gc.collect(1)
    gc.collect(1)
    counted = pauses(settled)
    assert counted["0"] == 1 and counted["1"] == 2 and counted["all"] == 0
    text = generate_latest(_registry(settled)).decode()
    assert 'tabletop_gc_pause_seconds_bucket{generation="1",le="+Inf"} 2.0' in text
    assert "# TYPE tabletop_gc_pause_seconds histogram" in text


def _registry(settled: Settling) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(settled)
    return registry


def test_the_generation_due_is_the_oldest_whose_count_came_due(
    restored_gc: list[Settling],
) -> None:
    gc.set_threshold(YOUNG_THRESHOLD, 3, 2)
    gc.collect()
    assert due_generation() == 0
    for _ in range(3):
        gc.collect(0)
    assert due_generation() == 1
    gc.collect(1)
    gc.collect(0)
    gc.collect(1)
    assert due_generation() == 2


async def test_young_collections_come_on_a_clock_whatever_the_net_allocations(
    restored_gc: list[Settling],
) -> None:
    settled = settling(restored_gc)
    # a state replaced: as many objects made as freed, which never starts a collection
    state = [[i] for i in range(50_000)]
    assert len(gc.get_objects(0)) >= 50_000
    clock = asyncio.create_task(collect_young_forever(every_s=0.01))
    await asyncio.sleep(0.1)
    clock.cancel()
    assert len(gc.get_objects(0)) < 1_000
    assert pauses(settled)["0"] >= 2
    assert state[-1] == [49_999]


async def test_the_clock_adds_no_collection_when_others_come_sooner(
    restored_gc: list[Settling],
) -> None:
    settled = settling(restored_gc)
    clock = asyncio.create_task(collect_young_forever(every_s=0.2))
    for _ in range(25):  # a busy service: its allocations start one every 20 ms
        await asyncio.sleep(0.02)
        gc.collect(0)
    clock.cancel()
    assert pauses(settled)["0"] == 25
