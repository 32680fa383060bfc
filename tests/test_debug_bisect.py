"""``main.py bisect`` (issue 21): the bisection plan, and the injected wrong step found on real pipelines."""

from __future__ import annotations

import argparse
import json
import math
import os
import random

import pytest

from pipeline_model.cli import bisect_cmd
from pipeline_model.debugging import bisect as bisect_plan
from pipeline_model.debugging.bisect import FAIL, PASS, SKIP, BisectPlan, BisectReport, leave_one_out_order, max_builds
from tests.debug_fixtures import ROOT, injected_pipeline

CNN = os.path.join(ROOT, "resources", "models", "cnn_bn.onnx")


def _simulate(n: int, culprit: int, skips: frozenset = frozenset()) -> tuple[tuple, int]:
    plan = BisectPlan(n)
    builds = 0
    pos = plan.next_position()
    while pos is not None:
        builds += 1
        plan.record(pos, SKIP if pos in skips else (FAIL if pos >= culprit else PASS))
        pos = plan.next_position()
    return plan.culprit_range(), builds


@pytest.mark.parametrize("n", [1, 2, 3, 8, 9, 17, 40, 100])
def test_plan_finds_every_culprit_within_the_budget(n):
    for culprit in range(1, n + 1):
        found, builds = _simulate(n, culprit)
        assert found == (culprit, culprit)
        assert builds <= math.ceil(math.log2(n)) + 1 <= max_builds(n)


def test_plan_skips_and_reports_a_range():
    # The module after step 3 cannot be completed: the plan tests around it and still isolates step 6.
    assert _simulate(8, 6, frozenset({3}))[0] == (6, 6)
    # The culprit's predecessor skipped: the range holds both (git bisect says the same).
    assert _simulate(8, 6, frozenset({5}))[0] == (5, 6)
    assert _simulate(8, 6, frozenset({4, 5}))[0] == (4, 6)
    plan = BisectPlan(4)
    plan.record(4, PASS)
    assert plan.next_position() is None and plan.culprit_range() is None
    assert leave_one_out_order(4, 5, 6) == [5, 4, 6, 3, 2, 1]


def test_report_round_trip_and_lines():
    report = BisectReport(culprit_step=3, culprit_pass_id="custom.python", builds=4, max_builds=5,
                          tested=[bisect_plan.TestedStep(2, 3, "custom.python", FAIL, built=True, max_abs_over_ref=0.5, ms=12)],
                          message="culprit: step 3")
    again = BisectReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again == report
    assert "step 3 (custom.python)" in again.lines()[0] and "0.5 of max|ref|" in again.lines()[0]


def _bisect(argv: list[str], engine) -> int:
    parser = argparse.ArgumentParser()
    bisect_cmd.add_parser(parser.add_subparsers(dest="command"))
    return bisect_cmd.main(parser.parse_args(["bisect", *argv]), client=engine)


