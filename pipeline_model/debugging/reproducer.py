"""Reproducer folders (TVM-free): ``repro.py`` of plain TVM calls, ``README.md``, ``repro.json``, data files.

A reproducer holds the module before the failing step (inlined in ``repro.py`` as TVMScript, with
``module.json`` from ``tvm.ir.save_json`` beside it when the text does not parse back: after the
``dataflow_lower`` stage, or with constants TVMScript cannot carry), the failing step built by the same code
exported scripts contain (its pass kind's ``export_step``), the target and PassContext, and for a numerics
failure the arguments of the entry function (``inputs.npz``: inputs and weights by parameter name).

``python repro.py`` runs the step in a child process (so a crash or a hang can be told apart) and exits 1 when
the failure reproduced — same exception type and first message line (absolute paths scrubbed on both sides),
death by the same signal, no end within ``--timeout``, or outputs of the module before and after the step
differing beyond the tolerance —, 0 when it did not, 2 when the reproducer itself could not run.
``--inline`` runs it in the same process (for a debugger). The engine side that collects the pieces is
:mod:`pipeline_model.engine.debugging.reproducer_tvm`.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import textwrap
from dataclasses import asdict, dataclass, field
from typing import Any, Optional, Union

from pipeline_model import scriptlib
from pipeline_model.debugging import repro_folder
from pipeline_model.debugging.repro_folder import MAX_DATA_BYTES, ReproducerFolderError  # noqa: F401 - re-exported

KIND_EXCEPTION, KIND_CRASH, KIND_HANG, KIND_NUMERIC, KIND_BUILD = "exception", "crash", "hang", "numeric", "build"
KINDS = (KIND_EXCEPTION, KIND_CRASH, KIND_HANG, KIND_NUMERIC, KIND_BUILD)


# ------------------------------------------------------------- helpers copied into repro.py (inspect.getsource)


def scrub_paths(text):
    """``text`` with every absolute path shortened to ``<...>/<last part>`` (reproducers carry no paths)."""
    return re.sub(r"(?<![\w.<>])/(?:[^\s/'\":,()\[\]]+/)+([^\s/'\":,()\[\]]*)", r"<...>/\1", str(text))


def exception_text(exc):
    """An exception as the app reports a failed step: ``Type: message``, TVM's own errors (and messages that
    already start with the type) without the type; the engine's runner uses this very function."""
    text = str(exc).strip()
    name = type(exc).__name__
    if not text:
        return name
    if name in ("RuntimeError", "TVMError", "InternalError", "PassConfigError") or text.startswith(name):
        return text
    return f"{name}: {text}"


def error_line(exc):
    """First line of an exception as the app reports it (:func:`exception_text`), absolute paths scrubbed."""
    name = type(exc).__name__
    text = exception_text(exc)
    for line in text.splitlines():
        if line.strip():
            return scrub_paths(line.strip())
    return name


# ------------------------------------------------------------------------------------------ description


@dataclass
class ReproSpec:
    """Everything a reproducer folder says (``repro.json``); ``expected`` is the failure to see again."""

    kind: str
    expected: dict[str, Any]
    target: dict[str, Any]
    pass_context: dict[str, Any]
    module_text: str
    step_index: int
    pass_id: str
    params: dict[str, Any] = field(default_factory=dict)
    function: str = "main"
    error: str = ""
    tvm_version: str = ""
    build_flags: dict[str, str] = field(default_factory=dict)
    python_version: str = ""
    pieces: list[dict[str, list[str]]] = field(default_factory=list)
    has_module_json: bool = False
    has_inputs: bool = False
    bindings: Optional[int] = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """JSON-plain dict (without the module text, which is in ``repro.py``)."""
        data = asdict(self)
        data.pop("module_text")
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], module_text: str = "") -> "ReproSpec":
        """Inverse of :meth:`to_json`."""
        fields = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        fields["module_text"] = module_text
        return cls(**fields)


