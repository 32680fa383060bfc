"""Numbers without noise (issue 18): an unchanged build is "same build", a difference inside the spread is
"no significant difference", in the engine's replies, the Build & Run panel, the compare view and the
profile comparison."""

from __future__ import annotations

import os

from pipeline_model import build_api
from pipeline_model.build_api import IN_BOTH, Profile, ProfileEntry
from pipeline_model.document import PipelineDocument
from pipeline_model.fileformat import load_pipeline
from pipeline_model.latency_stats import NO_DIFFERENCE, SAME_BUILD, SLOWER

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_PIPELINE = os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")
WALKTHROUGH = os.path.join(ROOT, "resources", "pipelines", "fusion_walkthrough.json")


def test_baseline_against_an_empty_pipeline_is_the_same_build(engine):
    # The "Speed-up 1.42×": the pipeline changes nothing, so both sides compile to one module.
    doc = PipelineDocument(model="builtin:mlp", target={"kind": "llvm"}, steps=[])
    result = build_api.compare(engine, build_api.module_request(doc, baseline=True), build_api.module_request(doc),
                               bench=build_api.BenchSettings(number=2, repeat=6))
    assert result.a.fingerprint and result.a.fingerprint == result.b.fingerprint
    assert result.comparison is not None and result.comparison.verdict == SAME_BUILD
    assert not result.comparison.significant and result.comparison.paired
    assert len(result.a.latency.runs_us) == len(result.b.latency.runs_us) == 6
    assert result.a.latency.interleaved and result.a.latency.q1_us is not None


def test_a_real_difference_is_significant(engine):
    # The walkthrough does not fold the transposes (several times slower). On a machine loaded past its cores
    # a measurement may be too noisy to tell (then it must say so, never "faster"): up to three tries.
    fast, slow = load_pipeline(CPU_PIPELINE), load_pipeline(WALKTHROUGH)
    slow.model = fast.model
    verdicts = []
    for _ in range(3):
        result = build_api.compare(engine, build_api.module_request(fast), build_api.module_request(slow),
                                   bench=build_api.BenchSettings(number=3, repeat=12), check=None)
        assert result.a.fingerprint != result.b.fingerprint
        assert result.comparison is not None
        verdicts.append(result.comparison.verdict)
        assert result.comparison.verdict in (SLOWER, NO_DIFFERENCE), result.comparison
        if result.comparison.verdict == SLOWER:
            assert result.comparison.low > 1.03
            break
    assert verdicts[-1] == SLOWER, verdicts


def _reply(verdict: str, ratio: float = 1.0) -> dict:
    runs = [100.0, 101.0, 99.0, 100.5, 100.2]
    lat = {"median_us": 100.0, "min_us": 99.0, "max_us": 101.0, "q1_us": 99.5, "q3_us": 100.5, "runs_us": runs}
    cmp = {"ratio": ratio, "low": ratio * 0.9, "high": ratio * 1.1, "level": 0.95, "verdict": verdict,
           "significant": verdict not in (NO_DIFFERENCE, SAME_BUILD), "noise_pct": 10.0, "min_effect": 0.03,
           "n_a": 5, "n_b": 5}
    return {"a": {"label": "baseline (model as loaded)", "latency": lat, "build_ms": 10.0},
            "b": {"label": "pipeline", "latency": {**lat, "median_us": 100.0 / ratio}, "build_ms": 10.0},
            "speedup": 1.0 / ratio if verdict != SAME_BUILD else 1.42, "comparison": cmp}


def test_run_panel_never_headlines_a_speedup_for_the_same_build_or_noise(qtbot):
    from widgets.run_panel import RunPanel, compare_html

    panel = RunPanel()
    qtbot.addWidget(panel)
    panel.show_compare_result(_reply(SAME_BUILD))
    assert panel.chart.caption.startswith("same build") and "1.42" not in panel.chart.caption
    assert "faster" not in panel.status.text() and "speed-up" not in panel.status.text().lower()
    assert all(bar.highlight is False for bar in panel.chart.bars)
    noise = _reply(NO_DIFFERENCE, 0.95)
    panel.show_compare_result(noise)
    assert panel.chart.caption == "no significant difference (±10 %)"
    assert "no significant difference (±10 %)" in compare_html(noise)
    panel.show_compare_result(_reply(SLOWER, 1.3))
    assert panel.chart.caption.startswith("1.30× slower (95 % CI")
    assert [bar.highlight for bar in panel.chart.bars] == [True, False]


