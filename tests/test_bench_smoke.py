"""Smoke tests of bench/bench_latency.py (the bench/latency package): the bundled tuned CPU pipeline is well
formed, the benchmark's column documents are what their names say, the real architectures are torchvision's and
Hugging Face's (parameter counts, tuple outputs), the interleaved timing is round-robin with a warm-up before
every sample, the ratios and checks of the table, and one tiny end-to-end run (the MLP as dynamo ONNX, no
torch.compile, one round) through the real engine. No tuning, no heavy model; the parts that need torch,
onnxruntime, onnxscript or transformers skip when they are missing."""

from __future__ import annotations

import os
import re

import pytest

from pipeline_model.fileformat import load_pipeline

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PIPES = os.path.join(ROOT, "resources", "pipelines")
TUNE, APPLY = "relax.MetaScheduleTuneTIR", "relax.MetaScheduleApplyDatabase"


def _bench():
    from bench import bench_latency

    return bench_latency


def test_cpu_tuned_pipeline_is_well_formed() -> None:
    doc = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    ids = [s.pass_id for s in doc.steps]
    assert doc.name and doc.description and doc.model == "builtin:mlp"
    assert doc.target["kind"] == "llvm" and int(doc.target["num-cores"]) >= 1
    # Tuning after FuseTIR (the tasks are the fused PrimFuncs), then the database is applied.
    assert ids.index("relax.FuseTIR") < ids.index(TUNE) < ids.index(APPLY) == len(ids) - 1
    assert ids.index("relax.LegalizeOps") < ids.index("relax.FuseOps") < ids.index("relax.FuseTIR")
    # FuseTransposeMatmul works on Relax ops, so it must come before LegalizeOps.
    assert ids.index("relax.FuseTransposeMatmul") < ids.index("relax.LegalizeOps")
    tune = doc.steps[ids.index(TUNE)]
    assert 8 <= int(tune.params["max_trials_global"]) <= 256
    assert all(s.enabled for s in doc.steps)


def test_set_tuning_points_both_steps_at_the_work_dir(tmp_path) -> None:
    bench = _bench()
    doc = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    bench._set_tuning(doc, 5, str(tmp_path))
    by_id = {s.pass_id: s for s in doc.steps}
    assert by_id[TUNE].params["work_dir"] == by_id[APPLY].params["work_dir"] == str(tmp_path)
    assert by_id[TUNE].params["max_trials_global"] == 5
    assert by_id[TUNE].params["num_trials_per_iter"] <= 5
    assert "max_trials_global" not in by_id[APPLY].params


@pytest.mark.parametrize("name", ["no_dlight", "no_fuse", "no_mcpu", "no_transpose_matmul",
                                  "no_transpose_matmul_no_dlight", "tuned_no_transpose_matmul"])
def test_variant_documents(name: str) -> None:
    bench = _bench()
    cpu = load_pipeline(os.path.join(PIPES, "cpu_build_dlight.json"))  # the variants' base (with DLight)
    tuned = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    doc = bench._variant_doc(name, cpu, tuned)
    ids = [s.pass_id for s in doc.steps]
    assert ("dlight.ApplyDefaultSchedule" in ids) == (name in ("no_fuse", "no_mcpu", "no_transpose_matmul"))
    assert ("relax.FuseOps" in ids) == (name != "no_fuse")
    assert (ids[0] == "relax.FuseTransposeMatmul") == (name in ("no_dlight", "no_fuse", "no_mcpu"))
    assert ids.count("relax.FuseTransposeMatmul") <= 1
    assert (TUNE in ids) == name.startswith("tuned")
    # The bundled documents are left as they were.
    assert [s.pass_id for s in cpu.steps] == [s.pass_id for s in load_pipeline(os.path.join(PIPES, "cpu_build_dlight.json")).steps]


def test_unknown_variant_is_refused() -> None:
    bench = _bench()
    cpu = load_pipeline(os.path.join(PIPES, "cpu_build.json"))
    with pytest.raises(SystemExit, match="unknown variant 'nope'"):
        bench._variant_doc("nope", cpu, cpu)


