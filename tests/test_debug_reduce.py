"""``main.py reduce`` (issue 21): the greedy loop, and real reductions that still reproduce in a fresh interpreter."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

import pytest

from pipeline_model.cli import reduce_cmd, run_cmd
from pipeline_model.debugging import reproducer
from pipeline_model.debugging.reduce import Module, Reducer, halving_order
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.fileformat import save_pipeline


def test_halving_order():
    assert halving_order(1) == [0]
    assert halving_order(8) == [4, 2, 6, 1, 3, 5, 7, 0]
    assert sorted(halving_order(20)) == list(range(20))
    assert len(halving_order(1000)) == 24 and halving_order(1000)[0] == 500


def test_reducer_keeps_the_smallest_failing_module_and_stops():
    # Modules are ranges [lo, hi) of "bindings"; the failure needs binding 13.
    def candidates(m):
        lo, hi = json.loads(m.json)
        return [{"lo": lo + d, "hi": hi} for d in (8, 4, 2, 1)] + [{"lo": lo, "hi": hi - d} for d in (8, 4, 2, 1)]

    def apply(m, c):
        return Module(key="", json=json.dumps([c["lo"], c["hi"]]), bindings=c["hi"] - c["lo"]) if c["lo"] < c["hi"] else None

    def check(m):
        lo, hi = json.loads(m.json)
        return lo <= 13 < hi

    reducer = Reducer(candidates, apply, check)
    best = reducer.run(Module("", json.dumps([0, 40]), 40))
    assert json.loads(best.json) == [13, 14] and best.bindings == 1
    assert reducer.stats.stopped == "no smaller module fails the same way"
    stopped = Reducer(candidates, apply, check, max_checks=3)
    assert stopped.run(Module("", json.dumps([0, 40]), 40)).bindings < 40 and stopped.stats.stopped == "3 checks made"


SOFTMAX = {
    "exception": ('from tvm import relax\n\n\ndef transform(mod):\n    for _gv, func in mod.functions_items():\n'
                  '        if isinstance(func, relax.Function) and "R.nn.softmax" in func.script():\n'
                  '            raise ValueError("softmax is not supported here")\n    return mod\n'),
    "crash": ('import ctypes\n\nfrom tvm import relax\n\n\ndef transform(mod):\n    for _gv, func in mod.functions_items():\n'
              '        if isinstance(func, relax.Function) and "R.nn.softmax" in func.script():\n'
              '            ctypes.string_at(0)\n    return mod\n'),
}


def _cli(module, name, argv, engine) -> int:
    parser = argparse.ArgumentParser()
    module.add_parser(parser.add_subparsers(dest="command"))
    return module.main(parser.parse_args([name, *argv]), client=engine)


@pytest.mark.e2e
@pytest.mark.parametrize("kind", ["exception", "crash"])
def test_reduce_a_transformer_reproducer(engine, tmp_path, capsys, kind):
    doc = PipelineDocument(name=kind, model="builtin:transformer", target={"kind": "llvm"},
                           steps=[Step("relax.FoldConstant"), Step("custom.python", {"source": SOFTMAX[kind]})])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder, reduced = str(tmp_path / "repro"), str(tmp_path / "reduced")
    assert _cli(run_cmd, "run", [path, "--trust", "--reproducer", folder], engine) == 1
    capsys.readouterr()
    assert _cli(reduce_cmd, "reduce", [folder, "-o", reduced], engine) == 2  # no --trust: refused
    capsys.readouterr()
    assert _cli(reduce_cmd, "reduce", [folder, "-o", reduced, "--trust", "--json"], engine) == 0
    out = json.loads(capsys.readouterr().out)
    before, after = out["bindings_before"], out["bindings_after"]
    assert before >= 30 and after <= 3, out  # one operation (softmax): at most k + 2 bindings
    text = open(os.path.join(reduced, "repro.py")).read()
    assert "R.nn.softmax" in text
    if kind == "exception":  # shrunk too: every static dimension of the softmax became 1
        assert "R.Tensor((1, 1, 1, 1)" in text and "dimension 32 became 1" in out["accepted"], out
    proc = subprocess.run([sys.executable, os.path.join(reduced, "repro.py")], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "REPRODUCED" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.e2e
def test_reduce_a_numerics_reproducer_of_bisect(engine, tmp_path, capsys):
    from pipeline_model.cli import bisect_cmd
    from tests.debug_fixtures import ROOT, injected_pipeline

    path, wrong = injected_pipeline(str(tmp_path), 9, 41, "relax", model=os.path.join(ROOT, "resources", "models",
                                                                                      "cnn_bn.onnx"))
    folder, reduced = str(tmp_path / "repro"), str(tmp_path / "reduced")
    assert _cli(bisect_cmd, "bisect", [path, "--trust", "--reproducer", folder], engine) == 1
    capsys.readouterr()
    assert _cli(reduce_cmd, "reduce", [folder, "-o", reduced, "--trust", "--json"], engine) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["bindings_before"] > out["bindings_after"] and out["bindings_after"] <= 10, out
    proc = subprocess.run([sys.executable, os.path.join(reduced, "repro.py")], cwd=str(tmp_path),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "above tolerance" in proc.stdout, proc.stdout + proc.stderr


DATAFLOW_LOWER = ("relax.LegalizeOps", "relax.ToNonDataflow", "relax.RemovePurityChecking", "relax.CallTIRRewrite",
                  "relax.LowerRuntimeBuiltin")


def _reduced_reproduces(reduced: str, tmp_path, extra: tuple = ()) -> str:
    """``python repro.py`` of the reduced folder in a fresh interpreter, from another folder: its output."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    proc = subprocess.run([sys.executable, os.path.join(reduced, "repro.py"), *extra], cwd=str(elsewhere),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1 and "REPRODUCED" in proc.stdout, proc.stdout + proc.stderr
    return proc.stdout


