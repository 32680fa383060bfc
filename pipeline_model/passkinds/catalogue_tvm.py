"""Engine side of the pass catalogue: introspects TVM and builds ``tvm.transform.Pass`` objects.

:func:`build_catalogue` asks every registered pass kind (:mod:`pipeline_model.passkinds`) for its
specs, in ``catalogue_order``: the plain ``tvm.relax.transform`` constructors (signature + docstring
introspection, done by :func:`relax_spec`, with curated parameter forms where TVM needs a value without
a default), then the kinds that refine or add specs (FuseOpsByPattern, MetaSchedule, named pipelines,
backend stages, DLight, custom Python, and any plug-in kind). Each spec is tagged with its kind's name
and flags (``kind``, ``composite``, ``runs_tuning``). Constructors that cannot be built from plain
values are listed in :data:`EXCLUDED` with a reason.

:func:`make_pass` builds a pass from an id and parameters: the construction comes from the kind's
recipe (:func:`pipeline_model.passkinds.registry.recipe_for`, which the script exporter renders as source, so the
engine and exported scripts build passes the same way), built by the kind's ``build_pass`` hook.
"""

from __future__ import annotations

import inspect
import re
from typing import Any, Optional

import tvm
from tvm import relax

from pipeline_model import emit
from pipeline_model.catalogue import Catalogue, ParamSpec, PassSpec, relax_category, title_from_name
from pipeline_model.passkinds.context import PassBuildContext, PassConfigError
from pipeline_model.passkinds.registry import all_kinds, kind_for, recipe_for

__all__ = ["PassBuildContext", "PassConfigError", "build_catalogue", "catalogue", "make_pass", "recipe"]


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
    # (transposed convolutions kept NCHW: TVM legalizes them in NCHW only, converted the build failed)
    "ConvertLayout": {"desired_layouts": {"relax.nn.conv2d": ["NHWC", "OHWI"],
                                          "relax.nn.conv2d_transpose": ["NCHW", "IOHW"]}},
    "BindSymbolicVars": {"binding_map": {}},
}

#: Parameter forms overriding the introspected ones: pass name -> param name -> ParamSpec fields.
PARAM_OVERRIDES: dict[str, dict[str, dict[str, Any]]] = {
    "Gradient": {"func_name": {"kind": "function",
                               "doc": "The Relax function to differentiate (one of the model's functions)."}},
    "TopologicalSort": {
        "order": {"kind": "choice", "choices": ["depth-first", "breadth-first"]},
        "direction": {"kind": "choice", "choices": ["from-inputs", "from-outputs"]},
    },
    "ToMixedPrecision": {"out_dtype": {"kind": "choice", "choices": ["float32", "float16"]}},
    "ConvertLayout": {
        "desired_layouts": {
            "kind": "json",
            "doc": "Op name -> list of desired layouts (data layout, then kernel layout), e.g. "
            '{"relax.nn.conv2d": ["NHWC", "OHWI"]} (keep "relax.nn.conv2d_transpose": ["NCHW", "IOHW"]: TVM '
            "legalizes transposed convolutions in NCHW only).",
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


def relax_spec(name: str, obj: Any) -> tuple[Optional[PassSpec], str]:
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


def build_catalogue() -> Catalogue:
    """Build the full catalogue from the installed TVM and the registered pass kinds (see the module docstring)."""
    cat = Catalogue(meta={"tvm": tvm.__version__, "excluded": dict(EXCLUDED), "not_buildable": {}})
    for kind in sorted(all_kinds(), key=lambda k: k.catalogue_order):
        kind.add_specs(cat)
    for spec in cat.specs():
        owner = kind_for(spec.id)
        if owner is None:
            continue
        spec.kind = owner.name
        spec.composite = spec.composite or owner.is_composite(spec.id)
        spec.runs_tuning = owner.runs_tuning(spec.id)
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

def recipe(pass_id: str, params: dict[str, Any], step_number: Optional[int] = None, target: Any = None) -> emit.Expr:
    """Validate ``params`` (defaults on ``target``, a target dict) and return the construction expression of
    the pass (no TVM objects built)."""
    spec = catalogue().get(pass_id)
    if spec is None:
        raise PassConfigError(f"unknown pass {pass_id!r}")
    if not spec.available:
        raise PassConfigError(f"{pass_id} is not available: {spec.unavailable_reason}")
    cleaned, errors = catalogue().validate_params(pass_id, params, _target_dict(target))
    if errors:
        raise PassConfigError("; ".join(errors))
    try:
        return recipe_for(pass_id, cleaned, step_number=step_number)
    except emit.EmitError as exc:
        raise PassConfigError(f"{pass_id}: {exc}") from None


def _target_dict(target: Any) -> Any:
    """``target`` as the dict the catalogue's target defaults look at (a ``tvm.target.Target`` exported)."""
    if target is None or isinstance(target, dict):
        return target
    export = getattr(target, "export", None)
    return dict(export()) if callable(export) else None


def make_pass(pass_id: str, params: Optional[dict[str, Any]], ctx: Optional[PassBuildContext] = None) -> "tvm.transform.Pass":
    """Build the ``tvm.transform.Pass`` of catalogue entry ``pass_id`` with ``params``.

    Raises :class:`PassConfigError` with a clear message for an unknown or unavailable pass, bad
    parameters, untrusted or broken custom code, or a TVM error while constructing the pass.
    """
    ctx = ctx or PassBuildContext()
    expr = recipe(pass_id, params or {}, ctx.step_number, ctx.target)
    kind = kind_for(pass_id)
    if kind is None:  # pragma: no cover - recipe() already refused it
        raise PassConfigError(f"unknown pass {pass_id!r}")
    cleaned, _ = catalogue().validate_params(pass_id, params or {}, _target_dict(ctx.target))
    return kind.build_pass(pass_id, cleaned, expr, ctx)