def test_best_targeted_document_tunes_by_share_with_a_total_budget() -> None:
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_targeted

    bench = _bench()
    doc = bench._targeted(load_pipeline(os.path.join(PIPES, "cpu_tuned.json")),
                          {"focus": "share", "min_share": 0.02, "min_trials": 8, "total_trials": 300,
                           "num_trials_per_iter": 16})
    tune = [s for s in doc.steps if s.pass_id == TUNE]
    assert len(tune) == 1 and is_targeted(tune[0].params)
    settings = focus_settings(tune[0].params)  # the app's own validation accepts it
    assert (settings["focus"], settings["min_share"], settings["total_trials"]) == ("share", 0.02, 300)
    small = bench._targeted(load_pipeline(os.path.join(PIPES, "cpu_tuned.json")),
                            {"focus": "share", "total_trials": 4})
    assert [s for s in small.steps if s.pass_id == TUNE][0].params["num_trials_per_iter"] == 4


def test_best_rerun_applies_the_stored_database_without_tuning(tmp_path) -> None:
    bench = _bench()
    base = load_pipeline(os.path.join(PIPES, "cpu_tuned_focus.json"))
    bench._set_tuning(base, None, str(tmp_path))
    doc = bench._replayed(base.clone())
    ids = [s.pass_id for s in doc.steps]
    assert TUNE not in ids and "relax.MetaScheduleTuneIRMod" not in ids
    assert ids == [i for i in (s.pass_id for s in base.steps) if i != TUNE]
    assert ids[-1] == APPLY and doc.steps[-1].params["work_dir"] == str(tmp_path)
    assert TUNE in [s.pass_id for s in base.steps]  # the original is left alone


def test_cpu_tuned_focus_pipeline_is_cpu_tuned_with_a_targeted_step() -> None:
    import json

    import jsonschema

    from pipeline_model import fileformat
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_targeted

    path = os.path.join(PIPES, "cpu_tuned_focus.json")
    with open(path, encoding="utf-8") as fh:
        assert json.load(fh)["version"] == 1  # like the other bundled files: migrated on load
    doc = load_pipeline(path)
    jsonschema.Draft202012Validator(fileformat.load_schema()).validate(fileformat.pipeline_to_json(doc))
    plain = load_pipeline(os.path.join(PIPES, "cpu_tuned.json"))
    assert doc.name and doc.description and doc.target == plain.target
    assert [s.pass_id for s in doc.steps] == [s.pass_id for s in plain.steps]
    assert len({s.uid for s in doc.steps} | {s.uid for s in plain.steps}) == 2 * len(doc.steps)
    tune = next(s for s in doc.steps if s.pass_id == TUNE)
    assert is_targeted(tune.params)
    settings = focus_settings(tune.params, path)
    assert settings["focus"] == "share" and 0 < settings["min_share"] < 0.5
    assert settings["total_trials"] > 0 and settings["min_trials"] >= 1


def test_tuned_column_is_cpu_tuned_app_with_the_minutes_as_its_time_budget() -> None:
    """The "app tuned" column (and the tuned candidate of "app best") is cpu_tuned_app.json in one run: its seeded,
    time-budgeted step gets time_budget_s = the minutes (no calibration round, no targeted trial count)."""
    from bench.latency import docs
    from bench.latency.tuned import run_summary
    from pipeline_model.passkinds.metaschedule.focus import focus_settings, is_budgeted, is_targeted

    assert _bench().BEST_TUNED == "cpu_tuned_app"
    doc = docs.budgeted(load_pipeline(os.path.join(PIPES, "cpu_tuned_app.json")),
                        {"time_budget_s": 300.0, "min_trials": 8, "num_trials_per_iter": 16})
    tune = [s for s in doc.steps if s.pass_id == TUNE]
    assert len(tune) == 1 and is_budgeted(tune[0].params) and not is_targeted(tune[0].params)
    assert focus_settings(tune[0].params)["time_budget_s"] == 300.0
    assert tune[0].params["seed_rules"] == ["app.CPUMatmul", "app.CPUConv2d", "app.CPUParallel"]
    report = {"budget": {"trials": {"conv": 30, "copy": 0}, "end": "deadline", "not_reached": ["copy"]},
              "seeds": {"tasks": {"conv": {"status": "seeded"}, "copy": {"status": "present"}}, "no_rule": [],
                        "outcome": {"app": 1, "tuned": 1}, "seconds": 12.5}}
    summary = run_summary([report], 60.0)
    assert summary["trials"] == 30 and summary["rate_per_min"] == 30.0 and summary["end"] == "deadline"
    assert summary["chosen"] == [{"name": "conv", "trials": 30}] and summary["not_reached"] == ["copy"]
    assert summary["seeds"] == {"seeded": 2, "skipped": 0, "no_rule": 0, "app": 1, "tuned": 1, "seconds": 12.5}