def expected_for(kind: str, error: str, traceback_text: str = "", *, timeout_s: Optional[float] = None,
                 signal_number: Optional[int] = None, rtol: float = 1e-4, atol: float = 1e-4,
                 function: str = "main") -> dict[str, Any]:
    """The ``EXPECTED`` of a reproducer from what the app saw: ``error`` (a step's error, ``step N (pass)
    failed: `` prefix allowed) and its traceback (for the exception type)."""
    if kind not in KINDS:
        raise ValueError(f"unknown failure kind {kind!r}")
    text = re.sub(r"^step \d+ \([^)]*\) failed: ", "", (error or "").strip())
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    out: dict[str, Any] = {"kind": kind, "function": function, "rtol": rtol, "atol": atol}
    if kind == KIND_EXCEPTION:
        out["line"] = scrub_paths(first)
        out["type"] = exception_type(traceback_text) or exception_type(first)
    elif kind == KIND_CRASH:
        out["signal"] = int(signal_number or 11)
    elif kind == KIND_HANG:
        out["timeout"] = float(timeout_s or 60.0)
    return out


def exception_type(text: str) -> Optional[str]:
    """The short name of the last exception a traceback (or a ``Type: message`` line) names, if any."""
    found = re.findall(r"^\s*([A-Za-z_][\w.]*(?:Error|Exception|Interrupt|Exit)):", text or "", re.MULTILINE)
    return found[-1].rsplit(".", 1)[-1] if found else None


def hang_seconds(error: str) -> Optional[float]:
    """The watchdog limit a hang message names (``did not finish within 20 s``), if any."""
    match = re.search(r"did not finish within ([0-9.]+) s", error or "")
    return float(match.group(1)) if match else None


def report_kind(report: Any) -> tuple[str, str, bool]:
    """``(kind, error, run_after)`` of the reproducer of a bisection's culprit (a ``BisectReport``): the failure
    of the step itself (``method: run``), else a crash when building and running the module after the step,
    a numerics failure or a build failure (CLI ``bisect --reproducer`` and the GUI). With no culprit step and TVM's
    default pipeline failing on the model as loaded (``default_pipeline_fails``), the build (or crash) of the model
    as loaded: the reproducer of step index ``-1`` (:data:`NO_STEP`)."""
    failure = dict(report.failure or {})
    error = str(failure.get("error") or "")
    if report.culprit_step is None and report.default_pipeline_fails:  # no step: TVM's default pipeline fails
        error = str(report.reference_failure or error)
        if report.default_pipeline_fails == "crash":
            return KIND_CRASH, error, True
        return KIND_BUILD, error, False
    if report.method == "run":
        return failure_kind(error), error, False
    if failure.get("kind") == "crash":
        return KIND_CRASH, error, True
    return (KIND_NUMERIC if failure.get("kind") == "numeric" else KIND_BUILD), error, False


#: ``step_index`` of a reproducer without a step: the model as loaded built with ``tvm.compile``'s default pipeline.
NO_STEP = -1


def step_words(step_index: int, pass_id: str) -> str:
    """``step 3 (relax.FuseOps)``, or what a :data:`NO_STEP` reproducer reproduces."""
    if step_index < 0:
        return "no step: TVM's default pipeline on the model as loaded"
    return f"step {step_index + 1} ({pass_id})"


