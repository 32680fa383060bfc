"""Session-wide MetaSchedule fixtures (a pytest plugin loaded by ``tests/conftest.py``).

Real tuning costs tens of seconds on the 2-core machine, so the suite tunes the bundled
``tuning_mlp_cpu.json`` pipeline **once**, through the real engine (``tuned_mlp``), and every test
that only needs "a work directory with a tuned database" gets its own copy of it
(:func:`copy_tuned_work_dir`). ``tests/test_tuning_engine.py`` checks that run end to end (progress
events, tuning and apply reports, numerics); the other tuning tests check reuse, stop, retune and the
passes against copies of its database.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any

import pytest

# The per-user tuning database is off for the test session (set before any engine starts, so engine
# processes inherit it): tests must not read or fill the user's database, and a workload tuned by one test
# must not turn another test's tuning into a look-up. Tests of the database point it at their own folder.
os.environ.setdefault("RPS_TUNING_DB_DIR", "off")
# The list of the user's own tuning databases (tuning records need no consent there) lives in the config folder:
# a session folder of its own, so tests never read or write the user's.
os.environ.setdefault("RPS_CONFIG_DIR", tempfile.mkdtemp(prefix="rps-test-config-"))

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUNING_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "tuning_mlp_cpu.json")
#: Index of the MetaScheduleTuneTIR step in ``tuning_mlp_cpu.json`` (the apply step follows it).
TUNE_STEP = 4
#: The per-task trial budget of the session tuning (the pipeline's ``max_trials_global``). A later
#: tuning with a budget up to this one reuses the database; a larger one tunes again.
TUNED_BUDGET = 4
#: Search options of the suite's real tunings whose subject is neither the cost model nor parallel building:
#: MetaSchedule's default ``xgb`` model trains for seconds after every round even on one measured sample (~3 s per
#: PrimFunc on the 2-core machine, half of a small tuning's time), and with a handful of trials its guesses are no
#: better than random ones; each builder worker is a process that imports TVM (~2 s of CPU) for a few builds. The
#: defaults (``xgb``, a builder worker per core) stay covered end to end by the engine run of
#: ``test_gui_tuning.py::test_tuning_progress_and_stop``; an exported script hands ``cost_model`` to TVM's own
#: ``tune_tir`` (``test_export.py::test_tuning_pipeline_script_measures_on_cpu`` runs that with ``random``,
#: ``test_tuning_script.py::test_exported_and_engine_tuning_use_the_same_options`` checks the script's options
#: are the engine's, ``xgb`` included).
QUICK_SEARCH = {"cost_model": "random", "builder_workers": 1}


@dataclass
class TunedRun:
    """The session's one real tuning run: the document, its result, its events and its work dir."""

    doc: Any
    result: Any
    events: list[tuple[str, dict]] = field(default_factory=list)
    work_dir: str = ""


def tuning_document(path: str | None = None, **tune_params: Any) -> Any:
    """``tuning_mlp_cpu.json`` (saved as ``path`` when given, so the default work dir is next to it)
    with other parameters for its tuning step."""
    from pipeline_model.fileformat import load_pipeline, save_pipeline

    doc = load_pipeline(TUNING_PIPELINE)
    doc.steps[TUNE_STEP].params.update(tune_params)
    if path is not None:
        save_pipeline(doc, path)
        doc = load_pipeline(path)
    return doc


def copy_tuned_work_dir(tuned: TunedRun, dest: str) -> str:
    """A private copy of the session's tuned work dir at ``dest`` (tests may add to or wipe it)."""
    shutil.copytree(tuned.work_dir, dest)
    return dest


def _tune_mlp(engine, work_dir: str) -> TunedRun:
    doc = tuning_document(**QUICK_SEARCH)
    doc.build = {"work_dir": work_dir}
    assert doc.steps[TUNE_STEP].params["max_trials_global"] == TUNED_BUDGET
    events: list[tuple[str, dict]] = []
    result = engine.run(doc, on_event=lambda ev, data: events.append((ev, data)))
    assert result.ok, (result.error, [s.error for s in result.steps])
    return TunedRun(doc=doc, result=result, events=events, work_dir=work_dir)


@pytest.fixture(scope="session")
def tuned_mlp(engine, tmp_path_factory, worker_id) -> TunedRun:
    """Runs ``tuning_mlp_cpu.json`` (4 trials, :data:`QUICK_SEARCH`) once through the session engine, work dir in a session
    temporary folder. Read-only for tests: copy the work dir with :func:`copy_tuned_work_dir`.

    Under pytest-xdist the run is made once for all workers (~30 s each on the 2-core machine): the first
    worker that needs it tunes under a lock in the run's shared temporary folder and writes the result there;
    the others wait for the lock and read it."""
    import fcntl
    import json

    from pipeline_model.engine.results import RunResult

    if worker_id == "master":
        return _tune_mlp(engine, str(tmp_path_factory.mktemp("tuned_mlp") / "wd"))
    shared = tmp_path_factory.getbasetemp().parent / "tuned_mlp_shared"  # this run's, shared by its workers
    shared.mkdir(exist_ok=True)
    saved = shared / "run.json"
    with open(shared / "lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not saved.exists():
            run = _tune_mlp(engine, str(shared / "wd"))
            saved.write_text(json.dumps({"result": run.result.to_json(), "events": run.events}))
            return run
    data = json.loads(saved.read_text())
    doc = tuning_document(**QUICK_SEARCH)
    doc.build = {"work_dir": str(shared / "wd")}
    return TunedRun(doc=doc, result=RunResult.from_json(data["result"]),
                    events=[(ev, payload) for ev, payload in data["events"]], work_dir=str(shared / "wd"))


#: A second model sharing the seed MLP's first layer (same shapes: the same ``fused_matmul_add_relu``
#: workload) with another head (256 -> 5, sigmoid): the user tuning database's "next model".
OTHER_MODEL_SOURCE = """
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Other:
    @R.function
    def main(x: R.Tensor((1, 784), dtype="float32"), w1: R.Tensor((256, 784), dtype="float32"),
             b1: R.Tensor((256,), dtype="float32"), w2: R.Tensor((256, 5), dtype="float32")) -> R.Tensor((1, 5), dtype="float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            t = R.permute_dims(w1, axes=None)
            m = R.matmul(x, t, out_dtype=None)
            a = R.add(m, b1)
            r = R.nn.relu(a)
            o = R.matmul(r, w2, out_dtype=None)
            s = R.sigmoid(o)
            R.output(s)
        return s
"""


def lowered(mod: Any) -> Any:
    """``mod`` after LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR (the tuning steps' input)."""
    import tvm
    from tvm import relax

    seq = tvm.transform.Sequential([relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(),
                                    relax.transform.FuseOps(), relax.transform.FuseTIR()])
    with tvm.transform.PassContext(opt_level=3):
        return seq(mod)


def other_model(folder: str) -> Any:
    """:data:`OTHER_MODEL_SOURCE` loaded as a model file written into ``folder`` (a Relax module)."""
    from pipeline_model.importers import load_tvm

    path = os.path.join(folder, "other_model.py")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(OTHER_MODEL_SOURCE)
    return load_tvm.load_model(path, None).mod
