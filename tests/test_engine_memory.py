"""Engine memory stays flat (issue 9): the module cache is bounded by bytes, and a run releases its
pass instrument's records (the modules they hold) after every step."""

from __future__ import annotations

import gc
import weakref

from pipeline_model.engine.context import ModuleCache


class _Mod:
    def __init__(self, n: int) -> None:
        self.n = n

    def script(self) -> str:
        return "m" * 1000


def test_cache_is_bounded_by_bytes_and_by_entries():
    cache = ModuleCache(max_entries=None, max_bytes=10 * 1024 * 1024)
    for i in range(2000):  # many small modules: the byte bound alone holds
        cache.put(f"k{i}", _Mod(i), "x" * 100)
    assert cache.nbytes <= cache.max_bytes
    assert len(cache) == cache.max_bytes // (ModuleCache.MODULE_COST + 200)
    # The default also bounds the number of modules (issue 20: small modules charged far more than their real
    # memory never reached the byte bound, and the engine grew ~16 KiB per entry without a plateau).
    default = ModuleCache()
    assert default.max_entries == ModuleCache.MAX_ENTRIES
    for i in range(ModuleCache.MAX_ENTRIES + 300):
        default.put(f"k{i}", _Mod(i), "x" * 100)
    assert len(default) == ModuleCache.MAX_ENTRIES
    assert f"k{ModuleCache.MAX_ENTRIES + 299}" in default and "k0" not in default  # least recently used go
    big = ModuleCache(max_bytes=ModuleCache.MODULE_COST * 10)
    big.put("a", _Mod(0), "x" * ModuleCache.MODULE_COST)
    big.put("b", _Mod(1), "y" * ModuleCache.MODULE_COST * 2)
    big.put("c", _Mod(2), "z" * ModuleCache.MODULE_COST * 2)
    assert "a" not in big and "b" in big and "c" in big  # charged by script size: 3 + 5 + 5 > 10


def test_run_releases_the_modules_its_instrument_recorded():
    from pipeline_model.document import PipelineDocument, Step
    from pipeline_model.engine import context, runner
    from pipeline_model.engine.client import EngineClient

    class _Out:
        def write(self, message) -> None:
            pass

    ctx = context.WorkerContext(_Out())
    doc = PipelineDocument(model="builtin:mlp", steps=[Step("pipeline.zero")])
    ctx.request_id = 1
    reply = runner.run_pipeline(EngineClient.run_args(doc), ctx)
    assert reply["failed_index"] is None and len(reply["steps"][0]["nested"]) > 1
    shared = runner._SHARED_INSTRUMENT
    assert shared is not None and shared.records == [] and shared.stack == []
    # A second run reuses the same instrument (no new FFI object per step, which was never freed).
    ctx.cache.clear()
    ref = weakref.ref(ctx.cache.put("probe", _Mod(0)))
    runner.run_pipeline(EngineClient.run_args(doc), ctx)
    assert runner._SHARED_INSTRUMENT is shared and shared.records == []
    ctx.cache.clear()
    gc.collect()
    assert ref() is None


def test_client_text_cache_is_bounded_by_entries_and_bytes():
    from pipeline_model.engine.run_call import ScriptCache

    cache = ScriptCache()
    for i in range(ScriptCache.MAX_ENTRIES + 100):
        cache.fill(f"k{i}", "t" * 10)
    assert len(cache) == ScriptCache.MAX_ENTRIES
    assert cache.fill("k0", None) is None and cache.fill(f"k{ScriptCache.MAX_ENTRIES + 99}", None) == "t" * 10
    small = ScriptCache(max_bytes=100, max_entries=1000)
    for i in range(50):
        small.fill(f"k{i}", "x" * 30)
    assert len(small) == 3  # 3 x 30 <= 100 < 4 x 30