@pytest.mark.e2e
def test_reduce_a_tvm_pass_error(engine, tmp_path, capsys):
    # LowerRuntimeBuiltin on unplanned allocations of the transformer: a TVM InternalError; the module before it
    # does not parse back from TVMScript, so the reproducer (and each candidate) goes through module.json.
    doc = PipelineDocument(name="tvm", model="builtin:transformer", target={"kind": "llvm"},
                           steps=[Step(p) for p in DATAFLOW_LOWER])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder, reduced = str(tmp_path / "repro"), str(tmp_path / "reduced")
    assert _cli(run_cmd, "run", [path, "--reproducer", folder], engine) == 1
    capsys.readouterr()
    assert "module.json" in os.listdir(folder)
    assert _cli(reduce_cmd, "reduce", [folder, "-o", reduced, "--trust", "--json"], engine) == 0
    out = json.loads(capsys.readouterr().out)
    before, after = out["bindings_before"], out["bindings_after"]
    assert before >= 30 and (after <= 10 or after * 10 <= before), out
    assert "VMBuiltinLower encountered" in _reduced_reproduces(reduced, tmp_path)


HANG_ON_SOFTMAX = ('import time\n\nfrom tvm import relax\n\n\ndef transform(mod):\n'
                   '    for _gv, func in mod.functions_items():\n'
                   '        if isinstance(func, relax.Function) and "R.nn.softmax" in func.script():\n'
                   '            while True:\n                time.sleep(0.05)\n    return mod\n')


@pytest.mark.e2e
@pytest.mark.slow  # ~90 s on 2 cores: each reproducing candidate waits for the 3 s watchdog and a new engine
@pytest.mark.heavy  # CI's 8 minutes; and its 3 s check limit is what load can break (the seeded hang cases, heavy too)
def test_reduce_a_hang(engine, tmp_path, capsys):
    # A custom step that hangs on R.nn.softmax: each candidate that still holds it hangs the engine until the
    # (short) watchdog limit ends it; the client restarts the engine and the hang counts as reproduced. The
    # whole reduction takes 37 -> 1 binding (the softmax) in 43 checks.
    doc = PipelineDocument(name="hang", model="builtin:transformer", target={"kind": "llvm"},
                           steps=[Step("relax.FoldConstant"), Step("custom.python", {"source": HANG_ON_SOFTMAX})])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder, reduced = str(tmp_path / "repro"), str(tmp_path / "reduced")
    assert _cli(run_cmd, "run", [path, "--trust", "--timeout", "3", "--reproducer", folder], engine) == 1
    capsys.readouterr()
    assert reproducer.read_spec(folder).kind == reproducer.KIND_HANG
    saved = engine.step_timeout_s
    assert _cli(reduce_cmd, "reduce", [folder, "-o", reduced, "--trust", "--json", "--timeout", "3",
                                       "--max-checks", "45"], engine) == 0
    assert engine.step_timeout_s == saved  # the shared client's watchdog limit is given back
    out = json.loads(capsys.readouterr().out)
    before, after = out["bindings_before"], out["bindings_after"]
    assert before >= 30 and after <= 3, out  # one operation: at most k + 2 bindings
    assert out["checks"] <= 45 and out["stopped"] == "no smaller module fails the same way", out
    assert "R.nn.softmax" in open(os.path.join(reduced, "repro.py")).read()
    _reduced_reproduces(reduced, tmp_path, ("--timeout", "4"))


