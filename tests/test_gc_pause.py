"""Tests of the process-wide, nestable pause of the cyclic garbage collector (pipeline_model.gc_pause)."""

from __future__ import annotations

import gc
import threading

from pipeline_model import gc_pause


def test_nested_and_threaded_pauses_restore_the_collector_once_the_last_one_ends():
    assert gc.isenabled() and not gc_pause.is_paused()
    entered, release = threading.Event(), threading.Event()

    def worker() -> None:
        with gc_pause.paused():
            entered.set()
            release.wait(10)

    thread = threading.Thread(target=worker)
    with gc_pause.paused():
        assert not gc.isenabled() and gc_pause.is_paused()
        thread.start()
        assert entered.wait(10)
        with gc_pause.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block ended, two users are left
    assert not gc.isenabled()  # the worker still holds the pause (a plain disable/enable pair would not)
    release.set()
    thread.join(10)
    assert gc.isenabled() and not gc_pause.is_paused()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    try:
        with gc_pause.paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_freeze_moves_what_is_alive_to_the_permanent_generation_before_resuming():
    gc.unfreeze()
    try:
        kept = [[i] for i in range(1000)]
        with gc_pause.paused(freeze=True):
            more = [[i] for i in range(1000)]
        assert gc.get_freeze_count() >= 2000
        assert gc.isenabled()
        del kept, more
    finally:
        gc.unfreeze()


def test_an_exception_inside_still_ends_the_pause():
    try:
        with gc_pause.paused():
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert gc.isenabled() and not gc_pause.is_paused()
