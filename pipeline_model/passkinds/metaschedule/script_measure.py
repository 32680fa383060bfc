"""MetaSchedule's builder and runner for the step's options — the code exported scripts contain and the engine
calls (TVM-free at import; copied verbatim like :mod:`.script`'s helpers, see :data:`MEASURE_HELPERS`).

* :func:`meta_schedule_f_build`: TVM's ``default_build`` without its ``import tvm.s_tir.tensor_intrin`` (about
  40 s in every fresh worker, so every stock candidate hits the builder's timeout);
* :func:`pooled_builder`: the candidates are built by one pool of worker processes kept for the whole tuning
  step. TVM's ``LocalBuilder`` starts a fresh pool for every round (and one more for its sanity check): ~3 s of
  interpreter start-up and ``import tvm`` per round of 16 candidates, which on a 2-core machine was a third of
  the tuning time; the engine also starts tuning once per PrimFunc. A worker is replaced after
  ``worker_uses`` builds (why TVM restarts its pool: a worker's memory grows with use), after a timeout and
  after a crash. ``should_stop`` (the engine's stop flag and time budget) is polled every 0.2 s while building;
* :func:`search_strategy`: the evolutionary search with the step's ``search_population``;
* :func:`tuning_builder` / :func:`tuning_runner` (``runner = rpc``: :mod:`.script_farm`'s device farm) from the step's options (the complete dict of
  :meth:`pipeline_model.passkinds.metaschedule.config.TuningConfig.to_json`), :func:`close_tuning_tools` ends
  their worker processes; an exported script makes them once (:func:`script_tuning_tools`), the engine once per
  step (``TuningSession.tools``).
"""

from pipeline_model.passkinds.metaschedule.script_farm import FARM_HELPERS, farm_runner  # scripts define them too
from pipeline_model.scriptlib.threads import usable_cores  # the core rule; scripts define it in their header


class TuningStopped(Exception):
    """Raised inside MetaSchedule to end tuning early (a stop, the time budget's end)."""


def tuning_cores():
    """The ``"num-cores"`` MetaSchedule tunes for and the default number of builder workers: the CPUs this
    process may use — the app's one core-count rule (``usable_cores``, which also sizes TVM's runtime thread
    pool, so tuned code is measured and run on the same number of threads)."""
    return usable_cores()


def meta_schedule_f_build():
    """The candidate builder function for MetaSchedule's builder: the stock ``default_build`` without its
    ``import tvm.s_tir.tensor_intrin`` (~40 s in every fresh builder worker, so every stock candidate hits the
    30 s timeout). A closure, so it is shipped to the workers by value."""

    def rps_build(mod, target, _params):  # runs in a builder worker process
        from tvm.driver import build as tvm_build
        from tvm.s_tir.transform import RemoveWeightLayoutRewriteBlock

        mod = RemoveWeightLayoutRewriteBlock(skip_tensor_rewrite=True)(mod)
        return tvm_build(mod, target=target)

    return rps_build


def pooled_builder(workers, timeout, should_stop=None, worker_uses=64):
    """A MetaSchedule builder (a ``PyBuilder``) building with :func:`meta_schedule_f_build` in ``workers``
    processes of one pool kept across rounds, ``timeout`` seconds per candidate; each worker is replaced after
    ``worker_uses`` builds, a timeout or a crash. At most ``workers`` candidates are in flight, and
    ``should_stop()`` is polled before a round and every 0.2 s in it: when it turns true the workers are killed
    and :class:`TuningStopped` ends the round. ``warm(count)`` starts workers without waiting (the engine starts
    one while it makes the runner: the start-ups overlap); ``close()`` ends the pool (a later round starts a new
    one)."""
    import concurrent.futures
    from collections import deque

    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.builder import BuilderResult, PyBuilder
    from tvm.s_tir.meta_schedule.builder.local_builder import _serialize_params, _worker_func
    from tvm.support.popen_pool import PopenPoolExecutor

    @derived_object
    class PooledLocalBuilder(PyBuilder):
        def __init__(self):
            super().__init__()
            self.max_workers, self.timeout_sec = max(1, int(workers)), float(timeout)
            self.should_stop = should_stop or (lambda: False)
            self.f_build = meta_schedule_f_build()
            self.pool = None

        def close(self):
            if self.pool is not None:
                self.pool.shutdown(wait=False)
                self.pool = None

        def warm(self, count=None):
            """Start ``count`` workers (all when None) now, without waiting for them (they import TVM while the
            caller goes on); the pool starts the others when more candidates are in flight at once."""
            if self.pool is None:
                self.pool = PopenPoolExecutor(max_workers=self.max_workers, timeout=self.timeout_sec,
                                              maximum_process_uses=int(worker_uses))
                for _ in range(self.max_workers if count is None else min(int(count), self.max_workers)):
                    self.pool.submit(int)

        def build(self, build_inputs):
            if self.should_stop():
                raise TuningStopped("stopped before building")
            self.warm()
            results = [None] * len(build_inputs)
            pending, running = deque(range(len(build_inputs))), {}
            while pending or running:
                while pending and len(running) < self.max_workers:
                    i = pending.popleft()
                    inp = build_inputs[i]
                    running[self.pool.submit(_worker_func, self.f_build, None, inp.mod, inp.target,
                                             _serialize_params(inp.params))] = i
                done, _ = concurrent.futures.wait(list(running), timeout=0.2,
                                                  return_when=concurrent.futures.FIRST_COMPLETED)
                for fut in done:
                    i, exc = running.pop(fut), fut.exception()
                    if exc is None:
                        results[i] = BuilderResult(fut.result(), None)
                    elif isinstance(exc, TimeoutError):
                        results[i] = BuilderResult(None, f"LocalBuilder: Timeout, killed after {self.timeout_sec} seconds")
                    else:
                        results[i] = BuilderResult(None, "LocalBuilder: An exception occurred\n" + str(exc))
                if self.should_stop():
                    self.close()  # kills the workers still building
                    raise TuningStopped("stopped while building")
            return results

    return PooledLocalBuilder()