@pytest.mark.e2e
def test_reduce_runs_repro_py_only_with_consent_to_its_content(engine, tmp_path, capsys):
    # The GUI consents to a reproducer's repro.py by its content hash (the engine client carries it); the engine's
    # reduce_check refuses without it, and refuses a repro.py changed since.
    from pipeline_model import consent
    from pipeline_model.debugging.reduce import reduce_folder
    from pipeline_model.engine.client import ConsentRequired

    doc = PipelineDocument(name="x", model="builtin:mlp", target={"kind": "llvm"},
                           steps=[Step("custom.python", {"source": "def transform(mod):\n    raise ValueError('no')\n"})])
    path = str(tmp_path / "p.json")
    save_pipeline(doc, path)
    folder = str(tmp_path / "repro")
    assert _cli(run_cmd, "run", [path, "--trust", "--reproducer", folder], engine) == 1
    capsys.readouterr()
    item = consent.reproducer_item(folder)
    assert item.kind == consent.KIND_REPRO and item.sha256
    with engine.consented(consent.Consent()):
        with pytest.raises(ConsentRequired, match="repro.py"):
            reduce_folder(engine, folder, str(tmp_path / "none"), max_checks=2)
    with engine.consented(consent.Consent(hashes=[item.sha256])):
        out = reduce_folder(engine, folder, str(tmp_path / "by_hash"), max_checks=2)
    assert out.folder == str(tmp_path / "by_hash") and out.stats.checks <= 2
    with open(os.path.join(folder, "repro.py"), "a", encoding="utf-8") as f:
        f.write("\n# changed after the consent\n")
    with engine.consented(consent.Consent(hashes=[item.sha256])):
        with pytest.raises(ConsentRequired):
            reduce_folder(engine, folder, str(tmp_path / "changed"), max_checks=2)


def test_reducer_checks_a_module_once():
    # Two candidates that make the same module: the second is not checked again after the first was uninteresting.
    seen = []

    def candidates(m):
        return [{"to": 3}, {"to": 3}, {"to": 2}]

    def apply(m, c):
        return Module(key="", json=str(c["to"]), bindings=c["to"]) if c["to"] < m.bindings else None

    def check(m):
        seen.append(m.json)
        return m.json == "2"

    best = Reducer(candidates, apply, check).run(Module("", "5", 5))
    assert best.bindings == 2 and seen == ["3", "2"]


def _module_text(folder: str) -> str:
    return reproducer.read_spec(folder).module_text


