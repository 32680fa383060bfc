"""The real-bug corpus (issue 31): apache/tvm Relax bugs that still fail on TVM 0.27, rebuilt as small models
and pipelines under ``tests/data/tvm_bugs`` (``tests/tvm_bug_corpus.py``; the table in docs/DEBUGGING.md, "Real
TVM bugs", is ``bench/bench_bug_corpus.py``'s).

For each case the app's own commands must say what is known about the bug: ``bisect`` names the step to blame,
or says that none is when TVM's default pipeline is the culprit; ``diverge`` marks the node where values
differ; the reproducer the app saves reproduces in a fresh interpreter started from another folder, and
``reduce`` shrinks it while it still reproduces. Where the app's answer is wrong today the assertion is marked
``xfail(strict=True)`` with what is wrong, so it turns into a failure (to be unmarked) once it is fixed.

Default suite: the corpus' files, ``bisect`` on every case whose pass raises (no build), and one such case's
reproducer and reduction. Everything that builds, runs, or restarts a crashed engine is ``heavy``.
"""

from __future__ import annotations

import json
import os
import re

import pytest

from pipeline_model.fileformat import load_pipeline
from tests import tvm_bug_corpus as corpus

#: Assertions about the app's answers that are wrong today, by (case, check); each reason says what is wrong.
KNOWN_WRONG = {
    ("expand_matmul_of_sum_illtyped_20198", "reproduce"):
        "reduce accepts no candidate (4 -> 4 bindings, no dimension shrunk): the module before the failing step "
        "is not well-formed (that is the bug), and candidates that are not well-formed are dropped",
    ("shape_roundtrip_reshape_20193", "reproduce"):
        "bisect --reproducer saves the default pipeline's build failure and it reproduces, but reduce accepts no "
        "candidate (5 -> 5 bindings, no dimension shrunk): the module does not print back to TVMScript "
        "(R.tensor_to_shape), so no dimension is rewritten, and no smaller module fails the same way",
    ("tensor_to_shape_const_20192", "reproduce"):
        "bisect --reproducer saves the default pipeline's build failure and it reproduces, but reduce accepts no "
        "candidate (3 -> 3 bindings, no dimension shrunk): the module does not print back to TVMScript "
        "(R.tensor_to_shape), so no dimension is rewritten, and no smaller module fails the same way",
}


def _params(kind: str, check: str, heavy: bool = False, only: tuple = ()) -> list:
    """``pytest.param`` per case of ``kind``: marked heavy, and xfail where :data:`KNOWN_WRONG` says so."""
    params = []
    for case in corpus.cases(kind):
        if only and case.name not in only:
            continue
        marks = [pytest.mark.heavy] if heavy else []
        reason = KNOWN_WRONG.get((case.name, check))
        if reason:
            marks.append(pytest.mark.xfail(strict=True, reason=reason))
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def test_corpus_files_are_complete():
    all_cases = corpus.cases()
    assert len(all_cases) >= 12
    assert len({c.info["issue"] for c in all_cases}) >= 10
    kinds = {c.kind for c in all_cases}
    assert kinds == set(corpus.KINDS), kinds
    for case in all_cases:
        names = set(os.listdir(case.folder))
        assert {"model.py", "pipeline.json", "case.json"} <= names, case.name
        assert case.info["url"] == f"https://github.com/apache/tvm/issues/{case.info['issue']}"
        doc = load_pipeline(case.pipeline)
        assert doc.model == "model.py" and doc.steps, case.name
        if case.culprit is not None:
            assert doc.steps[case.culprit - 1].pass_id == case.info["culprit_pass"], case.name
        else:
            assert case.info["culprit_note"].startswith("none: TVM's default pipeline"), case.name
        if case.kind == "wrong_result":
            assert case.info["diverge"]["first_node"], case.name


# ---- a pass raises while the pipeline runs (no build) ------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("case", _params("pass_crash", "bisect"))
def test_bisect_names_the_step_of_a_pass_crash(engine, case):
    code, out = corpus.bisect(case, engine)
    assert code == 1 and out["ok"] is False, out
    assert out["culprit_step"] == case.culprit, out["message"]
    assert out["culprit_pass_id"] == case.info["culprit_pass"]


