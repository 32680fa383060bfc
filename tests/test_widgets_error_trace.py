"""Locating a failed step's error in the user's own code (``widgets.error_trace``), on the engine's
real messages and tracebacks (captured from TVM 0.27 runs of failing custom steps / pattern files)."""

from __future__ import annotations

from widgets.error_trace import ErrorLocation, locate_user_error, short_error, user_frames_first

SYNTAX_ERROR = "step 2 (custom.python) failed: <custom step 2>: syntax error at line 1, column 11: expected ':': def f(mod)"

EXEC_ERROR = ("step 2 (custom.python) failed: <custom step 2>: line 2: y = undefined_name: NameError: "
              "name 'undefined_name' is not defined")
EXEC_TB = '''Traceback (most recent call last):
  File "/work/main/pipeline_model/custom_pass_tvm.py", line 53, in make_custom_pass
    exec(code, namespace)  # noqa: S102 - trusted user code, by explicit consent
    ^^^^^^^^^^^^^^^^^^^^^
  File "<custom step 2>", line 2, in <module>
    y = undefined_name
        ^^^^^^^^^^^^^^
NameError: name 'undefined_name' is not defined

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/work/main/pipeline_model/engine/runner.py", line 333, in run_pipeline
    the_pass = catalogue_tvm.make_pass(pass_id, params, build_ctx)
  File "/work/main/pipeline_model/custom_pass_tvm.py", line 56, in make_custom_pass
    raise PassConfigError(f"{label}: {line + ': ' if line else ''}{type(exc).__name__}: {exc}") from exc
pipeline_model.catalogue_tvm.PassConfigError: <custom step 2>: line 2: y = undefined_name: NameError: name 'undefined_name' is not defined
'''

RUNTIME_ERROR = "step 3 (custom.python) failed: division by zero"
RUNTIME_TB = '''Traceback (most recent call last):
  File "/work/main/pipeline_model/engine/runner.py", line 340, in run_pipeline
    new_mod = the_pass(mod.clone())
              ^^^^^^^^^^^^^^^^^^^^^
  File "/work/main/.venv/lib/python3.11/site-packages/tvm/ir/transform.py", line 171, in __call__
    return _ffi_transform_api.RunPass(self, mod)
  File "python/tvm_ffi/cython/function.pxi", line 1038, in tvm_ffi.core.Function.__call__
  File "<unknown>", line 0, in TVMFFIPyCallback(void*, TVMFFIAny const*, int, TVMFFIAny*)
  File "/work/main/pipeline_model/emit.py", line 341, in _custom
    result = func(mod) if nargs == 1 else func(mod, _ctx)
    
  File "<custom step 3>", line 14, in broken
    print("call_tir bindings:", count_calls(mod))
    
  File "<custom step 3>", line 10, in count_calls
    return total / (total - total)
    
RuntimeError: division by zero
'''

PATTERN_ERROR = ("step 1 (relax.FuseOpsByPattern) failed: relax.FuseOpsByPattern: pattern file /tmp/p/pat_bad.py: "
                 "NameError: name 'undefined' is not defined")
PATTERN_TB = '''Traceback (most recent call last):
  File "/work/main/pipeline_model/emit.py", line 368, in load_pattern_file
    namespace = runpy.run_path(full, run_name="relax_patterns")
  File "<frozen runpy>", line 291, in run_path
  File "/tmp/p/pat_bad.py", line 4, in <module>
    patterns = [('a', is_op('relax.matmul')(x, undefined))]
                                               ^^^^^^^^^
NameError: name 'undefined' is not defined

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/work/main/pipeline_model/engine/runner.py", line 333, in run_pipeline
    the_pass = catalogue_tvm.make_pass(pass_id, params, build_ctx)
pipeline_model.catalogue_tvm.PassConfigError: relax.FuseOpsByPattern: pattern file /tmp/p/pat_bad.py: NameError: name 'undefined' is not defined
'''


def test_syntax_error_names_line_and_column() -> None:
    loc = locate_user_error(SYNTAX_ERROR, "", ["<custom step 2>"])
    assert loc == ErrorLocation("<custom step 2>", 1, "SyntaxError: expected ':': def f(mod)", 11)
    assert loc.is_custom_source and loc.describe() == "line 1 of <custom step 2>, column 11"


def test_error_while_running_the_source() -> None:
    loc = locate_user_error(EXEC_ERROR, EXEC_TB, ["<custom step 2>"])
    assert loc is not None and (loc.line, loc.message) == (2, "NameError: name 'undefined_name' is not defined")


def test_runtime_error_uses_the_innermost_user_frame() -> None:
    loc = locate_user_error(RUNTIME_ERROR, RUNTIME_TB, ["<custom step 3>"])
    assert loc is not None
    assert (loc.file, loc.line, loc.message) == ("<custom step 3>", 10, "RuntimeError: division by zero")
    # step numbers shift when steps move: any custom label is the custom step's own code
    assert locate_user_error(RUNTIME_ERROR, RUNTIME_TB, ["<custom step 5>"]).line == 10


def test_pattern_file_frame_matched_by_path() -> None:
    loc = locate_user_error(PATTERN_ERROR, PATTERN_TB, ["pat_bad.py", "/tmp/p/pat_bad.py"])
    assert loc is not None and not loc.is_custom_source
    assert (loc.file, loc.line, loc.message) == ("/tmp/p/pat_bad.py", 4, "NameError: name 'undefined' is not defined")
    assert loc.describe() == "pat_bad.py line 4"
    # a relative path as written in the step matches the resolved one
    assert locate_user_error(PATTERN_ERROR, PATTERN_TB, ["p/pat_bad.py"]).line == 4
    # another file of the same name elsewhere is not the user's
    assert locate_user_error(PATTERN_ERROR, PATTERN_TB, ["/home/x/pat_bad.py"]) is None


def test_no_location_for_engine_errors() -> None:
    assert locate_user_error("step 1 (relax.FuseTIR) failed: Check failed: x", "Traceback ...\nTVMError: x", []) is None
    assert locate_user_error(RUNTIME_ERROR, RUNTIME_TB, ["/some/patterns.py"]) is None


def test_user_frames_first() -> None:
    text = user_frames_first(RUNTIME_TB, ["<custom step 3>"])
    head, full = text.split("Full traceback:")
    assert head.splitlines()[0] == "In your code (innermost last):"
    assert '"<custom step 3>", line 14, in broken' in head and '"<custom step 3>", line 10, in count_calls' in head
    assert head.index("line 14") < head.index("line 10")  # innermost last, like Python
    assert "return total / (total - total)" in head and "RuntimeError: division by zero" in head
    assert "runner.py" not in head and full.strip() == RUNTIME_TB.strip()
    # the engine's wrapper exception is not the one shown
    assert "PassConfigError" not in user_frames_first(EXEC_TB, ["<custom step 2>"]).split("Full traceback:")[0]
    assert user_frames_first("Traceback:\nTVMError: x", ["<custom step 1>"]) == "Traceback:\nTVMError: x"


def test_short_error_drops_step_prefix() -> None:
    assert short_error(RUNTIME_ERROR) == "division by zero"
    assert short_error("model failed") == "model failed"