def test_candidates_cut_an_operand_and_bypass_a_binding():
    # Engine side in this process: a value made a parameter (its producers die, no alias binding left), a binding
    # left out for its argument of the same type, a cut that returns the value itself (no extra binding).
    import tvm
    from tvm.script import relax as R

    from pipeline_model.engine.debugging import reduce_tvm
    from pipeline_model.engine.debugging.reproducer_tvm import binding_count

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((4, 4), "float32"), w: R.Tensor((4, 4), "float32")) -> R.Tensor((4, 4), "float32"):
            with R.dataflow():
                a = R.exp(x)
                b = R.permute_dims(w)
                c = R.matmul(a, b)
                d = R.nn.relu(c)
                e = R.add(d, x)
                R.output(e)
            return e

    mod = Mod
    kinds = {c["op"] for c in reduce_tvm.candidates(mod, "main")}
    assert {"cut", "params", "param", "bypass", "unused_params", "shrink"} <= kinds
    at = {b.var.name: k for k, b in enumerate(mod["main"].body.blocks[0].bindings)}
    param = reduce_tvm.apply_candidate(mod, {"op": "param", "function": "main", "at": at["c"]}, "main")
    assert binding_count(param) == 2 and "c_in" in [p.name for p in param["main"].params]
    bypass = reduce_tvm.apply_candidate(mod, {"op": "bypass", "function": "main", "at": at["d"], "arg": 0}, "main")
    assert binding_count(bypass) == 4 and "R.nn.relu" not in bypass.script()
    cut = reduce_tvm.apply_candidate(mod, {"op": "cut", "function": "main", "at": at["c"]}, "main")
    assert binding_count(cut) == 3 and "R.output(c)" in cut.script()
    # a candidate that cannot be made is none: permute_dims has no second argument
    assert reduce_tvm.apply_candidate(mod, {"op": "bypass", "function": "main", "at": at["b"], "arg": 1}, "main") is None


def test_candidates_inline_a_fused_function():
    import tvm
    from tvm import relax

    from pipeline_model.engine.debugging import reduce_tvm
    from pipeline_model.engine.debugging.reproducer_tvm import binding_count
    from pipeline_model.importers.load_tvm import load_model

    mod = load_model("builtin:mlp").mod
    for p in (relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps()):
        mod = p(mod)
    fused = [c for c in reduce_tvm.candidates(mod, "forward") if c["op"] == "inline"]
    assert [c["function"] for c in fused] == ["fused_matmul_add_relu"]
    inlined = reduce_tvm.apply_candidate(mod, fused[0], "forward")
    assert inlined is not None and binding_count(inlined) < binding_count(mod)
    assert "fused_matmul_add_relu" not in [gv.name_hint for gv, _f in inlined.functions_items()]
    assert all(isinstance(f, tvm.tirx.PrimFunc) or gv.name_hint == "forward" for gv, f in inlined.functions_items())


#: Seeded cases of the default suite (fast kinds; ``bench/bench_reduce.py`` and the heavy test run them all).
ESSENCE_DEFAULT = [("exception", seed) for seed in range(3)] + [("tvm", seed) for seed in range(3, 6)]


@pytest.mark.e2e
def test_reduce_to_the_essence(engine, tmp_path):
    # A custom step that fails only on a chain of k = 1..3 operations of a 13-37 binding module: the reduced module
    # holds at most k + 2 bindings (the acceptance: >= 90 % of the seeded cases; here all of these).
    from tests.debug_fixtures import run_reduce_case

    rows = []
    for mode, seed in ESSENCE_DEFAULT:
        folder = tmp_path / f"{mode}{seed}"
        folder.mkdir()
        rows.append(run_reduce_case(engine, str(folder), seed, mode))
    assert all(r["ok"] for r in rows), [(r["mode"], r["seed"], r["chain"], r["before"], r["after"]) for r in rows]
    assert {r["k"] for r in rows} == {1, 2, 3} and min(r["before"] for r in rows) >= 13
    k3 = next(r for r in rows if r["k"] == 3)
    text = _module_text(k3["folder"])
    assert all(f"R.{op.split('.', 1)[1]}(" in text.replace("R.nn.", "R.") for op in k3["chain"]), text
    _reduced_reproduces(k3["folder"], tmp_path)


@pytest.mark.e2e
@pytest.mark.heavy  # ~60 minutes on 2 loaded cores: every reproducing crash or hang restarts the engine
@pytest.mark.parametrize("mode", ["exception", "tvm", "crash", "hang", "numeric"])
def test_reduce_to_the_essence_all_seeded_cases(engine, tmp_path, mode):
    from tests.debug_fixtures import run_reduce_case

    rows = []
    for seed in range(10):
        folder = tmp_path / f"{seed}"
        folder.mkdir()
        rows.append(run_reduce_case(engine, str(folder), seed, mode, hang_s=10.0))  # a busy machine: no false hang
    assert sum(r["ok"] for r in rows) >= 9, [(r["seed"], r["chain"], r["before"], r["after"]) for r in rows]