def _check_reproducer_and_reduce(case: corpus.Case, engine, tmp_path) -> None:
    folder = str(tmp_path / "repro")
    corpus.reproducer_folder(case, engine, folder)
    assert os.path.isfile(os.path.join(folder, "repro.py")), os.listdir(str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    code, text = corpus.run_repro(folder, str(elsewhere))
    assert code == 1 and "REPRODUCED" in text, text[-3000:]
    reduced = str(tmp_path / "reduced")
    code, out = corpus.reduce(folder, reduced, engine)
    assert code == 0 and out["ok"], out
    shrunk = any("dimension" in str(a) for a in out["accepted"])
    assert out["bindings_after"] < out["bindings_before"] or shrunk, out
    code, text = corpus.run_repro(reduced, str(elsewhere))
    assert code == 1 and "REPRODUCED" in text, text[-3000:]


@pytest.mark.e2e
@pytest.mark.parametrize("case", _params("pass_crash", "reproduce", only=("combine_parallel_matmul_bias_20205",)))
def test_reproducer_of_a_pass_crash_reproduces_and_reduces(engine, tmp_path, case):
    _check_reproducer_and_reduce(case, engine, tmp_path)


@pytest.mark.e2e
@pytest.mark.parametrize("case", [p for p in _params("pass_crash", "reproduce", heavy=True)
                                  if p.values[0].name != "combine_parallel_matmul_bias_20205"])
def test_reproducer_of_every_pass_crash_reproduces_and_reduces(engine, tmp_path, case):
    _check_reproducer_and_reduce(case, engine, tmp_path)


# ---- wrong numbers -----------------------------------------------------------------------------------------

@pytest.mark.e2e
@pytest.mark.parametrize("case", _params("wrong_result", "bisect", heavy=True))
def test_bisect_names_the_step_of_a_wrong_result(engine, case):
    code, out = corpus.bisect(case, engine)
    assert code == 1 and out["culprit_step"] == case.culprit, out["message"]
    assert all(t["built"] for t in out["tested"]), out["tested"]


@pytest.mark.e2e
@pytest.mark.parametrize("case", _params("wrong_result", "diverge", heavy=True))
def test_diverge_marks_the_node_of_a_wrong_result(engine, case):
    expected = case.info["diverge"]
    code, out = corpus.diverge(case, engine, int(expected["step"]))
    assert code == 1, json.dumps(out.get("nodes"), default=str)[:2000]
    assert out["first_divergent"] == expected["first_node"], out


@pytest.mark.e2e
@pytest.mark.parametrize("case", _params("wrong_result", "reproduce", heavy=True))
def test_reproducer_of_a_wrong_result_reproduces_and_reduces(engine, tmp_path, case):
    _check_reproducer_and_reduce(case, engine, tmp_path)


# ---- the build fails or the built module crashes the VM ------------------------------------------------------

def _crash_params(check: str) -> list:
    return _params("build_crash", check, heavy=True) + _params("vm_crash", check, heavy=True)


@pytest.mark.e2e
@pytest.mark.parametrize("case", _crash_params("bisect"))
def test_bisect_on_a_build_or_vm_crash(engine, case):
    code, out = corpus.bisect(case, engine)
    assert code == 1 and out["ok"] is False, out
    if case.culprit is None:
        # TVM's default pipeline is to blame: no step may be named, and the answer must say so.
        assert out["culprit_step"] is None and out.get("culprit_range") in (None, []), out
        assert re.search(r"\bno (single )?step\b", out["message"]), out["message"]
    else:
        assert out["culprit_step"] == case.culprit, out["message"]


@pytest.mark.e2e
@pytest.mark.parametrize("case", _crash_params("reproduce"))
def test_reproducer_of_a_build_or_vm_crash_reproduces_and_reduces(engine, tmp_path, case):
    _check_reproducer_and_reduce(case, engine, tmp_path)
