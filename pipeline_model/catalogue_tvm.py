"""Engine side of the pass catalogue: introspects TVM and builds ``tvm.transform.Pass`` objects.

:func:`build_catalogue` covers every constructor of ``tvm.relax.transform`` that can be built from
plain values (signature + docstring introspection, with curated parameter forms where TVM needs a value
without a default), the named pipelines of ``tvm.relax.pipeline``, the backend stage lists of
cpu_generic and cuda, DLight's ``ApplyDefaultSchedule``, the MetaSchedule passes and the custom Python
pass. Constructors that cannot be built from plain values are listed in :data:`EXCLUDED` with a reason.

:func:`make_pass` builds a pass from an id and parameters; the construction itself comes from
:func:`pipeline_model.emit.recipe_for`, which the script exporter renders as source, so the engine and
exported scripts build passes the same way.

Tuning: :data:`TUNING_HOOKS` maps a MetaSchedule pass id to a callable ``hook(params, ctx) -> Pass``;
when set, :func:`make_pass` uses it instead of the stock TVM construction (the MetaSchedule engineer
installs a CPU-working builder/runner this way). Parameters that are not TVM keyword arguments (cost
model, runner ...) are only read by such hooks.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import tvm
from tvm import relax

from pipeline_model import emit
from pipeline_model.catalogue import Catalogue, ParamSpec, PassSpec, relax_category, title_from_name


class PassConfigError(ValueError):
    """A pass cannot be built: bad parameters, unavailable pass, untrusted or broken custom code."""


@dataclass
class PassBuildContext:
    """What building a pass may need besides its parameters.

    ``target`` is a target dict (or a ``tvm.target.Target``); ``base_dir`` is the pipeline file's
    folder (relative pattern files are resolved against it); ``work_dir`` is the tuning folder used
    when a MetaSchedule step leaves ``work_dir`` empty; ``emit(event, data)`` sends an engine event
    (warnings, tuning progress); ``cancelled()`` says whether the run was cancelled;
    ``should_stop_tuning()`` says whether the client asked to end the tuning in flight early (a
    tuning step then ends as a successful step with what was measured, and the run goes on);
    ``step_number`` (1-based) names custom code in tracebacks (``<custom step N>``). Building a pass
    may fill ``report`` (read back into ``StepResult.report`` after the step): ``"dlight"`` (rule per
    PrimFunc), ``"fusion"`` (what FuseOpsByPattern fused), ``"tuning"`` / ``"apply_database"``.

    Passes are meant to be applied inside ``with target, tvm.transform.PassContext(opt_level=3)``
    (DLight needs the current target); exported scripts do exactly that.
    """

    target: Any = field(default_factory=lambda: {"kind": "llvm"})
    base_dir: Optional[str] = None
    trust_custom_code: bool = False
    work_dir: Optional[str] = None
    emit: Optional[Callable[[str, dict], None]] = None
    cancelled: Optional[Callable[[], bool]] = None
    step_number: Optional[int] = None
    should_stop_tuning: Optional[Callable[[], bool]] = None
    report: dict = field(default_factory=dict)

    def tvm_target(self) -> "tvm.target.Target":
        """The target as a ``tvm.target.Target``."""
        if isinstance(self.target, tvm.target.Target):
            return self.target
        return tvm.target.Target(dict(self.target))

    def send(self, event: str, data: dict) -> None:
        """Emit an engine event if an emitter is set."""
        if self.emit is not None:
            self.emit(event, data)


#: Hooks replacing the stock construction of MetaSchedule passes: pass id -> hook(params, ctx) -> Pass.
TUNING_HOOKS: dict[str, Callable[[dict, PassBuildContext], "tvm.transform.Pass"]] = {}

#: Public names of ``tvm.relax.transform`` deliberately not in the catalogue, with the reason.
EXCLUDED: dict[str, str] = {
    "FunctionPass": "base class of Python function passes, not a pass constructor (write one in a custom step)",
    "DataflowBlockPass": "base class of Python dataflow-block passes, not a pass constructor",
    "function_pass": "decorator for writing function passes in Python (use it in a custom step)",
    "dataflowblock_pass": "decorator for writing dataflow-block passes in Python (use it in a custom step)",
    "FusionPattern": "a pattern object consumed by FuseOpsByPattern, not a pass",
    "PatternCheckContext": "the argument of a pattern's check function, not a pass",
    "AlterOpImpl": "needs PrimFunc implementations and IndexMap/Callable buffer transforms (Python objects)",
    "AttachExternModules": "needs ExternModule objects (compiled external libraries)",
    "BindParams": "needs weight tensors (numpy / tvm.runtime.Tensor values), not plain values",
    "SplitCallTIRByPattern": "needs PrimFunc patterns and a codegen callback (Python objects)",
    "UpdateParamType": "needs a Python callback mapping each relax.Var to a new type",
    "UpdateVDevice": "needs a relax.VDevice object",
}

#: Constructors TVM keeps only as deprecated aliases.
DEPRECATED: dict[str, str] = {"VMBuiltinLower": "deprecated alias of LowerRuntimeBuiltin (TVM warns when it is built)"}

#: Values for TVM parameters that have no default (so that ``params: {}`` is always valid).
REQUIRED_DEFAULTS: dict[str, dict[str, Any]] = {
    "Gradient": {"func_name": "main"},
    "IPCAllReduceRewrite": {"allreduce_strategy": 0},
    "ConvertLayout": {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"]}},
    "BindSymbolicVars": {"binding_map": {}},
}

#: Parameter forms overriding the introspected ones: pass name -> param name -> ParamSpec fields.
PARAM_OVERRIDES: dict[str, dict[str, dict[str, Any]]] = {
    "TopologicalSort": {
        "order": {"kind": "choice", "choices": ["depth-first", "breadth-first"]},
        "direction": {"kind": "choice", "choices": ["from-inputs", "from-outputs"]},
    },
    "ToMixedPrecision": {"out_dtype": {"kind": "choice", "choices": ["float32", "float16"]}},
    "ConvertLayout": {
        "desired_layouts": {
            "kind": "json",
            "doc": "Op name -> list of desired layouts (data layout, then kernel layout), e.g. "
            '{"relax.nn.conv2d": ["NHWC", "OHWI"]}.',
        }
    },
    "BindSymbolicVars": {
        "binding_map": {"kind": "json", "doc": "Symbolic variable name -> integer value, e.g. {\"n\": 1}."}
    },
    "LiftTransformParams": {
        "shared_transform": {
            "kind": "json",
            "doc": "false: one transform function per function with 'num_input'; true: one shared "
            "function; a list of function names: one function shared by those.",
        }
    },
    "RunCodegen": {"target_options": {"kind": "json", "nullable": True}},
}

#: Words in a type annotation / docstring type that mean "needs a Python object".
_OBJECT_TYPES = (
    "Callable", "callable", "Var", "Expr", "PrimFunc", "Tensor", "ndarray", "VDevice", "ExternModule",
    "IndexMap", "FusionPattern", "DFPattern", "BlockBuilder", "Type",
)

_DLIGHT_DEFAULT = ["gpu.Matmul", "gpu.GEMV", "gpu.Reduction", "gpu.GeneralReduction", "gpu.Fallback"]

CUSTOM_TEMPLATE = '''import tvm
from tvm import relax


def transform(mod: tvm.IRModule) -> tvm.IRModule:
    """Return the transformed module (this template returns it unchanged)."""
    return mod
'''


# ---------------------------------------------------------------------------------------------
# docstring helpers


def first_paragraph(doc: Optional[str]) -> str:
    """The first paragraph of a docstring, joined into one line."""
    text = inspect.cleandoc(doc or "").strip()
    para = text.split("\n\n", 1)[0]
    return " ".join(line.strip() for line in para.splitlines()).strip()


def docstring_params(doc: Optional[str]) -> dict[str, tuple[str, str]]:
    """Parse a numpy-style ``Parameters`` section: name -> (type text, description)."""
    text = inspect.cleandoc(doc or "")
    m = re.search(r"^Parameters\s*\n-+\s*\n(.*?)(?:^\S[^\n]*\n-+\s*$|\Z)", text, re.S | re.M)
    if not m:
        return {}
    out: dict[str, tuple[str, str]] = {}
    name = None
    for line in m.group(1).splitlines():
        head = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", line)
        if head and not line.startswith(" "):
            name = head.group(1)
            out[name] = (head.group(2).strip(), "")
        elif name and line.strip():
            typ, desc = out[name]
            out[name] = (typ, (desc + " " + line.strip()).strip())
    return out


def _annotation_text(annotation: Any) -> str:
    if annotation is inspect.Parameter.empty:
        return ""
    if isinstance(annotation, str):
        return annotation
    return str(getattr(annotation, "__name__", annotation)) if isinstance(annotation, type) else str(annotation)


def _param_kind(annotation: str, doc_type: str, default: Any) -> Optional[tuple[str, bool]]:
    """(kind, nullable) of a parameter, or ``None`` if it needs a Python object."""
    text = f"{annotation} {doc_type}"
    if any(re.search(rf"\b{w}\b", text) for w in _OBJECT_TYPES):
        return None
    nullable = default is None or "None" in annotation or "Optional" in text
    low = text.lower()
    if isinstance(default, bool) or (default is None and re.search(r"\bbool\b", low) and "list" not in low):
        return "bool", nullable
    if isinstance(default, int) or (default is None and re.search(r"\bint\b", low)):
        return "int", nullable
    if isinstance(default, float) or (default is None and re.search(r"\bfloat\b", low)):
        return "float", nullable
    if re.search(r"list\[str\]|list of str", low):
        return "str_list", nullable
    if isinstance(default, str) or re.search(r"\bstr\b", low) and "dict" not in low:
        return "str", nullable
    if "dict" in low:
        return "json", nullable
    return None


def _constructor_signature(obj: Any) -> inspect.Signature:
    if inspect.isclass(obj):
        sig = inspect.signature(obj.__init__)
        params = list(sig.parameters.values())[1:]
        return sig.replace(parameters=params)
    return inspect.signature(obj)


def _relax_spec(name: str, obj: Any) -> tuple[Optional[PassSpec], str]:
    """Introspect one ``tvm.relax.transform`` constructor; returns (spec, reason if not buildable)."""
    doc = inspect.getdoc(obj) or ""
    doc_params = docstring_params(doc)
    try:
        sig = _constructor_signature(obj)
    except (TypeError, ValueError) as exc:
        return None, f"no inspectable signature ({exc})"
    params: list[ParamSpec] = []
    omitted: dict[str, str] = {}
    overrides = PARAM_OVERRIDES.get(name, {})
    required_defaults = REQUIRED_DEFAULTS.get(name, {})
    for p in sig.parameters.values():
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        has_default = p.default is not inspect.Parameter.empty
        default = p.default if has_default else required_defaults.get(p.name, inspect.Parameter.empty)
        doc_type, doc_text = doc_params.get(p.name, ("", ""))
        over = overrides.get(p.name, {})
        if "kind" in over:
            kind, nullable = over["kind"], bool(over.get("nullable", default is None))
        else:
            found = _param_kind(_annotation_text(p.annotation), doc_type, None if not has_default else p.default)
            if found is None:
                if has_default:
                    omitted[p.name] = f"needs a Python object ({doc_type or _annotation_text(p.annotation)})"
                    continue
                return None, f"parameter '{p.name}' needs a Python object"
            kind, nullable = found
        if default is inspect.Parameter.empty:
            return None, f"parameter '{p.name}' has no default and no curated value"
        params.append(
            ParamSpec(
                name=p.name,
                kind=kind,
                default=default,
                doc=over.get("doc") or doc_text,
                choices=over.get("choices"),
                nullable=nullable,
            )
        )
    spec = PassSpec(
        warning=DEPRECATED.get(name, ""),
        id=f"relax.{name}",
        title=title_from_name(name),
        category=relax_category(name),
        doc=first_paragraph(doc) or name,
        params=params,
        omitted_params=omitted,
        tvm_name=f"tvm.relax.transform.{name}",
    )
    return spec, ""


def relax_constructor_names() -> list[str]:
    """Public, non-module names of ``tvm.relax.transform`` (what the catalogue must account for)."""
    return sorted(
        n for n in dir(relax.transform) if not n.startswith("_") and not inspect.ismodule(getattr(relax.transform, n))
    )


# ---------------------------------------------------------------------------------------------
# curated specs


def pattern_table_status() -> dict[str, dict[str, Any]]:
    """Pattern tables: prefix -> {"registered": bool, "patterns": n, "codegen": bool, "reason": str}
    (from :func:`pipeline_model.patterns_tvm.pattern_tables`, the one place that probes them)."""
    from pipeline_model import patterns_tvm

    status: dict[str, dict[str, Any]] = {}
    for prefix, entry in patterns_tvm.pattern_tables().items():
        registered = entry["patterns"] > 0
        status[prefix] = {
            "registered": registered,
            "patterns": entry["patterns"],
            "codegen": entry["codegen"],
            "reason": "" if registered else entry["message"],
        }
    return status


def _fuse_by_pattern_spec(base: Optional[PassSpec]) -> PassSpec:
    status = pattern_table_status()
    prefixes = [p for p, s in status.items() if s["registered"]]
    notes: dict[str, str] = {}
    for prefix, s in status.items():
        if not s["registered"]:
            notes[prefix] = f"unavailable: {s['reason']}"
        elif not s["codegen"]:
            notes[prefix] = (
                f"{s['patterns']} patterns; relax.ext.{prefix} codegen is not in this TVM build "
                "(annotate_codegen=True marks functions that RunCodegen cannot compile)"
            )
        else:
            notes[prefix] = f"{s['patterns']} patterns; codegen relax.ext.{prefix} available"
    missing = [p for p in prefixes if not status[p]["codegen"]]
    default_prefix = "cublas" if "cublas" in prefixes else (prefixes[0] if prefixes else "")
    params = [
        ParamSpec("pattern_source", "choice", "table", "Where the patterns come from: a registered pattern "
                  "table (by prefix) or a Python file defining 'patterns'.", choices=["table", "file"]),
        ParamSpec("table_prefix", "choice", default_prefix, "Registered pattern table (pattern name prefix).",
                  choices=prefixes, choice_notes=notes),
        ParamSpec("pattern_file", "file", "", "A .py file defining 'patterns': a list of "
                  "tvm.relax.transform.FusionPattern or (name, pattern[, check]) tuples built with tvm.relax.dpl "
                  "(running it needs trust, like custom code)."),
        ParamSpec("bind_constants", "bool", True, "Whether to keep bound constants in the grouped function."),
        ParamSpec("annotate_codegen", "bool", False, "Wrap composite functions in outer functions annotated "
                  "with the codegen name (the pattern prefix), for RunCodegen."),
        ParamSpec("entry_functions", "str_list", None, "Functions to start from (empty: all externally "
                  "visible ones).", nullable=True),
    ]
    warning = ""
    if missing:
        warning = "codegen not in this TVM build for: " + ", ".join(f"relax.ext.{p}" for p in missing) + \
            " (fusing works; with annotate_codegen, RunCodegen for those tables fails — the run says so " \
            "before it starts)"
    return PassSpec(
        id="relax.FuseOpsByPattern",
        title="Fuse Ops By Pattern",
        category="Fusion",
        doc=base.doc if base else first_paragraph(inspect.getdoc(relax.transform.FuseOpsByPattern)),
        params=params,
        available=bool(prefixes) or True,
        warning=warning,
        tvm_name="tvm.relax.transform.FuseOpsByPattern",
    )


def _tuning_spec(base: Optional[PassSpec], pass_id: str) -> PassSpec:
    try:
        from pipeline_model.tuning import TUNING_PARAMS

        params = [ParamSpec.from_json(d) for d in TUNING_PARAMS[pass_id]]
    except (ImportError, KeyError):
        params = []
        if pass_id != "relax.MetaScheduleApplyDatabase":
            params.append(ParamSpec("max_trials_global", "int", 64, "Trials in total."))
        params.append(ParamSpec("work_dir", "str", "", "Tuning work directory (empty: the session's default)."))
    for p in params:
        if p.name == "max_trials_per_task" and p.default == 0:
            p.doc = p.doc or "0: no limit"
    name = pass_id.split(".", 1)[1]
    spec = base or PassSpec(
        id=pass_id,
        title=title_from_name(name),
        category="",
        doc=first_paragraph(inspect.getdoc(getattr(relax.transform, name))),
        tvm_name=f"tvm.relax.transform.{name}",
    )
    spec.params = params
    spec.category = "Tuning (MetaSchedule)"
    spec.omitted_params = {}
    if pass_id == "relax.MetaScheduleTuneIRMod":
        spec.omitted_params = {"params": "weights are function inputs here; tuned with params={}"}
    return spec


def _pipeline_specs() -> list[PassSpec]:
    from tvm.relax import pipeline as rp

    docs = {
        "zero": "LegalizeOps, AnnotateTIROpPattern, FoldConstant, FuseOps, FuseTIR (and MetaScheduleApplyDatabase "
        "when a tuning database is current).",
        "default": "Alias of default_build.",
    }
    specs = []
    for name, func in rp.PIPELINE_MAP.items():
        if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", name):
            continue
        params: list[ParamSpec] = []
        doc_params = docstring_params(inspect.getdoc(func))
        if name == "static_shape_tuning":
            params = [
                ParamSpec("total_trials", "int", 64, "Total number of tuning trials (0: only apply the database)."),
                ParamSpec("work_dir", "str", "", "Tuning work directory (empty: the session's default)."),
                ParamSpec("cpu_weight_prepack", "bool", False, doc_params.get("cpu_weight_prepack", ("", ""))[1]),
                ParamSpec("max_trials_per_task", "int", None, "Trials per task at most (empty: total_trials).",
                          nullable=True),
            ]
        else:
            for p in inspect.signature(func).parameters.values():
                if isinstance(p.default, bool):
                    params.append(ParamSpec(p.name, "bool", p.default, doc_params.get(p.name, ("", ""))[1]))
        doc = docs.get(name) or first_paragraph(inspect.getdoc(func)) or name
        specs.append(
            PassSpec(
                id=f"pipeline.{name}",
                title=f"Pipeline: {name}",
                category="Named pipelines",
                doc=f"tvm.relax.get_pipeline({name!r}): {doc}",
                params=params,
                composite=True,
                tvm_name="tvm.relax.get_pipeline",
            )
        )
    return specs


def _stage_specs() -> list[PassSpec]:
    specs = []
    for backend in emit.STAGE_BACKENDS:
        module_name = f"tvm.relax.backend.{backend}.pipeline"
        try:
            module = importlib.import_module(module_name)
            reason = ""
        except Exception as exc:  # noqa: BLE001
            module, reason = None, f"importing {module_name} failed: {exc}"
        for fn in emit.STAGE_FUNCTIONS:
            func = getattr(module, fn, None) if module else None
            label = fn.replace("_passes", "").replace("_", " ")
            why = reason or ("" if func else f"{module_name} has no {fn}")
            specs.append(
                PassSpec(
                    id=f"stage.{backend}.{fn}",
                    title=f"{'CUDA' if backend == 'cuda' else 'CPU'}: {label} passes",
                    category="Backend stages",
                    doc=f"The {label} stage of the {backend} default build pipeline "
                    f"({module_name}.{fn}(target)) as one step.",
                    composite=True,
                    available=not why,
                    unavailable_reason=why,
                    warning="needs a CUDA target (DLight scheduling uses the current target)"
                    if backend == "cuda" and fn == "legalize_passes" else "",
                    tvm_name=f"{module_name}.{fn}",
                )
            )
    return specs


def dlight_rule_names() -> list[str]:
    """DLight rule names ``"gpu.Matmul"`` ... found in ``tvm.s_tir.dlight.gpu`` / ``.cpu``."""
    from tvm.s_tir import dlight as dl

    names = []
    for group, module in (("gpu", dl.gpu), ("cpu", dl.cpu)):
        for attr, value in vars(module).items():
            if inspect.isclass(value) and issubclass(value, dl.ScheduleRule) and not attr.startswith("_"):
                names.append(f"{group}.{attr}")
    return names


def _dlight_spec() -> PassSpec:
    from tvm.s_tir import dlight as dl

    rules = dlight_rule_names()
    return PassSpec(
        id="dlight.ApplyDefaultSchedule",
        title="DLight: Apply Default Schedule",
        category="Scheduling (DLight)",
        doc=first_paragraph(inspect.getdoc(dl.ApplyDefaultSchedule))
        + " Rules are tried in order on each PrimFunc; the first that applies wins. gpu rules need a GPU target.",
        params=[
            ParamSpec("rules", "rule_list", [r for r in _DLIGHT_DEFAULT if r in rules],
                      "Ordered DLight rules.", choices=rules)
        ],
        tvm_name="tvm.s_tir.dlight.ApplyDefaultSchedule",
    )


def _custom_spec() -> PassSpec:
    return PassSpec(
        id="custom.python",
        title="Custom Python pass",
        category="Custom",
        doc="A pass written in Python: the source defines a tvm.transform.Pass, a class decorated with "
        "@tvm.transform.module_pass / @relax.transform.function_pass, or a function taking an IRModule and "
        "returning one (the last one defined is used). Runs only when custom code is trusted.",
        params=[ParamSpec("source", "code", CUSTOM_TEMPLATE, "Python source of the pass.")],
        needs_trust=True,
        tvm_name="tvm.transform.module_pass",
    )


def build_catalogue() -> Catalogue:
    """Build the full catalogue from the installed TVM (see the module docstring)."""
    cat = Catalogue(meta={"tvm": tvm.__version__, "excluded": dict(EXCLUDED), "not_buildable": {}})
    for name in relax_constructor_names():
        if name in EXCLUDED:
            continue
        spec, reason = _relax_spec(name, getattr(relax.transform, name))
        if spec is None:
            cat.meta["not_buildable"][name] = reason
            continue
        cat.add(spec)
    cat.add(_fuse_by_pattern_spec(cat.get("relax.FuseOpsByPattern")))
    for pass_id in emit.WORK_DIR_PASSES:
        cat.add(_tuning_spec(cat.get(pass_id), pass_id))
    for curated in ("FuseOpsByPattern", *(p.split(".", 1)[1] for p in emit.WORK_DIR_PASSES)):
        cat.meta["not_buildable"].pop(curated, None)
    for spec in _pipeline_specs() + _stage_specs():
        cat.add(spec)
    cat.add(_dlight_spec())
    cat.add(_custom_spec())
    return cat


_CATALOGUE: Optional[Catalogue] = None


def catalogue() -> Catalogue:
    """The catalogue, built once per process."""
    global _CATALOGUE
    if _CATALOGUE is None:
        _CATALOGUE = build_catalogue()
    return _CATALOGUE


# ---------------------------------------------------------------------------------------------
# building passes

def recipe(pass_id: str, params: dict[str, Any], step_number: Optional[int] = None) -> emit.Expr:
    """Validate ``params`` and return the construction expression of the pass (no TVM objects built)."""
    spec = catalogue().get(pass_id)
    if spec is None:
        raise PassConfigError(f"unknown pass {pass_id!r}")
    if not spec.available:
        raise PassConfigError(f"{pass_id} is not available: {spec.unavailable_reason}")
    cleaned, errors = catalogue().validate_params(pass_id, params)
    if errors:
        raise PassConfigError("; ".join(errors))
    try:
        return emit.recipe_for(pass_id, cleaned, step_number=step_number)
    except emit.EmitError as exc:
        raise PassConfigError(f"{pass_id}: {exc}") from None


def _evaluate(expr: Any, ctx: PassBuildContext, pass_id: str) -> Any:
    if isinstance(expr, emit.Lit):
        return expr.value
    if isinstance(expr, emit.Ref):
        if expr.name == "target":
            return ctx.tvm_target()
        if expr.name == "work_dir":
            return ctx.work_dir or os.path.abspath("tuning_logs")
        if expr.name == "base_dir":
            return ctx.base_dir
        raise PassConfigError(f"{pass_id}: unknown reference {expr.name}")
    if isinstance(expr, emit.ListOf):
        return [_evaluate(e, ctx, pass_id) for e in expr.items]
    if isinstance(expr, emit.PatternFile):
        if not ctx.trust_custom_code:
            raise PassConfigError(f"{pass_id}: a pattern file is Python code; it runs only when custom code is trusted")
        if not expr.path:
            raise PassConfigError(f"{pass_id}: pattern_source is 'file' but no pattern_file is given")
        try:
            return emit.load_pattern_file(expr.path, ctx.base_dir)
        except Exception as exc:  # noqa: BLE001 - user code: report, do not crash
            raise PassConfigError(f"{pass_id}: pattern file {expr.path}: {type(exc).__name__}: {exc}") from exc
    if isinstance(expr, emit.CustomCode):
        from pipeline_model.custom_pass_tvm import make_custom_pass

        return make_custom_pass(expr.source, expr.label, trusted=ctx.trust_custom_code)
    if isinstance(expr, emit.Call):
        for module in expr.imports:
            importlib.import_module(module)
        module = importlib.import_module(expr.module)
        func = getattr(module, expr.attr)
        args = [_evaluate(a, ctx, pass_id) for a in expr.args]
        kwargs = {k: _evaluate(v, ctx, pass_id) for k, v in expr.kwargs}
        return func(*args, **kwargs)
    raise PassConfigError(f"{pass_id}: cannot evaluate {type(expr).__name__}")


def make_pass(pass_id: str, params: Optional[dict[str, Any]], ctx: Optional[PassBuildContext] = None) -> "tvm.transform.Pass":
    """Build the ``tvm.transform.Pass`` of catalogue entry ``pass_id`` with ``params``.

    Raises :class:`PassConfigError` with a clear message for an unknown or unavailable pass, bad
    parameters, untrusted or broken custom code, or a TVM error while constructing the pass.
    """
    ctx = ctx or PassBuildContext()
    expr = recipe(pass_id, params or {}, ctx.step_number)
    hook = TUNING_HOOKS.get(pass_id)
    if hook is not None:
        cleaned, _ = catalogue().validate_params(pass_id, params or {})
        return hook(cleaned, ctx)
    if pass_id == "relax.FuseOpsByPattern":
        cleaned, _ = catalogue().validate_params(pass_id, params or {})
        fatal, warning = fuse_by_pattern_problems(cleaned)
        if fatal:
            raise PassConfigError(fatal)
        if warning:
            ctx.report.setdefault("warnings", []).append(warning)  # the runner warned before the run
    try:
        with ctx.tvm_target():
            result = _evaluate(expr, ctx, pass_id)
    except PassConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - TVM construction errors become config errors
        raise PassConfigError(f"{pass_id}: cannot build the pass: {type(exc).__name__}: {exc}") from exc
    if pass_id == "dlight.ApplyDefaultSchedule" and isinstance(result, tvm.transform.Pass):
        # The rules the shared recipe built, applied by the reporting pass (same algorithm as
        # ApplyDefaultSchedule) so the step reports which PrimFunc got which rule.
        from pipeline_model import dlight_report_tvm

        result = dlight_report_tvm.reporting_step(list(result.rules), ctx)
    if not isinstance(result, tvm.transform.Pass):
        raise PassConfigError(f"{pass_id}: construction returned {type(result).__name__}, not a Pass")
    return result


def fuse_by_pattern_problems(params: dict[str, Any]) -> tuple[Optional[str], Optional[str]]:
    """``(fatal, warning)`` for a ``relax.FuseOpsByPattern`` step's (validated) parameters.

    Fatal: the step cannot work (a table with no patterns in this TVM build, no pattern file given).
    Warning: it fuses, but ``annotate_codegen`` asks for a codegen ``relax.ext.<prefix>`` this TVM
    build does not have, so a later ``RunCodegen`` (or the build) fails. Both come from
    :func:`pipeline_model.patterns_tvm.preflight`, as plain sentences.
    """
    from pipeline_model import patterns_tvm

    message = patterns_tvm.preflight(params)
    if not message:
        return None, None
    if params.get("pattern_source", "table") == "table" and params.get("annotate_codegen"):
        entry = patterns_tvm.pattern_tables().get(str(params.get("table_prefix") or ""))
        if entry is not None and entry["patterns"] > 0 and not entry["codegen"]:
            return None, message
    return message, None


def step_preflight(pass_id: str, params: dict[str, Any], mod: Any) -> Optional[str]:
    """A plain message when step ``pass_id`` cannot work on ``mod`` (checked just before it runs), else
    ``None``. ``relax.RunCodegen`` needs the codegen ``relax.ext.<name>`` of every function marked
    ``Codegen`` (by ``FuseOpsByPattern`` with ``annotate_codegen``); TVM would fail with an internal
    check instead."""
    if pass_id != "relax.RunCodegen" or mod is None:
        return None
    missing: dict[str, list[str]] = {}
    for gv, func in mod.functions_items():
        attrs = getattr(func, "attrs", None)
        if attrs is None or "Codegen" not in attrs:
            continue
        name = str(attrs["Codegen"])
        if tvm.get_global_func(f"relax.ext.{name}", True) is None:
            missing.setdefault(name, []).append(gv.name_hint)
    if not missing:
        return None
    parts = []
    for name, funcs in sorted(missing.items()):
        shown = ", ".join(funcs[:3]) + (f" and {len(funcs) - 3} more" if len(funcs) > 3 else "")
        parts.append(f"this TVM build has no relax.ext.{name} codegen, so the {len(funcs)} function(s) "
                     f"marked for '{name}' ({shown}) cannot be offloaded")
    return ("; ".join(parts) + ". TVM must be built with that backend (e.g. USE_"
            + sorted(missing)[0].upper() + "=ON); otherwise fuse with annotate_codegen = false.")


def after_step_report(pass_id: str, before: Any, after: Any, report: dict[str, Any]) -> None:
    """Add what a step did to its ``report`` once it ran (``before``/``after`` are the modules):
    ``relax.FuseOpsByPattern`` gets ``report["fusion"]`` — which bindings (by the graph's var names)
    went into which composite/offloaded function (:func:`pipeline_model.patterns_tvm.fusion_report`)."""
    if pass_id != "relax.FuseOpsByPattern" or after is None:
        return
    from pipeline_model import patterns_tvm

    try:
        report["fusion"] = patterns_tvm.fusion_report(before, after)
    except Exception as exc:  # noqa: BLE001 - the report is extra; the fused module stands
        report["fusion"] = {"groups": [], "fused_nodes": {}, "error": f"{type(exc).__name__}: {exc}"}