def tuning_builder(options, should_stop=None):
    """MetaSchedule's builder for the step's ``options``: :func:`pooled_builder` with ``builder_workers``
    processes (0: :func:`tuning_cores`, every usable core) and ``builder_timeout_s`` per candidate;
    ``should_stop``: the engine's stop flag (None in scripts)."""
    workers = int(options["builder_workers"]) or tuning_cores()
    return pooled_builder(workers, float(options["builder_timeout_s"]), should_stop)


def tuning_runner(options, should_stop=None, report=None):
    """MetaSchedule's runner for the step's ``options``: a ``LocalRunner`` (``runner_timeout_s``), or for
    ``runner = "rpc"`` the device farm of :func:`farm_runner`
    (every free device of key ``rpc_key`` on the tracker ``rpc_host``:``rpc_port`` at once; ``should_stop`` and
    ``report`` go to it); both measure with ``EvaluatorConfig(number, repeat, min_repeat_ms)``."""
    from tvm.s_tir import meta_schedule as ms

    if options["runner"] == "rpc":
        return farm_runner(options, should_stop, report)
    evaluator = ms.runner.EvaluatorConfig(
        number=int(options["number"]), repeat=int(options["repeat"]),
        min_repeat_ms=int(options["min_repeat_ms"]), enable_cpu_cache_flush=False,
    )
    return quick_local_runner(float(options["runner_timeout_s"]), evaluator)


def quick_local_runner(timeout, evaluator):
    """TVM's ``LocalRunner`` (one measuring worker process, ``timeout`` seconds per candidate, ``evaluator``)
    whose start does not wait for its worker: TVM's ``__init__`` sends a sanity check that, with the stock
    measuring functions, only proves the worker started, and waits for it (the worker's interpreter start and
    ``import tvm``, ~18 s beside the two build workers on a busy 2-core machine). Here the worker is started
    and the caller goes on; the first candidate's measurement waits for it instead (a worker that cannot
    start fails that candidate with its message, as TVM's runner does)."""
    from tvm.ir.utils import derived_object
    from tvm.s_tir.meta_schedule.runner import LocalRunner

    @derived_object
    class QuickLocalRunner(LocalRunner._cls):
        def _sanity_check(self):
            self.pool.submit(int)  # starts the worker process without waiting for it

    return QuickLocalRunner(timeout_sec=timeout, evaluator_config=evaluator)


def search_strategy(population):
    """MetaSchedule's search strategy for a step's ``search_population``: TVM's own ``"evolutionary"`` (exactly
    as plain TVM) at its default of 512, else an ``EvolutionarySearch`` of that population (its random
    initial samples capped by it; every other setting TVM's default)."""
    from tvm.s_tir import meta_schedule as ms

    population = int(population)
    if population == 512:
        return "evolutionary"
    return ms.search_strategy.EvolutionarySearch(population_size=population,
                                                 init_min_unmeasured=min(50, population))


def close_tuning_tools(builder, runner):
    """End the worker processes of a builder of :func:`tuning_builder` and a runner of :func:`tuning_runner`
    (either may be None)."""
    for tool in (builder, runner):
        if tool is not None and hasattr(tool, "close"):
            tool.close()  # the builder's pool, the RPC farm's measuring workers
    pool = getattr(runner, "pool", None) if not hasattr(runner, "close") else None  # LocalRunner's one worker
    if pool is not None:
        pool.shutdown(wait=False)


def script_tuning_tools(options):
    """``(builder, runner)`` for ``options``, made once per process and options (an exported script's tuning
    steps and seeds share them: each would otherwise start its own worker processes)."""
    import json

    made = script_tuning_tools.__dict__.setdefault("made", {})
    key = json.dumps(options, sort_keys=True, default=str)
    if key not in made:
        made[key] = (tuning_builder(options), tuning_runner(options, report=print))
    return made[key]


#: The helpers above (after :mod:`.script_farm`'s), in the order an exported script defines them (before
#: :mod:`.script`'s).
MEASURE_HELPERS = (*FARM_HELPERS, TuningStopped, tuning_cores, meta_schedule_f_build, pooled_builder, tuning_builder, quick_local_runner,
                   tuning_runner, search_strategy, close_tuning_tools, script_tuning_tools)
