"""One rule each for "which function runs", "its arguments", "the check" and "how many cores": the engine runs
``pipeline_model.scriptlib`` and exported scripts contain its code (the same source), so the two cannot drift."""

from __future__ import annotations

import inspect
import os
import textwrap

import numpy as np
import pytest

from pipeline_model import runtime_threads, scriptlib
from pipeline_model.document import PipelineDocument, Step
from pipeline_model.export import export_script
from pipeline_model.scriptlib import arguments, functions, outputs, threads

MODULE = '''
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def decode(x: R.Tensor((2,), "float32")) -> R.Tensor((2,), "float32"):
        return x

    @R.function
    def forward(ids: R.Tensor((1, 4), "int64"), table: R.Tensor((7, 3), "float32")) -> R.Tensor((1, 4, 3), "float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            y = R.take(table, ids, axis=0)
            R.output(y)
        return y
'''


def _module(tmp_path):
    path = tmp_path / "two_functions.py"  # TVMScript reads the class source from a file
    path.write_text(MODULE)
    namespace: dict = {}
    exec(compile(MODULE, str(path), "exec"), namespace)  # noqa: S102 - the test's own module
    return namespace["Module"]


def test_exported_script_contains_the_engine_code():
    source = export_script(PipelineDocument(name="rules", model="builtin:mlp", steps=[Step(pass_id="relax.LegalizeOps")]),
                           build=True)
    for func in (functions.entry_function, arguments.make_arguments, arguments.integer_input_bounds,
                 arguments.arguments_by_name, outputs.compare_outputs, outputs.warm_up, outputs.benchmark,
                 outputs.flatten_outputs, threads.usable_cores, threads.use_every_core):
        assert textwrap.dedent(inspect.getsource(func)) in source, func.__name__
    assert "pipeline_model" not in source
    compile(source, "<exported>", "exec")


def test_the_script_code_picks_the_function_and_arguments_the_engine_does(tmp_path):
    pytest.importorskip("tvm")
    mod = _module(tmp_path)
    script: dict = {}
    exec(compile(scriptlib.script_source(), "<script rules>", "exec"), script)  # noqa: S102 - our own code
    # "forward" runs, not the first name in sorted order ("decode"), as the scripts ran before
    assert functions.entry_function(mod) == script["entry_function"](mod) == "forward"
    with pytest.raises(functions.BuildError, match="no Relax function 'nope'"):
        functions.entry_function(mod, "nope")
    engine_arrays, engine_described = arguments.make_arguments(mod, "forward", None)
    script_arrays, script_described = script["make_arguments"](mod, "forward", None)
    assert engine_described == script_described
    assert engine_described[0]["range"] == [0, 7]  # the ids stay inside the table
    assert all(np.array_equal(a, b) for a, b in zip(engine_arrays, script_arrays))


def test_the_graph_view_opens_the_function_that_runs(tmp_path):
    pytest.importorskip("tvm")
    from pipeline_model.engine import graph_extract_tvm

    assert graph_extract_tvm.default_function(_module(tmp_path)) == "forward"


def test_script_thread_lines_are_the_rule_the_engine_applies():
    lines = "\n".join(runtime_threads.script_lines())
    assert textwrap.dedent(inspect.getsource(threads.explicit_thread_count)) in lines
    env = {"TVM_NUM_THREADS": " 3 "}
    assert runtime_threads.ensure_runtime_threads(env, cores=8).count == 3
    script: dict = {"os": os}
    exec(compile(threads_source := scriptlib.module_source("threads"), "<threads>", "exec"), script)  # noqa: S102
    assert "use_every_core" in threads_source
    assert script["use_every_core"](env, 8) == (3, "TVM_NUM_THREADS")
    fresh: dict[str, str] = {}
    assert script["use_every_core"](fresh, 8) == (8, "usable cores") and fresh["TVM_NUM_THREADS"] == "8"


LIFT_MODULE = '''
from tvm.script import ir as I
from tvm.script import relax as R


@I.ir_module
class Module:
    @R.function
    def main(x: R.Tensor((1, 4), "float32"), w1: R.Tensor((8, 4), "float32"), b1: R.Tensor((8,), "float32"),
             w2: R.Tensor((3, 8), "float32")) -> R.Tensor((1, 3), "float32"):
        R.func_attr({"num_input": 1})
        with R.dataflow():
            y = R.matmul(x, R.permute_dims(w1))
            z = R.add(y, b1)
            o = R.matmul(z, R.permute_dims(w2))
            R.output(o)
        return o
'''


