"""QtEngineWorker with the session engine: stale-result guard, catalogue cache, graph requests."""

from __future__ import annotations


import pytest

pytest.importorskip("pytestqt")

from app.engine_worker import QtEngineWorker, load_cached_catalogue  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402


@pytest.fixture
def worker(engine, qapp, tmp_path):
    w = QtEngineWorker(cache_dir=str(tmp_path), client_factory=lambda: engine, close_client=False)
    yield w
    w.shutdown()


def _doc() -> PipelineDocument:
    return PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")])


def test_catalogue_cached_and_stale_runs_dropped(worker, qtbot, tmp_path):
    with qtbot.waitSignal(worker.catalogue_ready, timeout=120_000) as got:
        worker.start()
    assert any(p["id"] == "relax.FuseTIR" for p in got.args[0]["passes"])
    key, cached = load_cached_catalogue(str(tmp_path))
    assert key and cached == got.args[0]  # next start shows it at once
    delivered = []
    worker.run_finished.connect(lambda rev, res: delivered.append((rev, res)))
    steps = []
    worker.step_finished.connect(lambda rev, res: steps.append(rev))
    worker.request_run(_doc(), revision=5)
    worker.set_revision(6)  # an edit happened: results of revision 5 must not arrive
    worker.request_run(_doc(), revision=6)
    qtbot.waitUntil(lambda: any(r == 6 for r, _ in delivered), timeout=120_000)
    assert [r for r, _ in delivered] == [6]
    assert set(steps) <= {6}
    result = delivered[0][1]
    assert result.ok and len(result.steps) == 2


def test_graph_and_prim_func_requests(worker, qtbot):
    worker.start()
    with qtbot.waitSignal(worker.run_finished, timeout=120_000) as run:
        worker.request_run(_doc(), revision=1)
    key = run.args[1].steps[0].snapshot_key
    replies = []
    worker.reply_ready.connect(lambda kind, tag, value: replies.append((kind, tag, value)))
    worker.request_graph(key, None, tag="g")
    qtbot.waitUntil(lambda: any(k == "graph" for k, _, _ in replies), timeout=60_000)
    graph = next(v for k, _, v in replies if k == "graph")
    calls = [n for n in graph["graph"]["nodes"] if n.get("callee_kind") == "prim_func"]
    assert calls, "LegalizeOps output should call PrimFuncs"
    worker.request_prim_func(key, calls[0]["callee"], tag="p")
    qtbot.waitUntil(lambda: any(k == "prim_func" for k, _, _ in replies), timeout=60_000)
    text = next(v for k, _, v in replies if k == "prim_func")
    assert "prim_func" in text and calls[0]["callee"] in text
    failures = []
    worker.request_failed.connect(lambda kind, tag, msg: failures.append(msg))
    worker.request_graph("no-such-key", None, tag="bad")
    qtbot.waitUntil(lambda: bool(failures), timeout=60_000)
    assert "no-such-key" in failures[0] and "not in the engine's cache" in failures[0], failures[0]