def save_request(run: dict[str, Any], index: int, kind: str, folder: str, *, error: str = "", traceback: str = "",
                 timeout_s: Optional[float] = None, rtol: Optional[float] = 1e-4, atol: Optional[float] = 1e-4,
                 inputs: Optional[dict[str, Any]] = None, run_after: bool = False,
                 overwrite: bool = False) -> dict[str, Any]:
    """The engine's ``save_reproducer`` request for step ``index`` (0-based) of the pipeline whose ``run``
    arguments are given (CLI and GUI). A hang's timeout defaults to the limit its message names; a tolerance left
    to the engine (``None``: run --build's per-precision default) is the reproducer's 1e-4."""
    if timeout_s is None:
        timeout_s = hang_seconds(error) or 60.0
    return {"run": run, "step_index": int(index), "kind": kind, "error": error, "traceback": traceback,
            "timeout_s": float(timeout_s), "out_dir": os.path.abspath(folder),
            "check": {"rtol": 1e-4 if rtol is None else float(rtol), "atol": 1e-4 if atol is None else float(atol)},
            "inputs": dict(inputs or {"seed": 0}),
            "run_after": bool(run_after), "overwrite": bool(overwrite)}


def crash_signal(error: str) -> int:
    """The signal number a crash message names (``signal SIGSEGV``), 11 when it names none."""
    import signal

    match = re.search(r"\b(SIG[A-Z]+)\b", error or "")
    if match:
        try:
            return int(signal.Signals[match.group(1)])
        except KeyError:
            pass
    return 11


def failure_kind(error: str) -> str:
    """``hang``, ``crash`` or ``exception`` for a failed step's error message (as the engine client words it)."""
    if "did not finish within" in (error or ""):
        return KIND_HANG
    if "the engine crashed" in (error or ""):
        return KIND_CRASH
    return KIND_EXCEPTION


# ---------------------------------------------------------------------------------------------- repro.py


def python_literal(text: str) -> str:
    """``text`` as a Python string literal, raw and triple-quoted when it can be (readable TVMScript)."""
    for quote in ("'''", '"""'):
        if quote not in text and not text.endswith("\\") and not text.endswith(quote[0]):
            return f"r{quote}{text}{quote}"
    return repr(text)


_REPRO_HEAD = '''#!/usr/bin/env python3
"""Reproducer saved by Relax Pipeline Studio: plain TVM calls, no app needed (see README.md).

{summary}

    python repro.py [--timeout S] [--inline]

The step runs in a child process (a crash or a hang is seen as such); --inline runs it here (for a debugger).
Exit codes: 1 the failure reproduced, 0 it did not, 2 the reproducer itself could not run.
"""

import os
import sys

{sys_path}


if __name__ == "__main__":
    drop_script_folders(__file__)  # a numpy.py or argparse.py planted next to this file is not imported

import argparse
import inspect
import json
import re
import subprocess

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
BASE_DIR = HERE
WORK_DIR = os.path.join(HERE, "tuning")
MARK = "RPS-REPRO-RESULT "
EXPECTED = {expected}
TARGET_JSON = {target}
PASS_CONTEXT = {pass_context}

# The module before the failing step (TVMScript; module.json holds it too when the text cannot be parsed back).
MODULE_TEXT = {module_text}
'''

