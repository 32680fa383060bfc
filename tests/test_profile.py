"""Profile of a built module (VM instrumentation): per-callee table, node mapping, kept per snapshot
key, CLI ``run --build --profile --top N``, profile comparison and the profile table widget."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from pipeline_model import build_api
from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")


#: The MLP's first PrimFunc after cpu_build: its 784 x 256 weight read through a packed copy (app.CPUMatmul), the
#: packing split off and lifted.
FIRST = "fused_matmul_add_relu_prepacked"


@pytest.fixture(scope="module")
def mlp_profile(engine):
    doc = load_pipeline(CPU_PIPELINE)
    return build_api.build_run(engine, doc, bench=None, check=None,
                               profile=build_api.ProfileSettings(warmup=1, repeat=3))


def test_profile_lists_every_prim_func_of_the_built_module(mlp_profile):
    prof = mlp_profile.profile
    assert prof is not None and prof.repeat == 3 and prof.key == mlp_profile.key and prof.key
    names = {e.name for e in prof.entries}
    assert {FIRST, "matmul1"} <= names  # the MLP's two PrimFuncs after cpu_build
    kinds = {e.name: e.kind for e in prof.entries}
    assert kinds[FIRST] == "prim_func"
    assert any(k == "builtin" for k in kinds.values())
    totals = [e.total_us for e in prof.entries]
    assert totals == sorted(totals, reverse=True)
    assert sum(e.share for e in prof.entries) == pytest.approx(1.0, rel=1e-6)
    for e in prof.entries:
        assert e.calls >= 1 and e.total_us > 0 and e.mean_us == pytest.approx(e.total_us / e.calls)
    # the 784x256 layer does more work than the 256x10 one
    assert prof.entries[0].name == FIRST or \
        next(e for e in prof.entries if e.name == FIRST).total_us > \
        next(e for e in prof.entries if e.name == "matmul1").total_us


def test_profile_maps_callees_to_graph_nodes(mlp_profile):
    prof = mlp_profile.profile
    assert prof.nodes.get(FIRST) and prof.nodes.get("matmul1")
    shares = prof.node_shares()
    node = prof.nodes[FIRST][0]
    entry = next(e for e in prof.entries if e.name == FIRST)
    assert shares[node] == pytest.approx(entry.share / len(prof.nodes[FIRST]))


def test_profiles_are_kept_per_snapshot_key(engine, mlp_profile):
    kept = build_api.stored_profile(engine, mlp_profile.key)
    assert kept is not None and [e.name for e in kept.entries] == [e.name for e in mlp_profile.profile.entries]
    assert build_api.stored_profile(engine, "no-such-key") is None
    # a second step: the input module (before any step), profiled by the profile command
    doc = load_pipeline(CPU_PIPELINE)
    before = build_api.profile(engine, doc, key=None, settings=build_api.ProfileSettings(repeat=2))
    assert before.key == mlp_profile.key  # same final module, same key
    rows = build_api.diff_profiles(kept, before)
    assert {r.name for r in rows} >= {FIRST, "matmul1"}
    assert mlp_profile.key in build_api.stored_profile_keys(engine)
    assert set(build_api.stored_profiles(engine, [mlp_profile.key, "no-such-key"])) == {mlp_profile.key}


def _prof(entries: list[tuple[str, float]], total: float, run: float = 0.0) -> build_api.Profile:
    return build_api.Profile(entries=[build_api.ProfileEntry(n, "prim_func", 1, t, t, t / total if total else 0.0)
                                      for n, t in entries], total_us=total, run_us=run or total, repeat=1, warmup=0)


def test_diff_profiles_orders_by_change():
    a = build_api.Profile(entries=[build_api.ProfileEntry("f", "prim_func", 1, 100.0, 100.0, 1.0)],
                          total_us=100.0, run_us=120.0, repeat=1, warmup=0)
    b = build_api.Profile(entries=[build_api.ProfileEntry("f", "prim_func", 1, 40.0, 40.0, 0.8),
                                   build_api.ProfileEntry("g", "builtin", 2, 10.0, 5.0, 0.2)],
                          total_us=50.0, run_us=60.0, repeat=1, warmup=0)
    rows = build_api.diff_profiles(a, b)
    assert rows[0] == build_api.ProfileDiffRow(
        name="f", kind="prim_func", status=build_api.IN_BOTH, before_us=100.0, after_us=40.0, delta_us=-60.0,
        ratio=pytest.approx(0.4), share_before=1.0, share_after=0.8, calls_before=1, calls_after=1)
    g = rows[1]
    assert (g.name, g.status, g.kind, g.before_us, g.after_us, g.delta_us) == ("g", build_api.ADDED, "builtin", None, 10.0, 10.0)
    assert g.ratio is None and g.share_before is None and g.share_after == 0.2 and g.calls_after == 2
    assert g.to_json()["status"] == "added"
    assert build_api.Profile.from_json(b.to_json()) == b


def test_diff_profiles_shows_renamed_callees_as_removed_and_added():
    # FuseOps/FuseTIR rename functions: no invented matches, one removed and one added.
    before = _prof([("matmul", 70.0), ("add", 20.0), ("relu", 10.0)], 100.0)
    after = _prof([("fused_matmul_add_relu", 55.0), ("relu", 10.0)], 65.0)
    rows = build_api.diff_profiles(before, after)
    assert [(r.name, r.status) for r in rows] == [
        ("matmul", build_api.REMOVED), ("fused_matmul_add_relu", build_api.ADDED), ("add", build_api.REMOVED),
        ("relu", build_api.IN_BOTH)]
    assert [r.delta_us for r in rows] == [-70.0, 55.0, -20.0, 0.0]
    assert rows[0].after_us is None and rows[0].ratio is None and rows[0].share_after is None
    assert rows[-1].ratio == 1.0
    # ties by |delta| are ordered by name; a zero "before" gives no ratio
    tie = build_api.diff_profiles(_prof([("b", 5.0), ("a", 5.0), ("z", 0.0)], 10.0),
                                  _prof([("b", 10.0), ("a", 0.0), ("z", 3.0)], 13.0))
    assert [r.name for r in tie] == ["a", "b", "z"] and tie[2].ratio is None


def test_compare_profiles_totals_and_counts():
    before = _prof([("matmul", 70.0), ("add", 30.0)], 100.0, run=120.0)
    after = _prof([("fused", 40.0), ("add", 10.0)], 50.0, run=55.0)
    cmp = build_api.compare_profiles(before, after)
    assert (cmp.total_before_us, cmp.total_after_us, cmp.run_before_us, cmp.run_after_us) == (100.0, 50.0, 120.0, 55.0)
    assert cmp.ratio == pytest.approx(0.5) and cmp.delta_us == -50.0
    assert (cmp.count(build_api.IN_BOTH), cmp.count(build_api.ADDED), cmp.count(build_api.REMOVED)) == (1, 1, 1)
    assert cmp.rows == build_api.diff_profiles(before, after) and cmp.before is before and cmp.after is after
    assert build_api.compare_profiles(_prof([], 0.0), after).ratio is None


def test_stored_profiles_ask_the_engine_for_its_keys():
    class Client:
        def __init__(self) -> None:
            self.calls: list = []

        def request(self, cmd: str, args: dict, on_event=None) -> dict:  # noqa: ANN001
            self.calls.append((cmd, dict(args)))
            if not args.get("key"):
                return {"keys": ["k1", "k2"]}
            return {"profile": _prof([("f", 1.0)], 1.0).to_json() if args["key"] == "k1" else None}

    client = Client()
    got = build_api.stored_profiles(client, ["k1", "k2", "k3", "k1"])
    assert list(got) == ["k1"] and got["k1"].entries[0].name == "f"
    # one list request, then only the kept keys asked for (k3 is not kept: never asked)
    assert client.calls == [("profile_get", {}), ("profile_get", {"key": "k1"}), ("profile_get", {"key": "k2"})]


def test_cli_run_profile_prints_top_entries():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "run", CPU_PIPELINE, "--profile",
                          "--top", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("profile:"))
    assert "top 2" in lines[start]
    table = lines[start + 2:start + 4]
    assert len(table) == 2 and all("%" in ln for ln in table)
    assert "fused_matmul_add_relu" in out.stdout


def test_profile_view_widget(qtbot):
    pytest.importorskip("PySide6")
    from widgets.profile_view import ProfileView

    prof = build_api.Profile(entries=[build_api.ProfileEntry("big", "prim_func", 1, 90.0, 90.0, 0.9),
                                      build_api.ProfileEntry("small", "builtin", 3, 10.0, 3.3, 0.1)],
                             total_us=100.0, run_us=110.0, repeat=3, warmup=1, key="k1")
    view = ProfileView()
    qtbot.addWidget(view)
    view.set_profile(prof)
    model = view.table_model()
    assert model.rowCount() == 2 and model.columnCount() == 5
    assert model.index(0, 0).data() == "big"
    view.sort_by(1, ascending=False)  # calls
    assert model.index(0, 0).data() == "small"
    selected = []
    view.callee_activated.connect(selected.append)
    view.activate_row(0)
    assert selected == ["small"]
    view.set_profile(None)
    assert model.rowCount() == 0


def test_profile_view_and_run_panel_say_how_an_rpc_profile_was_measured(qtbot):
    """A profile measured kernel by kernel on an RPC device fills the same table; its caption says how it was
    measured and which kernels were not timed; a failed one leaves a line in the Build & Run report."""
    pytest.importorskip("PySide6")
    from widgets.profile_view import ProfileView
    from widgets.run_panel import build_run_html

    prof = build_api.Profile(entries=[build_api.ProfileEntry("fused_matmul", "prim_func", 1, 9.0, 9.0, 0.75),
                                      build_api.ProfileEntry("matmul1", "prim_func", 2, 3.0, 1.5, 0.25)],
                             total_us=12.0, run_us=15.0, repeat=5, warmup=1, method=build_api.PROFILE_KERNELS,
                             skipped=["gather_nd"])
    view = ProfileView()
    qtbot.addWidget(view)
    view.set_profile(prof)
    assert view.table_model().rowCount() == 2 and view.table_model().index(0, 0).data() == "fused_matmul"
    caption = view._caption.text()
    assert caption.startswith("2 kernels, 12 µs per run, each timed by itself on the RPC device"), caption
    assert caption.endswith("not in the rows). Not timed on the device: gather_nd"), caption
    view.set_profile(build_api.Profile(entries=[], total_us=1.0, run_us=1.0, repeat=5, warmup=1))
    assert "instrumented run" in view._caption.text()
    html = build_run_html({"profile_note": "uploading the kernels to the RPC device failed: gone"})
    assert "timing the kernels on the RPC device failed" in html and "gone" in html
