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


@pytest.fixture(scope="module")
def mlp_profile(engine):
    doc = load_pipeline(CPU_PIPELINE)
    return build_api.build_run(engine, doc, bench=None, check=None,
                               profile=build_api.ProfileSettings(warmup=1, repeat=3))


def test_profile_lists_every_prim_func_of_the_built_module(mlp_profile):
    prof = mlp_profile.profile
    assert prof is not None and prof.repeat == 3 and prof.key == mlp_profile.key and prof.key
    names = {e.name for e in prof.entries}
    assert {"fused_NT_matmul_add_relu", "NT_matmul1"} <= names  # the MLP's two PrimFuncs after cpu_build
    kinds = {e.name: e.kind for e in prof.entries}
    assert kinds["fused_NT_matmul_add_relu"] == "prim_func"
    assert any(k == "builtin" for k in kinds.values())
    totals = [e.total_us for e in prof.entries]
    assert totals == sorted(totals, reverse=True)
    assert sum(e.share for e in prof.entries) == pytest.approx(1.0, rel=1e-6)
    for e in prof.entries:
        assert e.calls >= 1 and e.total_us > 0 and e.mean_us == pytest.approx(e.total_us / e.calls)
    # the 784x256 layer does more work than the 256x10 one
    assert prof.entries[0].name == "fused_NT_matmul_add_relu" or \
        next(e for e in prof.entries if e.name == "fused_NT_matmul_add_relu").total_us > \
        next(e for e in prof.entries if e.name == "NT_matmul1").total_us


def test_profile_maps_callees_to_graph_nodes(mlp_profile):
    prof = mlp_profile.profile
    assert prof.nodes.get("fused_NT_matmul_add_relu") and prof.nodes.get("NT_matmul1")
    shares = prof.node_shares()
    node = prof.nodes["fused_NT_matmul_add_relu"][0]
    entry = next(e for e in prof.entries if e.name == "fused_NT_matmul_add_relu")
    assert shares[node] == pytest.approx(entry.share / len(prof.nodes["fused_NT_matmul_add_relu"]))


def test_profiles_are_kept_per_snapshot_key(engine, mlp_profile):
    kept = build_api.stored_profile(engine, mlp_profile.key)
    assert kept is not None and [e.name for e in kept.entries] == [e.name for e in mlp_profile.profile.entries]
    assert build_api.stored_profile(engine, "no-such-key") is None
    # a second step: the input module (before any step), profiled by the profile command
    doc = load_pipeline(CPU_PIPELINE)
    before = build_api.profile(engine, doc, key=None, settings=build_api.ProfileSettings(repeat=2))
    assert before.key == mlp_profile.key  # same final module, same key
    rows = build_api.diff_profiles(kept, before)
    assert {r["name"] for r in rows} >= {"fused_NT_matmul_add_relu", "NT_matmul1"}


def test_diff_profiles_orders_by_change():
    a = build_api.Profile(entries=[build_api.ProfileEntry("f", "prim_func", 1, 100.0, 100.0, 1.0)],
                          total_us=100.0, run_us=120.0, repeat=1, warmup=0)
    b = build_api.Profile(entries=[build_api.ProfileEntry("f", "prim_func", 1, 40.0, 40.0, 0.8),
                                   build_api.ProfileEntry("g", "prim_func", 2, 10.0, 5.0, 0.2)],
                          total_us=50.0, run_us=60.0, repeat=1, warmup=0)
    rows = build_api.diff_profiles(a, b)
    assert rows[0] == {"name": "f", "before_us": 100.0, "after_us": 40.0, "delta_us": -60.0}
    assert rows[1]["name"] == "g" and rows[1]["before_us"] is None
    assert build_api.Profile.from_json(b.to_json()) == b


def test_cli_run_profile_prints_top_entries():
    out = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), "run", CPU_PIPELINE, "--profile",
                          "--top", "2"], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("profile:"))
    assert "top 2" in lines[start]
    table = lines[start + 2:start + 4]
    assert len(table) == 2 and all("%" in ln for ln in table)
    assert "fused_NT_matmul_add_relu" in out.stdout


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