_REPRO_BODY = '''

def load_module():
    """The module before the failing step."""
    import tvm

    path = os.path.join(HERE, "module.json")
    try:
        return tvm.script.from_source(MODULE_TEXT)
    except Exception:
        if not os.path.isfile(path):
            raise
    with open(path, encoding="utf-8") as f:
        return tvm.ir.load_json(f.read())


def apply_steps(mod):
    """Apply the failing step, built as an exported script builds it."""
    import tvm
    from tvm import relax  # noqa: F401 - the step's lines may use it

    with tvm.target.Target(TARGET_JSON), tvm.transform.PassContext(**PASS_CONTEXT):
{step_lines}
        pass
    return mod


def flatten(value):
    """Outputs of a VM call as numpy arrays."""
    if hasattr(value, "numpy"):
        return [value.numpy()]
    if isinstance(value, (int, float, bool, np.generic)):
        return [np.asarray(value)]
    return [a for item in value for a in flatten(item)]


def build_and_run(mod):
    """Compile (a module not yet lowered for the VM gets tvm.compile's default pipeline) and run the entry."""
    import tvm
    from tvm import relax

    lowered = any(isinstance(f, relax.Function) and ("vm.builtin." in f.script() or "R.vm.alloc" in f.script())
                  for _gv, f in mod.functions_items())
    target = tvm.target.Target(TARGET_JSON)
    ex = tvm.compile(mod, target=target, relax_pipeline=None if lowered else "default")
    kind = TARGET_JSON["kind"]
    dev = tvm.cpu(0) if kind in ("llvm", "c") else tvm.device(kind, 0)
    vm = relax.VirtualMachine(ex, dev)
    entry = EXPECTED["function"]
    return flatten(vm[entry](*entry_arguments(mod, entry, vm, dev)))


#: Parameters inputs.npz had no value for (added or shrunk by a reduction): fed seeded random values.
RANDOM = []


def entry_arguments(mod, entry, vm, dev):
    """The entry's arguments from inputs.npz by parameter name (the values the app ran with). A function
    lifted by relax.LiftTransformParams takes its weights packed: inputs.npz holds the weights its
    <entry>_transform_params takes, and that function runs first, as every build runs it. A parameter
    inputs.npz lacks, or holds with another shape, gets seeded random values (listed in RANDOM)."""
    import tvm

    data = np.load(os.path.join(HERE, "inputs.npz"))
    canon = {{re.sub(r"\\W", "_", k): k for k in data.files}}  # TVMScript writes "fc1.weight" as fc1_weight
    rng = np.random.default_rng(0)

    def value(p):
        name = p["name"] if p["name"] in data.files else canon.get(re.sub(r"\\W", "_", p["name"]))
        shape = concrete_shape(p, {{}})
        if name is not None and tuple(data[name].shape) == shape:
            return tvm.runtime.tensor(data[name].astype(p["dtype"], copy=False), dev)
        if p["name"] not in RANDOM:
            RANDOM.append(p["name"])
        dtype = p["dtype"]
        return tvm.runtime.tensor((rng.standard_normal(shape) if "float" in dtype else np.zeros(shape)).astype(dtype),
                                  dev)

    func = mod[entry]
    ptypes, n_in = param_types(func), input_count(func)
    args = [value(p) for p in ptypes[:n_in]]
    packed = []
    if entry + TRANSFORM_SUFFIX in relax_function_names(mod):
        transform = mod[entry + TRANSFORM_SUFFIX]
        out = vm[entry + TRANSFORM_SUFFIX]([value(p) for p in transform_param_types(transform, func)])
        packed = [out] if hasattr(out, "numpy") else list(out)
    for i, p in enumerate(ptypes[n_in:]):
        got = packed[i] if i < len(packed) and hasattr(packed[i], "numpy") else None
        same = got is not None and tuple(got.shape) == concrete_shape(p, {{}}) and str(got.dtype) == p["dtype"]
        args.append(got if same else value(p))
    return args


def compare(got, ref):
    """(passed, max |diff| / max |ref|) with the app's check: |got - ref| <= atol * max|ref| + rtol * |ref|."""
    if len(got) != len(ref):
        return False, float("inf")
    passed, worst = True, 0.0
    for a, b in zip(got, ref):
        if a.shape != b.shape:
            return False, float("inf")
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        diff = np.abs(a64 - b64)
        m_ref = float(np.abs(b64[np.isfinite(b64)]).max()) if b64.size else 0.0
        ok = bool(np.all(diff <= EXPECTED["atol"] * m_ref + EXPECTED["rtol"] * np.abs(b64)))
        passed &= ok and not np.isnan(diff).any()
        worst = max(worst, float(np.nanmax(diff)) / m_ref if m_ref > 0 else float(np.nanmax(diff)))
    return passed, worst


def attempt():
    """Run the failing step once in this process; what was seen, as a dict."""
    del RANDOM[:]
    try:
        mod = load_module()
    except Exception as exc:
        return {{"what": "setup", "line": error_line(exc)}}
    try:
        if EXPECTED["kind"] == "numeric":
            ref = build_and_run(mod)
            passed, ratio = compare(build_and_run(apply_steps(mod)), ref)
            return {{"what": "numeric", "failed": not passed, "ratio": ratio, "random": RANDOM}}
        after = apply_steps(mod)
        if EXPECTED["kind"] == "build" or EXPECTED.get("run_after"):
            build_and_run(after)
    except Exception as exc:
        return {{"what": "exception", "type": type(exc).__name__, "line": error_line(exc), "random": RANDOM}}
    return {{"what": "finished", "random": RANDOM}}


def in_child(timeout):
    """Run :func:`attempt` in a child process: a signal or a timeout is an observation too."""
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    try:
        proc = subprocess.run([sys.executable, *flags, os.path.abspath(__file__), "--child"],
                              stdout=subprocess.PIPE, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {{"what": "timeout", "seconds": timeout}}
    if proc.returncode < 0:
        return {{"what": "signal", "signal": -proc.returncode}}
    for line in reversed(proc.stdout.splitlines()):
        if line.startswith(MARK):
            return json.loads(line[len(MARK):])
    return {{"what": "setup", "line": f"the child process ended with exit code {{proc.returncode}} and said nothing"}}


def verdict(seen):
    """True when ``seen`` is the expected failure."""
    kind = EXPECTED["kind"]
    if kind == "crash":
        return seen["what"] == "signal" and seen["signal"] == EXPECTED["signal"]
    if kind == "hang":
        return seen["what"] == "timeout"
    if kind == "numeric":
        return seen["what"] == "numeric" and seen["failed"]
    if seen["what"] != "exception":
        return False
    if kind == "build" or not EXPECTED.get("line"):
        return True
    same_type = not EXPECTED.get("type") or seen["type"] == EXPECTED["type"] or EXPECTED["type"] in seen["line"]
    return same_type and seen["line"] == EXPECTED["line"]


def describe(seen):
    """One line for what was seen."""
    what = seen["what"]
    if what == "signal":
        return f"the process died with signal {{seen['signal']}}"
    if what == "timeout":
        return f"the step did not finish within {{seen['seconds']:g}} s"
    if what == "numeric":
        return f"max |diff|/max |ref| = {{seen['ratio']:.3g}} ({{'above' if seen['failed'] else 'within'}} tolerance)"
    if what == "exception":
        return seen["line"] if seen["line"].startswith(seen["type"]) else f"{{seen['type']}}: {{seen['line']}}"
    if what == "finished":
        return "the step finished without error"
    return f"the reproducer could not run: {{seen.get('line')}}"


def main(argv=None):
    parser = argparse.ArgumentParser(description="Reproduce the failure this folder was saved for.")
    parser.add_argument("--timeout", type=float, default=EXPECTED.get("timeout", 600.0),
                        help="seconds before the step counts as hanging")
    parser.add_argument("--inline", action="store_true", help="run in this process (no child)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(MARK + json.dumps(attempt()), flush=True)
        return 0
    seen = attempt() if args.inline else in_child(args.timeout)
    expected = {{k: v for k, v in EXPECTED.items() if k in ("kind", "type", "line", "signal", "timeout")}}
    if seen["what"] == "setup":
        print(f"error: {{describe(seen)}}", file=sys.stderr)
        return 2
    if seen.get("random"):
        print(f"note: inputs.npz has no value of {{', '.join(seen['random'])}}: seeded random values were fed")
    if verdict(seen):
        print(f"REPRODUCED: {{describe(seen)}}")
        return 1
    print(f"not reproduced: {{describe(seen)}}; expected {{json.dumps(expected)}}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''


def render_repro(spec: ReproSpec) -> str:
    """The source of ``repro.py`` for ``spec`` (compiled to check it; :class:`SyntaxError` when broken)."""
    helpers: list[str] = []
    functions: list[str] = []
    lines: list[str] = []
    for piece in spec.pieces:
        for helper in piece.get("helpers", []):
            if helper not in helpers:
                helpers.append(helper)
        functions.extend(piece.get("functions", []))
        lines.extend(piece.get("lines", []))
        lines.append("mod = pass_(mod)")
    summary = textwrap.fill(f"{spec.kind} at {step_words(spec.step_index, spec.pass_id)}: "
                            f"{spec.expected.get('line') or describe_expected(spec.expected)}", 100)
    head = _REPRO_HEAD.format(sys_path=scriptlib.module_source("sys_path", imports=False).rstrip("\n"),
                              summary=summary.replace('"""', "'''"), expected=repr(spec.expected),
                              target=repr(spec.target), pass_context=repr(spec.pass_context),
                              module_text=python_literal(spec.module_text))
    imports = sorted({m for p in spec.pieces for m in p.get("imports", []) if m not in ("tvm", "tvm.relax")})
    parts = [head]
    parts += [f"import {m}\n" for m in imports]
    parts.append("\n\n" + textwrap.dedent(inspect.getsource(scrub_paths)))
    parts.append("\n\n" + textwrap.dedent(inspect.getsource(exception_text)))
    parts.append("\n\n" + textwrap.dedent(inspect.getsource(error_line)))
    parts.append("\n\n" + scriptlib.script_source(("functions", "arguments")).rstrip("\n") + "\n")
    parts += ["\n\n" + h.rstrip("\n") + "\n" for h in helpers]
    parts += ["\n\n" + f.rstrip("\n") + "\n" for f in functions]
    parts.append(_REPRO_BODY.format(step_lines="\n".join("        " + ln for ln in lines)))
    source = "".join(parts)
    compile(source, "repro.py", "exec")
    return source