@pytest.mark.e2e
@pytest.mark.parametrize("n,seed,level,model", [
    (random.Random(21).randint(8, 40), 21, "relax", "builtin:mlp"),
    (random.Random(22).randint(8, 40), 22, "tir", "builtin:mlp"),
    (random.Random(23).randint(8, 40), 23, "relax", CNN),
    (random.Random(24).randint(8, 40), 24, "tir", CNN),
])
def test_bisect_names_the_injected_step(engine, tmp_path, capsys, n, seed, level, model):
    path, wrong = injected_pipeline(str(tmp_path), n, seed, level, model=model)
    assert _bisect([path, "--trust", "--json"], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == wrong, out
    assert out["culprit_pass_id"] == "custom.python"
    assert 0 < out["builds"] <= math.ceil(math.log2(n)) + 2
    assert out["ok"] is False and out["exit_code"] == 1
    assert all(t["built"] for t in out["tested"]) and out["tested"][0]["max_abs_over_ref"] > 1e-3


@pytest.mark.e2e
def test_bisect_correct_pipeline_says_so(engine, tmp_path, capsys):
    path, _ = injected_pipeline(str(tmp_path), 9, 5, "none")
    assert _bisect([path, "--trust"], engine) == 0
    text = capsys.readouterr().out
    assert "the pipeline is correct" in text


def test_bisect_bad_input_exit_2(tmp_path, capsys):
    assert _bisect([str(tmp_path / "missing.json")], None) == 2
    assert "missing.json" in capsys.readouterr().err


def test_main_py_knows_the_commands():
    import subprocess
    import sys

    for name in ("bisect", "reduce", "diverge"):
        proc = subprocess.run([sys.executable, os.path.join(ROOT, "main.py"), name, "--help"],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0 and name in proc.stdout, proc.stderr


@pytest.mark.e2e
def test_bisect_stops_between_builds(engine, tmp_path):
    path, _wrong = injected_pipeline(str(tmp_path), 24, 61, "tir")
    args = argparse.Namespace(trust=True, rtol=1e-4, atol=1e-4, check_against="tvm", inputs=None)
    from pipeline_model.fileformat import load_pipeline

    seen = []

    def on_event(name, data):
        if name == "bisect_progress":
            seen.append(data)
            if len(seen) == 2:
                engine.cancel()

    reply = engine.request("bisect", bisect_cmd.bisect_request(load_pipeline(path), args), on_event=on_event)
    assert reply["cancelled"] is True and reply["culprit_step"] is None
    assert 1 <= reply["builds"] <= 2 and "cancelled" in reply["message"]


@pytest.mark.e2e
def test_bisect_survives_modules_that_crash_the_engine(engine, tmp_path, capsys):
    """A TIR rewrite whose store lands 2**40 rows out of its buffer: every module after it kills the engine when
    it runs. Each crash is a failing test; the request goes on in a fresh engine without building anything twice;
    the reproducer dies the same way in a fresh interpreter."""
    import subprocess
    import sys

    n = random.Random(25).randint(8, 40)
    path, wrong = injected_pipeline(str(tmp_path), n, 25, "crash")
    folder = str(tmp_path / "repro")
    assert _bisect([path, "--trust", "--json", "--reproducer", folder], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == wrong, out
    assert out["builds"] <= math.ceil(math.log2(n)) + 2
    assert len({(t["mode"], t["position"]) for t in out["tested"]}) == len(out["tested"])
    assert any("SIGSEGV" in (t["error"] or "") for t in out["tested"])
    proc = subprocess.run([sys.executable, os.path.join(folder, "repro.py")], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "signal 11" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.e2e
def test_when_every_module_fails_no_step_is_blamed(engine, tmp_path, capsys):
    # A tolerance nothing meets: every prefix fails, the model as loaded too, and leaving steps out does not help.
    from pipeline_model.fileformat import load_pipeline

    path, _ = injected_pipeline(str(tmp_path), 8, 26, "none")
    args = argparse.Namespace(trust=True, rtol=0.0, atol=-1.0, check_against="tvm", inputs=None)
    reply = engine.request("bisect", bisect_cmd.bisect_request(load_pipeline(path), args))
    assert reply["ok"] is False and reply["culprit_step"] is None and "no step to blame" in reply["message"]
    modes = [(t["mode"], t["step"]) for t in reply["tested"]]
    assert ("prefix", 0) in modes and sum(1 for m, _ in modes if m == "without") == len(reply["candidates"])
    assert _bisect([path, "--trust", "--atol", "-1"], engine) == 2
    assert "--rtol and --atol" in capsys.readouterr().err


@pytest.mark.e2e
def test_bisect_against_the_framework(engine, tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    path, wrong = injected_pipeline(str(tmp_path), 12, 27, "tir", model=CNN)
    assert _bisect([path, "--trust", "--json", "--check-against", "framework"], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == wrong and out["reference"].startswith("onnxruntime")


TVM_BUG = os.path.join(ROOT, "tests", "data", "tvm_bugs_bisect")


@pytest.mark.e2e
def test_bisect_names_the_stock_lowering_step_when_tvm_itself_crashes(engine, tmp_path, capsys):
    """apache/tvm#20191 (still crashes on 0.27): the CPU default lowering spelled out step by step; with
    StaticPlanBlockMemory the VM segfaults, and so does the default-pipeline reference. The crash needs no reference:
    leaving single steps out of the pipeline as written names StaticPlanBlockMemory within N + 2 builds, the report
    says TVM's own default pipeline crashes too, and the reproducer is saved."""
    path = os.path.join(TVM_BUG, "lowering_spelled_out.json")
    folder = str(tmp_path / "repro")
    assert _bisect([path, "--trust", "--json", "--reproducer", folder], engine) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_pass_id"] == "relax.StaticPlanBlockMemory", out["message"]
    assert out["method"] == "leave-one-out" and out["builds"] <= len(out["candidates"]) + 2
    assert out["default_pipeline_fails"] == "crash" and "SIGSEGV" in out["reference_failure"]
    assert out["tvm_bug"].startswith("TVM's default pipeline crashes on this model too: this is a TVM bug")
    assert "without step" in out["reference"] and os.path.isfile(os.path.join(folder, "repro.py"))
    # The module that passed is the pipeline without the culprit; nothing was blamed on the reference's crash.
    passed = [t for t in out["tested"] if t["outcome"] == "pass"]
    assert [(t["mode"], t["step"]) for t in passed] == [("without", out["culprit_step"])]


@pytest.mark.e2e
def test_build_of_a_working_pipeline_survives_a_crashing_reference(engine):
    """The same model without StaticPlanBlockMemory builds and runs; only the reference crashes the engine: the
    build's result stands and its check says the reference crashed (no framework to fall back to)."""
    from pipeline_model import build_api
    from pipeline_model.fileformat import load_pipeline

    from pipeline_model.consent import Consent

    doc = load_pipeline(os.path.join(TVM_BUG, "lowering_no_static_plan.json"))
    with engine.consented(Consent(trust_all=True)):
        result = build_api.build_run(engine, doc, check=(1e-4, 1e-4))
    assert result.outputs and result.check is not None and not result.check.passed
    assert "crashed" in (result.check.reference_failure or "") and "could not be done" in (result.check.error or "")


@pytest.mark.e2e
@pytest.mark.heavy  # ~25 s: leaves each of ~9 steps out of a CNN pipeline
def test_numbers_fall_back_to_the_framework_when_the_reference_crashed(engine, tmp_path):
    """The default-pipeline reference crashed an earlier engine (sent as ``known``, as request_bisect does after
    such a crash; cnn_bn itself builds fine in TVM): the numbers are checked against ONNX Runtime instead, the
    report says so, and leaving steps out of the pipeline as written names the wrong step in <= N + 2 builds."""
    pytest.importorskip("onnxruntime")
    from pipeline_model.fileformat import load_pipeline

    path, wrong = injected_pipeline(str(tmp_path), 8, 28, "tir", model=CNN)
    args = argparse.Namespace(trust=True, rtol=1e-4, atol=1e-4, check_against="tvm", inputs=None)
    request = bisect_cmd.bisect_request(load_pipeline(path), args)
    request["known"] = [{"mode": "reference", "position": 0,
                         "result": {"kind": "crash", "error": "the engine crashed (signal SIGSEGV) during the "
                                                              "'bisect' request; it was restarted"}}]
    reply = engine.request("bisect", request)
    assert reply["culprit_step"] == wrong, reply["message"]
    assert reply["reference"].startswith("onnxruntime") and "fallback" in reply["reference"]
    assert reply["default_pipeline_fails"] == "crash" and "SIGSEGV" in reply["reference_failure"]
    assert reply["builds"] <= len(reply["candidates"]) + 2


_SHIFT_OUTPUT = '''import numpy as np
import tvm
from tvm import relax


def transform(mod):
    func = mod["main"]
    body = func.body
    shifted = relax.Var("shifted", body.body.ty)
    added = relax.op.add(body.body, relax.const(np.float32(SHIFT)))
    blocks = list(body.blocks) + [relax.BindingBlock([relax.VarBinding(shifted, added)])]
    out = tvm.IRModule(dict(mod.functions_items()), attrs=mod.attrs)
    out["main"] = relax.Function(func.params, relax.SeqExpr(blocks, shifted), func.ret_ty, func.is_pure, func.attrs)
    return relax.transform.Normalize()(out)
'''


@pytest.mark.e2e
@pytest.mark.parametrize("shift,argv,culprit", [
    (0.04, [], None),  # 0.4 of the output's quantization step (0.1): within the int8 check, as Build & Run judges it
    (0.04, ["--rtol", "1e-4", "--atol", "1e-4"], 1),  # tolerances given: judged at them
])  # (a real error found with the default tolerances: test_bisect_names_the_injected_step)
def test_bisect_judges_an_int8_model_as_build_and_run_does(engine, tmp_path, capsys, shift, argv, culprit):
    """Without tolerances, bisect checks each tested module of a quantized model at one quantization step of its
    output against the model's QDQ semantics in float64 (the run check's reference), not at float32's 1e-4
    against the float32 build: a step that moves the output by less than a step is no culprit (before, bisect
    blamed the int8 lowering of every QDQ model whose build rounded a value differently); tolerances given apply."""
    from pipeline_model.document import Step
    from tests.debug_fixtures import save_case
    from tests.int8_models import qdq_conv_model

    model = qdq_conv_model(str(tmp_path))
    steps = [Step("custom.python", {"source": _SHIFT_OUTPUT.replace("SHIFT", repr(shift))}), Step("relax.LegalizeOps")]
    path = save_case(str(tmp_path), "int8_shift", model, steps)
    code = _bisect([path, "--trust", "--json", *argv], engine)
    out = json.loads(capsys.readouterr().out)
    assert out["culprit_step"] == culprit, out
    assert code == (0 if culprit is None else 1)
    assert out["reference"].startswith("model as loaded, each op in float64")