# --------------------------------------------------------------------------- bench/latency: models, timing, report


@pytest.mark.parametrize("name,params", [("resnet18_tv", 11_689_512), ("mobilenet_v3_small", 2_542_856),
                                         ("efficientnet_b0", 5_288_548)])
def test_cnns_have_torchvisions_parameter_counts(name: str, params: int, monkeypatch) -> None:
    """The plain-torch CNNs are torchvision's architectures: same parameter count (torchvision's own figures),
    1000 classes, and they run on a small image."""
    torch = pytest.importorskip("torch")
    from bench.latency import archs

    monkeypatch.setitem(archs.IMAGE, "size", 32)
    model, (x,) = archs.REAL_MODELS[name]()
    assert sum(p.numel() for p in model.parameters()) == params
    assert not model.training and tuple(x.shape) == (1, 3, 32, 32)
    with torch.inference_mode():
        assert tuple(model(x).shape) == (1, 1000)
    bns = [m for m in model.modules() if isinstance(m, torch.nn.BatchNorm2d)]
    assert bns and all(float(m.running_var.min()) != 1.0 for m in bns)  # BN is not an identity


def test_mobilenet_and_efficientnet_use_torchvisions_activations() -> None:
    torch = pytest.importorskip("torch")
    from bench.latency import archs

    kinds = {type(m).__name__ for m in archs.mobilenet_v3_small()[0].modules()}
    assert {"Hardswish", "Hardsigmoid", "ReLU"} <= kinds and "SiLU" not in kinds
    eff = archs.efficientnet_b0()[0]
    kinds = {type(m).__name__ for m in eff.modules()}
    assert {"SiLU", "Sigmoid"} <= kinds and "Hardswish" not in kinds
    depthwise = [m for m in eff.modules() if isinstance(m, torch.nn.Conv2d) and m.groups > 1]
    assert len(depthwise) == 16 and all(m.groups == m.in_channels == m.out_channels for m in depthwise)


@pytest.mark.parametrize("name", ["gpt2_hf", "bert_hf", "llama_hf"])
def test_hugging_face_models_return_tuples(name: str) -> None:
    torch = pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from bench.latency import archs

    model, (ids,) = archs.REAL_MODELS[name]()
    assert ids.dtype == torch.int64 and tuple(ids.shape) == (1, archs.SEQ)
    with torch.inference_mode():
        out = model(ids)
    assert isinstance(out, tuple) and len(out) == 1 and isinstance(out[0], torch.Tensor)
    assert out[0].shape[:2] == (1, archs.SEQ)


def test_interleaved_timing_is_round_robin_with_a_warm_up_before_every_sample() -> None:
    from bench.latency import timing

    calls: list[str] = []
    systems = {n: (lambda n=n: calls.append(n)) for n in ("a", "b", "c")}
    samples = timing.interleaved(systems, repeat=3, sample_ms=0.0, warmup_s=0.0)
    assert {n: len(v) for n, v in samples.items()} == {"a": 3, "b": 3, "c": 3}
    # the sizing warm-up (one call each), then per round: a warm-up call and one timed call per system,
    # the order rotating by one per round
    assert calls[:3] == ["a", "b", "c"]
    rounds = calls[3:]
    assert rounds == ["a", "a", "b", "b", "c", "c", "b", "b", "c", "c", "a", "a", "c", "c", "a", "a", "b", "b"]


def test_ratios_are_paired_medians_and_ratios_of_minimums() -> None:
    from bench.latency import timing

    r = timing.ratios([10.0, 40.0, 30.0], [5.0, 10.0, 30.0])
    assert r == {"median": 2.0, "min": 2.0}
    r = timing.ratios([10.0, 12.0], [20.0, 4.0])
    assert r["median"] == pytest.approx((0.5 + 3.0) / 2) and r["min"] == pytest.approx(2.5)