def describe_expected(expected: dict[str, Any]) -> str:
    """Words for an ``EXPECTED`` dict."""
    kind = expected.get("kind")
    if kind == KIND_CRASH:
        when = "when the module after the step is built and run" if expected.get("run_after") else "while the step runs"
        return f"the process dies with signal {expected.get('signal')} {when}"
    if kind == KIND_HANG:
        return f"the step does not finish within {expected.get('timeout')} s"
    if kind == KIND_NUMERIC:
        return (f"the outputs before and after the step differ beyond rtol {expected.get('rtol')}, "
                f"atol {expected.get('atol')} x max|ref|")
    if kind == KIND_BUILD:
        return "building or running the module after the step fails"
    line, name = str(expected.get("line") or ""), expected.get("type")
    return line if not name or line.startswith(str(name)) else f"{name}: {line}"


def inputs_note(sources: dict[str, str], lifted: bool = False) -> str:
    """README words on where the values of ``inputs.npz`` come from (``sources``: parameter name -> the
    ``source`` :func:`~pipeline_model.scriptlib.arguments.make_arguments` describes): the app's seeded inputs
    or a file, the model's weights, and plainly which values are seeded random ones; ``lifted``: the entry
    function was lifted by ``relax.LiftTransformParams``."""
    random = [name for name, source in sources.items() if source.startswith("random")]
    model = [name for name, source in sources.items() if source == "model"]
    files = [name for name, source in sources.items() if source == "file"]
    parts = ["`inputs.npz` holds the values the app ran the module with."]
    if lifted:
        parts.append("Its weights are the ones `<f>_transform_params` takes (not packed): `repro.py` runs it "
                     "first, as every build does, and feeds its results to the lifted function.")
    if model:
        parts.append(f"The model's weights: {', '.join(model)}.")
    if files:
        parts.append(f"From the user's input file: {', '.join(files)}.")
    if random:
        parts.append(f"Seeded random values, as the app made them (no file or model value): {', '.join(random)}.")
    return " ".join(parts)


