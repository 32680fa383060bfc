"""QtEngineWorker: catalogue cache and stale-result guard on the TVM-free fake engine; graph and
PrimFunc requests end to end with the session engine (real TVM output)."""

from __future__ import annotations


import pytest

pytest.importorskip("pytestqt")

from app.engine_worker import QtEngineWorker, load_cached_catalogue  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402


@pytest.fixture
def worker(engine, qapp, tmp_path):
    """A worker on the real session engine."""
    w = QtEngineWorker(cache_dir=str(tmp_path), client_factory=lambda: engine, close_client=False)
    yield w
    w.shutdown()


@pytest.fixture
def fake_worker(qapp, tmp_path):
    """A worker on the fake engine (``tests/fake_engine.py``)."""
    from tests.fake_engine import FakeEngineClient

    client = FakeEngineClient()
    w = QtEngineWorker(cache_dir=str(tmp_path), client_factory=lambda: client, close_client=False)
    yield w
    w.shutdown()


def _doc() -> PipelineDocument:
    return PipelineDocument(model="builtin:mlp", steps=[Step("relax.LegalizeOps"), Step("relax.FoldConstant")])


def test_catalogue_cached_and_stale_runs_dropped(fake_worker, qtbot, tmp_path):
    worker = fake_worker
    with qtbot.waitSignal(worker.catalogue_ready, timeout=120_000) as got:
        worker.start()
    assert any(p["id"] == "relax.FuseTIR" for p in got.args[0]["passes"])
    key, cached = load_cached_catalogue(str(tmp_path))
    assert key and cached == got.args[0]  # next start shows it at once
    delivered = []
    steps = []
    old = worker.submit_run(_doc(), revision=5)
    old.finished.connect(lambda res: delivered.append((5, res)))
    old.step_finished.connect(lambda res: steps.append(5))
    worker.set_revision(6)  # an edit happened: results of revision 5 must not arrive
    new = worker.submit_run(_doc(), revision=6)
    new.finished.connect(lambda res: delivered.append((6, res)))
    new.step_finished.connect(lambda res: steps.append(6))
    qtbot.waitUntil(lambda: any(r == 6 for r, _ in delivered), timeout=120_000)
    assert [r for r, _ in delivered] == [6]
    assert set(steps) == {6}
    result = delivered[0][1]
    assert result.ok and len(result.steps) == 2


@pytest.mark.e2e
def test_graph_and_prim_func_requests(worker, qtbot):
    worker.start()
    run = worker.submit_run(_doc(), revision=1)
    with qtbot.waitSignal(run.finished, timeout=120_000) as got:
        pass
    key = got.args[0].steps[0].snapshot_key
    graph_request = worker.submit_graph(key, None)
    with qtbot.waitSignal(graph_request.finished, timeout=60_000) as reply:
        pass
    graph = reply.args[0]
    calls = [n for n in graph["graph"]["nodes"] if n.get("callee_kind") == "prim_func"]
    assert calls, "LegalizeOps output should call PrimFuncs"
    prim = worker.submit_prim_func(key, calls[0]["callee"])
    with qtbot.waitSignal(prim.finished, timeout=60_000) as reply:
        pass
    text = reply.args[0]
    assert "prim_func" in text and calls[0]["callee"] in text
    bad = worker.submit_graph("no-such-key", None)
    with qtbot.waitSignal(bad.failed, timeout=60_000) as failure:
        pass
    assert "no-such-key" in failure.args[0] and "not in the engine's cache" in failure.args[0], failure.args[0]