def test_relative_error_and_flattening() -> None:
    np = pytest.importorskip("numpy")
    pytest.importorskip("torch")
    from bench.latency import systems

    ref = [np.array([[1.0, -4.0]], dtype=np.float32)]
    assert systems.relative_error([np.array([[1.0, -3.0]], dtype=np.float32)], ref) == pytest.approx(0.25)
    assert systems.relative_error([np.zeros((2, 1), np.float32)], ref) == float("inf")  # shape mismatch
    assert systems.relative_error([], ref) == float("inf")
    # ONNX Runtime answers a list of arrays: kept whole, not split into rows
    flat = systems._flatten([np.ones((2, 3)), (np.zeros(4),)])
    assert [a.shape for a in flat] == [(2, 3), (4,)]


def test_table_ratios_build_time_and_failed_checks() -> None:
    from bench.latency import report

    row = {"model": "m", "format": "onnx", "tvm": {"build_s": 2.0},
           "app": {"app default": {"build_s": 3.0}, "tuned": {"error": "boom"}}}
    ok = {"vs_torch": 1e-7, "vs_tvm": 2e-7, "ok": True}
    timed = {"m": {"samples": {"onnx:app default": [400.0, 600.0], "onnx:TVM default": [800.0, 800.0],
                               report.EAGER: [200.0, 200.0], report.COMPILE: [100.0, 300.0], report.ORT: [100.0, 100.0]},
                   "checks": {"onnx:app default": ok, "onnx:TVM default": ok, report.EAGER: ok, report.COMPILE: ok,
                              report.ORT: {"vs_torch": 0.5, "vs_tvm": 0.5, "ok": False}},
                   "load": ("1.0 1.0 1.0", "2.0 1.5 1.0")}}
    header, lines = report.table([row], timed, [], None)
    cell = dict(zip(header, lines[0]))
    assert cell["app÷ORT"] == "5.00x (4.00x)" and cell["app÷eager"] == "2.50x (2.00x)"
    assert cell["app÷compile"] == "3.00x (4.00x)" and cell["app÷TVM"] == "0.62x (0.50x)"
    assert cell["tuned÷ORT"] == "-" and cell["build ratio"] == "1.50x"
    assert cell["check (worst vs PyTorch, vs TVM)"] == "FAIL: ONNX Runtime, tuned (error)"
    assert cell["load before → after"] == "1.0 1.0 1.0 → 2.0 1.5 1.0"
    # with build rounds: the medians and the median of the per-round ratios (ratio of the minimums)
    row["tvm"]["build_rounds"] = [2.0, 0.5, 0.6]
    row["app"]["app default"]["build_rounds"] = [3.0, 1.0, 0.9]
    header, lines = report.table([row], timed, [], None)
    cell = dict(zip(header, lines[0]))
    assert cell["build app / TVM (s)"] == "1.00 / 0.60" and cell["build ratio"] == "1.50x (1.80x)"


def test_command_line_refuses_bad_choices() -> None:
    pytest.importorskip("torch")
    from bench.latency import cli

    for argv, message in ((["--models", "nope"], "unknown model 'nope'"), (["--formats", "tflite"], "unknown format"),
                          (["--tuned-minutes", "11"], "at most 10 minutes")):
        with pytest.raises(SystemExit, match=message):
            cli.Plan(cli.parser().parse_args(argv))


def test_dynamic_bench_refuses_bad_formats_and_names_each_rows_reference(capsys) -> None:
    """``--dynamic --formats``: pt2 and onnx only; a .pt2 row is timed and checked against PyTorch eager, an
    .onnx row against ONNX Runtime, each with its load."""
    import types

    from bench.latency import dynamic

    opts = types.SimpleNamespace(models="gpt2_h128", seqs="32", formats="pt2,tflite", threads=1)
    with pytest.raises(SystemExit, match="unknown format 'tflite'"):
        dynamic.main(opts)
    samples = {"app dynamic": [110.0, 120.0], "app static": [100.0, 100.0]}
    rows = [{"model": "m", "format": fmt, "seq": 32, "build_dyn_s": 2.0, "build_static_s": 1.0, "check": check,
             "load": "3.0 2.0 1.0", "samples": {**samples, dynamic.REFERENCE[fmt]: [220.0, 240.0]}}
            for fmt, check in (("pt2", 1e-7), ("onnx", 1e-3))]
    dynamic.print_rows(rows, 1e-4)
    out = capsys.readouterr().out.splitlines()
    assert out[2] == ("| m | pt2 | 32 | 0.115 | 0.100 | 0.230 (eager) | 1.15 (1.10) | 0.50 (0.50) | 2.0 / 1.0 | "
                      "pass 1.0e-07 | 3.0 2.0 1.0 |")
    assert out[3].startswith("| m | onnx | 32 | 0.115 | 0.100 | 0.230 (ORT) |") and "FAIL 1.0e-03" in out[3]