def render_readme(spec: ReproSpec) -> str:
    """``README.md``: what failed, the exact error, TVM version and build flags, how to run it."""
    flags = "\n".join(f"| {k} | {scrub_paths(v)} |" for k, v in sorted(spec.build_flags.items()))
    error = scrub_paths(spec.error or describe_expected(spec.expected)).replace("```", "'''")
    files = ["- `repro.py`: the reproducer (the module before the step inlined as TVMScript, the step, the check)",
             "- `repro.json`: the same facts for tools (`main.py reduce`)"]
    if spec.has_module_json:
        files.append("- `module.json`: the module as `tvm.ir.save_json` (used when the TVMScript does not parse back)")
    if spec.has_inputs:
        files.append("- `inputs.npz`: the entry function's arguments (inputs and weights) by parameter name")
    note = f"\n{spec.note}\n" if spec.note else ""
    return f"""# Reproducer: {spec.kind} at {step_words(spec.step_index, spec.pass_id)}

Saved by Relax Pipeline Studio. Run `python repro.py` (add `--timeout S` for a hang, `--inline` for a
debugger): exit code 1 and `REPRODUCED: ...` when the failure shows again, 0 when it does not.

Expected: {describe_expected(spec.expected)}

Exact error:

```
{error}
```
{note}
| | |
| --- | --- |
| TVM | {spec.tvm_version} |
| Python | {spec.python_version} |
| target | `{json.dumps(spec.target)}` |
| PassContext | `{json.dumps(spec.pass_context)}` |
| entry function | `{spec.function}` |

Build flags (`tvm.support.libinfo()`):

| flag | value |
| --- | --- |
{flags}

Files:

{chr(10).join(files)}
"""


