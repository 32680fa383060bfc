"""Pattern tables' availability messages, the shipped user pattern file, and the fusion report."""

from __future__ import annotations

import os

import numpy as np
import pytest

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402

from pipeline_model.passkinds.fuse_by_pattern import patterns_tvm as pt  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PATTERN_FILE = os.path.join(ROOT, "resources", "patterns", "matmul_add_relu.py")


@pytest.fixture(scope="module")
def mlp():
    from pipeline_model.importers import load_tvm

    return load_tvm.load_model("builtin:mlp", None).mod


def test_tables_say_codegen_missing_plainly():
    tables = pt.pattern_tables()
    assert tables["cublas"]["patterns"] > 0
    # the pip wheel has no relax.ext.cublas: the message says so (and what fails), no traceback
    assert tables["cublas"]["codegen"] is (tvm.get_global_func("relax.ext.cublas", True) is not None)
    if not tables["cublas"]["codegen"]:
        msg = pt.preflight({"pattern_source": "table", "table_prefix": "cublas", "annotate_codegen": True})
        assert msg and "relax.ext.cublas" in msg and "RunCodegen" in msg and "Traceback" not in msg
    # fusing without codegen is fine
    assert pt.preflight({"pattern_source": "table", "table_prefix": "cublas", "annotate_codegen": False}) is None
    assert "unknown pattern table 'nope'" in pt.preflight({"pattern_source": "table", "table_prefix": "nope"})
    assert "no pattern_file" in pt.preflight({"pattern_source": "file", "pattern_file": ""})


def test_user_pattern_file_fuses_matmul_add_relu(mlp):
    patterns = pt.load_user_patterns(PATTERN_FILE)
    assert [p.name for p in patterns] == ["user.matmul_add_relu"]
    fused = relax.transform.FuseOpsByPattern(patterns, bind_constants=False, annotate_codegen=False)(mlp)
    report = pt.fusion_report(mlp, fused)
    assert len(report["groups"]) == 1, report
    group = report["groups"][0]
    assert group["composite"] == "user.matmul_add_relu" and group["caller"] == "forward"
    # node names are the var names of the original graph: permute_dims feeds matmul, then add, relu
    old_names = [b.var.name for b in mlp["forward"].body.blocks[0].bindings]
    assert len(group["nodes"]) == 3 and all(n in old_names for n in group["nodes"])
    assert set(report["fused_nodes"]) == set(group["nodes"])
    # the fused module still builds and computes the same result
    rng = np.random.default_rng(0)
    args = [rng.standard_normal([int(s) for s in p.ty.shape]).astype("float32") for p in mlp["forward"].params]

    def run(mod):
        ex = tvm.compile(mod, target=tvm.target.Target({"kind": "llvm"}))
        vm = relax.VirtualMachine(ex, tvm.cpu())
        return vm["forward"](*[tvm.runtime.tensor(a) for a in args]).numpy()

    np.testing.assert_allclose(run(fused), run(mlp), rtol=1e-5, atol=1e-5)


def test_bad_pattern_files(tmp_path):
    empty = tmp_path / "empty.py"
    empty.write_text("patterns = []\n")
    with pytest.raises(ValueError, match="empty.py: define a non-empty list named 'patterns'"):
        pt.load_user_patterns(str(empty))
    bad = tmp_path / "bad.py"
    bad.write_text("patterns = [42]\n")
    with pytest.raises(ValueError, match=r"patterns\[0\]"):
        pt.load_user_patterns(str(bad))
    with pytest.raises(FileNotFoundError, match="pattern file not found"):
        pt.load_user_patterns("missing.py", str(tmp_path))


def test_bundled_pattern_file_runs_without_consent_but_a_copy_does_not(engine, tmp_path):
    """Files shipped in resources/ are the app's own code: no consent is asked for them. The same code
    copied elsewhere is a user file and runs only with consent (issue 9)."""
    import shutil

    from pipeline_model.document import PipelineDocument, Step

    bundled = os.path.join(ROOT, "resources", "patterns", "matmul_add_relu.py")
    steps = [Step("relax.LegalizeOps"), Step("relax.FuseOpsByPattern",
                                            {"pattern_source": "file", "pattern_file": bundled})]
    result = engine.run(PipelineDocument(model="builtin:mlp", steps=[Step(s.pass_id, dict(s.params)) for s in steps]))
    assert result.ok, result.error
    copy = tmp_path / "patterns.py"
    shutil.copy(bundled, copy)
    steps[1].params["pattern_file"] = str(copy)
    refused = engine.run(PipelineDocument(model="builtin:mlp", steps=steps))
    assert not refused.ok and str(copy) in (refused.error or "") + "".join(s.error or "" for s in refused.steps)


def test_pattern_file_step_needs_trust_and_names_the_file(tmp_path):
    """The step's recipe calls the kind's script function (emit.ScriptCall): refused without trust, its errors
    name the pattern file, and with trust it loads the same patterns the exported script loads."""
    from pipeline_model.passkinds import PassBuildContext, PassConfigError, kind_for, recipe_for

    bad = tmp_path / "pat_bad.py"
    bad.write_text("patterns = [undefined]\n")
    params = {"pattern_source": "file", "pattern_file": "pat_bad.py", "bind_constants": False,
              "annotate_codegen": False}
    kind = kind_for("relax.FuseOpsByPattern")
    expr = recipe_for("relax.FuseOpsByPattern", params)
    with pytest.raises(PassConfigError, match="a pattern file is Python code; it runs only when custom code is trusted"):
        kind.build_pass("relax.FuseOpsByPattern", params, expr, PassBuildContext(base_dir=str(tmp_path)))
    trusted = PassBuildContext(base_dir=str(tmp_path), trust_custom_code=True)
    with pytest.raises(PassConfigError, match="relax.FuseOpsByPattern: pattern file pat_bad.py: NameError"):
        kind.build_pass("relax.FuseOpsByPattern", params, expr, trusted)
    good = dict(params, pattern_file=PATTERN_FILE)
    built = kind.build_pass("relax.FuseOpsByPattern", good, recipe_for("relax.FuseOpsByPattern", good), trusted)
    assert isinstance(built, tvm.transform.Pass)