def test_run_panel_judges_an_old_reply_from_its_repeats(qtbot):
    from widgets.run_panel import compare_headline

    reply = _reply(NO_DIFFERENCE)
    del reply["comparison"]
    assert compare_headline(reply).startswith("no significant difference")
    bare = {"a": {"latency": {"median_us": 20.0}}, "b": {"latency": {"median_us": 10.0}}, "speedup": 2.0}
    assert "spread is unknown" in compare_headline(bare)


def _multi(verdict: str, best_clear: bool) -> build_api.MultiCompareResult:
    lat = {"median_us": 10.0, "mean_us": 10.0, "std_us": 1.0, "min_us": 9.0, "max_us": 12.0, "q1_us": 9.5,
           "q3_us": 10.5, "runs_us": [9.0, 10.0, 12.0], "number": 1, "repeat": 3, "warmup": 0}
    cmp = {"ratio": 1.01, "low": 0.95, "high": 1.08, "level": 0.95, "verdict": verdict, "significant": False,
           "noise_pct": 8.0, "min_effect": 0.03, "n_a": 3, "n_b": 3}
    rows = [{"label": "A", "key": "k", "target": {"kind": "llvm"}, "build_ms": 1.0, "latency": lat, "outputs": [],
             "check": None, "error": None, "fingerprint": "f"},
            {"label": "B", "key": "k", "target": {"kind": "llvm"}, "build_ms": 1.0,
             "latency": {**lat, "median_us": 9.9}, "outputs": [], "check": None, "error": None, "fingerprint": "f",
             "vs_first": cmp, "significant": False}]
    return build_api.MultiCompareResult.from_json({"function": "main", "rows": rows, "diffs": [], "best": 1,
                                                    "best_clear": best_clear})


def test_compare_view_names_no_fastest_when_the_spread_covers_it(qtbot):
    from widgets.compare_view import CompareView

    view = CompareView()
    qtbot.addWidget(view)
    view.set_result(_multi(SAME_BUILD, False))
    assert view.best_label_text() == "No fastest: every pipeline compiles to the same build"
    assert view.table().item(1, 4).text().startswith("same build") and "★" not in view.table().item(1, 0).text()
    assert view.table().item(0, 3).text().startswith("IQR")
    view.set_result(_multi(NO_DIFFERENCE, False))
    assert view.best_label_text().startswith("Fastest by median: B, but not significantly")
    assert view.table().item(1, 4).text() == "no significant difference (±8.0 %)"
    assert not any(bar.highlight for bar in view._chart.bars)


def _profile(key: str, totals: list[float], wall: list[float]) -> Profile:
    med = sorted(totals)[len(totals) // 2]
    entry = ProfileEntry(name="matmul", kind="prim_func", calls=1, total_us=med, mean_us=med, share=1.0,
                         min_total_us=min(totals), max_total_us=max(totals), totals_us=totals)
    return Profile(entries=[entry], total_us=med, run_us=sorted(wall)[len(wall) // 2], repeat=len(totals), warmup=1,
                   key=key, runs_us=wall)


def test_profile_comparison_shows_no_ratio_for_an_unchanged_kernel(qtbot):
    from PySide6.QtCore import Qt

    from widgets.profile_view import ProfileView, comparison_summary

    before = _profile("a", [100.0, 180.0, 101.0, 99.0, 300.0], [110.0, 190.0, 111.0, 109.0, 310.0])
    after = _profile("b", [140.0, 98.0, 100.0, 102.0, 99.0], [150.0, 108.0, 110.0, 112.0, 109.0])
    comparison = build_api.compare_profiles(before, after)
    row = comparison.rows[0]
    assert row.status == IN_BOTH and row.verdict == NO_DIFFERENCE and not row.significant
    view = ProfileView()
    qtbot.addWidget(view)
    view.set_comparison(comparison, "step 1", "step 2")
    model = view.diff_model()
    assert model.data(model.index(0, 4)).startswith("no significant difference (±")
    assert model.data(model.index(0, 4), Qt.ItemDataRole.ForegroundRole) is None
    assert "no significant difference" in comparison_summary(comparison, "step 1", "step 2")
    slower = _profile("c", [300.0, 310.0, 305.0, 302.0, 299.0], [310.0, 320.0, 315.0, 312.0, 309.0])
    changed = build_api.compare_profiles(after, slower).rows[0]
    assert changed.verdict == SLOWER and changed.significant