@pytest.mark.parametrize("transposes_folded", [False, True])
def test_lifted_weights_keep_their_names(tmp_path, transposes_folded):
    """After LiftTransformParams the weights are still taken by name from the model's values, also when the
    transform passes them through unchanged (``return model_params``: no binding names them; the default CPU
    pipeline on an ONNX MLP once fed random weights and failed its check)."""
    from tvm import relax

    path = tmp_path / "lift.py"
    path.write_text(LIFT_MODULE)
    namespace: dict = {}
    exec(compile(LIFT_MODULE, str(path), "exec"), namespace)  # noqa: S102 - the test's own module
    mod = namespace["Module"]
    if transposes_folded:
        mod = relax.transform.FuseTransposeMatmul()(mod)
    lifted = relax.transform.LiftTransformParams()(mod)
    lifted = relax.transform.DeadCodeElimination()(relax.transform.CanonicalizeBindings()(lifted))
    rng = np.random.default_rng(3)
    params = {"w1": rng.standard_normal((8, 4)).astype("float32"), "b1": rng.standard_normal(8).astype("float32"),
              "w2": rng.standard_normal((3, 8)).astype("float32")}
    types, n_in = arguments.caller_signature(lifted, "main")
    assert n_in == 1 and [t["name"] for t in types] == ["x", "w1", "b1", "w2"]
    arrays, described = arguments.make_arguments(lifted, "main", params)
    assert [d["source"] for d in described[1:]] == ["model"] * 3
    assert all(np.array_equal(a, params[n]) for a, n in zip(arrays[1:], ["w1", "b1", "w2"]))


def test_script_file_writes_never_go_through_a_link(tmp_path):
    """``scriptlib.files``: what an exported script or deploy.py writes replaces a regular file by renaming a
    temporary file of its own over it; a link, a folder, a device or a missing folder is refused, nothing written."""
    from pipeline_model.scriptlib import files

    target = tmp_path / "out.py"
    assert files.write_output(str(target), b"one") == str(target) and target.read_bytes() == b"one"
    files.write_output(str(target), b"two")
    assert target.read_bytes() == b"two"
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    link = tmp_path / "link.py"
    os.symlink(outside, link)
    for bad, why in ((link, "not a regular file"), (tmp_path, "not a regular file"),
                     ("/dev/null", "under /dev"), (tmp_path / "no" / "x.py", "folder does not exist")):
        with pytest.raises(ValueError, match=why):
            files.write_output(str(bad), b"x")
    assert outside.read_text() == "keep" and os.path.islink(link)
    assert sorted(os.listdir(tmp_path)) == ["link.py", "out.py", "outside.txt"]  # no temporary file left


def test_exported_script_refuses_to_save_through_a_link(tmp_path):
    import subprocess
    import sys

    pytest.importorskip("tvm")
    script = tmp_path / "exported.py"
    script.write_text(export_script(PipelineDocument(name="x", model="builtin:mlp",
                                                     steps=[Step(pass_id="relax.LegalizeOps")])))
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    os.symlink(outside, tmp_path / "final.py")
    proc = subprocess.run([sys.executable, str(script), "--quiet", "--save-script", str(tmp_path / "final.py")],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 2 and "not written" in proc.stderr and "final.py" in proc.stderr, proc.stderr
    assert outside.read_text() == "keep"
    saved = tmp_path / "saved.json"
    proc = subprocess.run([sys.executable, str(script), "--quiet", "--save-json", str(saved)],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 0 and saved.read_text().startswith("{"), proc.stderr
    saved.write_bytes(b"the user's own notes\n")  # an existing file: replaced only with --force (issue 32)
    proc = subprocess.run([sys.executable, str(script), "--quiet", "--save-json", str(saved)],
                          capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
    assert proc.returncode == 2 and "--force" in proc.stderr and str(saved) in proc.stderr, proc.stderr
    assert saved.read_bytes() == b"the user's own notes\n"


def test_write_output_replaces_an_existing_file_only_when_asked(tmp_path):
    from pipeline_model.scriptlib import files

    target = tmp_path / "final.py"
    target.write_bytes(b"mine")
    with pytest.raises(ValueError, match="--force"):
        files.write_output(str(target), b"new", overwrite=False)
    assert target.read_bytes() == b"mine" and os.listdir(tmp_path) == ["final.py"]
    files.write_output(str(target), b"new", overwrite=True)
    assert target.read_bytes() == b"new"


@pytest.mark.parametrize("writer", ["script", "app"])
def test_a_target_swapped_for_a_link_during_the_write_is_not_replaced(tmp_path, monkeypatch, writer):
    """The app's ``safe_write`` and an exported script's ``write_output`` are one writer (``files.replace_file``):
    a target swapped for a symlink between the first look and the rename is left alone, the temporary file removed."""
    from pipeline_model import safe_write
    from pipeline_model.scriptlib import files

    target = tmp_path / "out.json"
    target.write_text("old")
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    calls = []
    real_replace_file, real_fsync = files.replace_file, os.fsync

    def spy(*args, **kwargs):
        calls.append(args[0])
        return real_replace_file(*args, **kwargs)

    def swap(fd):
        real_fsync(fd)
        target.unlink()
        os.symlink(outside, target)

    monkeypatch.setattr(files, "replace_file", spy)
    monkeypatch.setattr(os, "fsync", swap)
    with pytest.raises(ValueError, match="out.json"):
        if writer == "script":
            files.write_output(str(target), b"new")
        else:
            safe_write.write_bytes(target, b"new")
    assert calls == [str(target)] and os.path.islink(target) and outside.read_text() == "keep"
    assert sorted(os.listdir(tmp_path)) == ["out.json", "outside.txt"]
