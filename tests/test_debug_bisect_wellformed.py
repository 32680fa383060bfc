"""bisect when the step that raises is not the culprit, or when no step is (issue 31): an earlier step's output
not well formed is blamed (``well_formed_problem``); with no step to blame because TVM's default pipeline fails on
the model as loaded, the reproducer is of that failure (``reproducer.NO_STEP``). The real cases are the corpus'
(``tests/test_tvm_bug_corpus.py``: #20198 ill-typed, #20191, #20192, #20193)."""

from __future__ import annotations

import pytest

from pipeline_model.debugging import repro_folder, reproducer
from pipeline_model.debugging.bisect import BisectReport

ILL_TYPED = '''
@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((2, 3), dtype="float16")) -> R.Tensor((2, 3), dtype="float32"):
        with R.dataflow():
            y: R.Tensor((2, 3), dtype="float32") = R.add(x, x)
            R.output(y)
        return y
'''


def test_well_formed_problem_names_the_violation():
    import tvm

    from pipeline_model.engine.debugging.bisect_tvm import well_formed_problem

    good = tvm.script.from_source(ILL_TYPED.replace('dtype="float32"', 'dtype="float16"'))
    assert well_formed_problem(good) == ""
    bad = tvm.script.from_source(ILL_TYPED, check_well_formed=False)
    assert "float16" in well_formed_problem(bad) and "float32" in well_formed_problem(bad)


@pytest.mark.parametrize("fails, kind, run_after", [("build", reproducer.KIND_BUILD, False),
                                                    ("run", reproducer.KIND_BUILD, False),
                                                    ("crash", reproducer.KIND_CRASH, True)])
def test_report_kind_without_a_culprit_is_the_default_pipelines_failure(fails, kind, run_after):
    report = BisectReport(ok=False, culprit_step=None, default_pipeline_fails=fails,
                          reference_failure="tvm.compile: build failed: CodeGenVM cannot emit R.add",
                          failure={"kind": "build", "error": "the pipeline's own error"})
    assert reproducer.report_kind(report) == (kind, "tvm.compile: build failed: CodeGenVM cannot emit R.add",
                                              run_after)


def test_a_no_step_reproducer_says_so_and_reads_back(tmp_path):
    spec = reproducer.ReproSpec(kind=reproducer.KIND_BUILD, expected=reproducer.expected_for("build", "x"),
                                target={"kind": "llvm"}, pass_context={}, module_text="# module\n",
                                step_index=reproducer.NO_STEP, pass_id="", pieces=[])
    files = reproducer.spec_files(spec)
    assert "at no step: TVM's default pipeline on the model as loaded" in str(files["README.md"]).splitlines()[0]
    assert "step 0" not in str(files["repro.py"])
    reproducer.write_folder(str(tmp_path / "r"), files)
    assert reproducer.read_spec(str(tmp_path / "r")).step_index == reproducer.NO_STEP
    spec.step_index = -2
    reproducer.write_folder(str(tmp_path / "bad"), reproducer.spec_files(spec))
    with pytest.raises(repro_folder.ReproducerFolderError, match="step_index -2 is out of range"):
        reproducer.read_spec(str(tmp_path / "bad"))