#: Every name a reproducer folder may hold (checked before one is written: none may be replaced unasked).
FOLDER_FILES = ("repro.py", "README.md", "repro.json", "module.json", "inputs.npz")


def write_folder(folder: str, files: dict[str, Union[str, bytes]], overwrite: bool = False) -> list[str]:
    """Write ``files`` (name -> text or bytes) into ``folder`` (created if missing) with
    :mod:`pipeline_model.safe_write`; returns the names written. Every name is checked before the first byte is
    written (:func:`pipeline_model.safe_write.check_new_files`): a link, FIFO or device is refused, an existing
    file too unless ``overwrite``."""
    from pipeline_model import safe_write

    safe_write.check_new_files(folder, list(files), "reproducer folder", overwrite=overwrite)
    safe_write.ensure_folder(folder, "reproducer folder")
    for name, data in files.items():
        path = os.path.join(folder, name)
        if isinstance(data, bytes):
            safe_write.write_bytes(path, data, "reproducer file", replace=overwrite)
        else:
            safe_write.write_text(path, data, "reproducer file", replace=overwrite)
    return sorted(files)


def spec_files(spec: ReproSpec, extra: Optional[dict[str, Union[str, bytes]]] = None) -> dict[str, Union[str, bytes]]:
    """The folder's files for ``spec``: ``repro.py``, ``README.md``, ``repro.json`` plus ``extra``."""
    files: dict[str, Union[str, bytes]] = {
        "repro.py": render_repro(spec),
        "README.md": render_readme(spec),
        "repro.json": json.dumps(spec.to_json(), indent=2) + "\n",
    }
    files.update(extra or {})
    return files


def read_spec(folder: str) -> ReproSpec:
    """The :class:`ReproSpec` of a reproducer folder (``repro.json`` and the module text of ``repro.py``), read
    safely before anything in it is trusted (:mod:`~pipeline_model.debugging.repro_folder`: regular files under a
    size cap, validated JSON); :class:`ReproducerFolderError` with one line naming the file otherwise."""
    data, text = repro_folder.read(folder, KINDS)
    return ReproSpec.from_json(data, text)


def read_description(folder: str) -> ReproSpec:
    """:func:`read_spec` without the module text (``repro.py`` is only checked to be a regular file under its
    cap, not read or parsed): what the GUI shows about a folder, quick enough for its thread."""
    return ReproSpec.from_json(repro_folder.describe(folder, KINDS))
