"""server.net.collector.held: a collection that falls due inside a tick runs
after it, never inside, and the collector is left as it was found."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from typing import Any

import pytest

from server.net import collector


@pytest.fixture
def young_collections() -> Iterator[list[int]]:
    """The generations of the collections that run, with a young
    collection due every 1,000 net container allocations."""
    runs: list[int] = []

    def seen(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            runs.append(int(info["generation"]))

    thresholds, was_on = gc.get_threshold(), gc.isenabled()
    gc.enable()
    gc.set_threshold(1_000, 10, 10)
    gc.callbacks.append(seen)
    try:
        yield runs
    finally:
        gc.callbacks.remove(seen)
        gc.set_threshold(*thresholds)
        if not was_on:
            gc.disable()


def test_a_collection_due_in_the_tick_runs_after_it(young_collections: list[int]) -> None:
    with collector.held():
        assert not gc.isenabled()
        alive = [[i] for i in range(5_000)]  # five thresholds' worth, all alive
        assert young_collections == []
    assert gc.isenabled()
    del alive  # the tick's containers are freed before the collector runs
    extra = [[i] for i in range(2_000)]  # and later allocations let it run
    assert young_collections, "the collection due did not run after the block"
    del extra


def test_the_collector_is_left_as_it_was(young_collections: list[int]) -> None:
    gc.disable()
    with collector.held():
        pass
    assert not gc.isenabled()  # off before, off after
    gc.enable()
    with pytest.raises(RuntimeError), collector.held():
        raise RuntimeError("a tick that fails")
    assert gc.isenabled()