@pytest.mark.e2e
def test_tiny_end_to_end_run(capsys, monkeypatch) -> None:
    """The MLP as dynamo ONNX through the real engine: every column built, checked and timed (one round), and
    timed again with one core kept busy (``--busy``: a second table)."""
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnxruntime")
    pytest.importorskip("onnxscript")
    pytest.importorskip("tvm")
    from bench.latency import cli

    monkeypatch.setenv("TVM_NUM_THREADS", "2")  # the bench sets it; restored afterwards
    threads = torch.get_num_threads()
    try:
        status = cli.main(["--models", "mlp", "--formats", "onnx", "--repeat", "1", "--no-compile", "--markdown",
                           "--build-rounds", "2", "--busy"])
    finally:
        torch.set_num_threads(threads)
    assert status == 0
    out = capsys.readouterr().out
    # the pool settings the app's columns ran with are printed (the latency depends on them): as the app sets them
    # unless this environment chose otherwise
    pool = cli._pool_text()
    assert f"thread pool {pool};" in out
    assert pool.startswith("the app's (idle workers spin ") or (
        pool.startswith("TVM's (") and "TVM_THREAD_POOL_SPIN_COUNT=" in pool and "TVM_BIND_THREADS=" in pool)
    row = next(line for line in out.splitlines() if line.startswith("| mlp | onnx |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    header = [c.strip() for c in next(line for line in out.splitlines() if line.startswith("| model |")).strip("|").split("|")]
    cell = dict(zip(header, cells))
    assert cell["check (worst vs PyTorch, vs TVM)"].startswith("pass (")
    assert cell["app÷ORT"].endswith("x)") and cell["compile ms"] == "-"
    # two build rounds: the medians and the median per-round ratio (ratio of the minimums)
    assert re.fullmatch(r"\d+\.\d\dx \(\d+\.\d\dx\)", cell["build ratio"]), cell["build ratio"]
    assert re.fullmatch(r"\d+\.\d\d / \d+\.\d\d", cell["build app / TVM (s)"]), cell["build app / TVM (s)"]
    quiet, busy = out.split("With one core kept busy", 1)
    assert "| mlp | onnx |" in quiet and "| mlp | onnx |" in busy
    busy_row = next(line for line in busy.splitlines() if line.startswith("| mlp | onnx |"))
    busy_cell = dict(zip(header, (c.strip() for c in busy_row.strip("|").split("|"))))
    assert busy_cell["app÷ORT"].endswith("x)")


def test_busy_competitor_is_pinned_to_one_core_and_always_ended() -> None:
    """``--busy``'s competing process spins on the one core it is given and is ended when the measurement
    ends, also when it ends with an error."""
    import os

    from bench.latency.busy import busy_core, competitor

    core = busy_core()
    assert core in os.sched_getaffinity(0)
    with pytest.raises(RuntimeError, match="measurement failed"):
        with competitor(core) as proc:
            while proc.poll() is None and os.sched_getaffinity(proc.pid) != {core}:  # a fresh interpreter starting
                os.sched_yield()
            assert proc.poll() is None and os.sched_getaffinity(proc.pid) == {core}
            raise RuntimeError("measurement failed")
    assert proc.poll() is not None  # terminated and reaped


def test_tuned_minutes_pairs_tune_only_the_models_they_name() -> None:
    """``--tuned-minutes cnn=5`` tunes the CNN only (the other models got the 15-minute ceiling of ``--best`` and
    the command refused to start); a bare number among the pairs is the other models' minutes."""
    pytest.importorskip("torch")
    from bench.latency import cli

    plan = cli.Plan(cli.parser().parse_args(["--models", "mlp,cnn,gpt2", "--tuned-minutes", "cnn=5,gpt2=3"]))
    assert plan.tuned_minutes == {"cnn": 5.0, "gpt2": 3.0}
    plan = cli.Plan(cli.parser().parse_args(["--models", "mlp,cnn", "--tuned-minutes", "cnn=5,2"]))
    assert plan.tuned_minutes == {"mlp": 2.0, "cnn": 5.0}
