"""The pass catalogue as plain data: parameter specs, pass specs, and the catalogue itself.

This module is TVM-free: the GUI and the CLI use it on the JSON the engine sends (see
:func:`pipeline_model.passkinds.catalogue_tvm.build_catalogue`, which fills it by introspecting TVM).

JSON shape of one :class:`PassSpec` (``Catalogue.to_json()`` is ``{"version": 1, "categories": [...],
"passes": [PassSpec, ...]}``)::

    {"id": "relax.FuseOps", "title": "Fuse Ops", "category": "Fusion", "doc": "...",
     "params": [{"name": "fuse_opt_level", "kind": "int", "default": -1, "doc": "...",
                 "choices": null, "required": false, "nullable": false, "choice_notes": {}}],
     "available": true, "unavailable_reason": "", "composite": false, "needs_trust": false,
     "warning": "", "omitted_params": {"layout_cb": "needs a Python object (Callable)"},
     "tvm_name": "tvm.relax.transform.FuseOps", "kind": "relax", "runs_tuning": false}

``kind`` names the pass kind (:mod:`pipeline_model.passkinds`) that builds the pass; ``composite``
says the step runs several passes; ``runs_tuning`` says the step tunes (the GUI shows its tuning panel).

Parameter kinds: ``bool``, ``int``, ``float``, ``str``, ``choice`` (one of ``choices``), ``str_list``,
``rule_list`` (ordered list, each item one of ``choices``), ``file`` (a path; relative paths are
relative to the pipeline file), ``code`` (Python source), ``json`` (any JSON value). A ``nullable``
parameter also accepts ``None``, meaning "leave it to TVM's default" (the argument is not passed).
``choice_notes`` maps a choice to a remark the UI should show next to it (e.g. a pattern table whose
codegen is missing from this TVM build). ``warning`` on a pass is a remark that does not make it
unavailable; ``omitted_params`` lists TVM arguments the app cannot set (they keep TVM's default).

``target_defaults`` maps a target class (``"cpu"`` or ``"gpu"``, :func:`target_class`) to the default a
parameter takes on such a target (DLight's rules: ``gpu.*`` rules on a GPU, CPU rules on ``llvm``). The
catalogue is the one source of every step default: the form shows, the engine runs and the exporter writes
:meth:`ParamSpec.default_for` the pipeline's target (a step keeps only the values the user set).
"""

from __future__ import annotations

import copy
import json
import math
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Optional

from pipeline_model.targets import is_gpu_target

PARAM_KINDS = ("bool", "int", "float", "str", "choice", "str_list", "rule_list", "file", "code", "json")

#: Category display order; a category not listed here sorts after these, alphabetically.
CATEGORY_ORDER = (
    "Lowering",
    "Fusion",
    "Scheduling (DLight)",
    "Tuning (MetaSchedule)",
    "Named pipelines",
    "Backend stages",
    "Optimization",
    "Layout & precision",
    "Memory & runtime",
    "Analysis & utility",
    "Custom",
)

CATALOGUE_JSON_VERSION = 1


@dataclass
class ParamSpec:
    """One typed parameter of a pass (the name is TVM's keyword-argument name)."""

    name: str
    kind: str
    default: Any
    doc: str = ""
    choices: Optional[list[Any]] = None
    required: bool = False
    nullable: bool = False
    choice_notes: dict[str, str] = field(default_factory=dict)
    target_defaults: dict[str, Any] = field(default_factory=dict)

    def default_for(self, target: Any = None) -> Any:
        """The default on ``target`` (a target dict; ``None``: the target-independent ``default``)."""
        if target is not None and self.target_defaults:
            found = self.target_defaults.get(target_class(target))
            if found is not None:
                return copy.deepcopy(found)
        return copy.deepcopy(self.default)

    def to_json(self) -> dict[str, Any]:
        """The parameter spec as a JSON-ready dict."""
        return copy.deepcopy(asdict(self))

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ParamSpec":
        """Rebuild a parameter spec from :meth:`to_json` output."""
        return cls(
            name=str(data["name"]),
            kind=str(data["kind"]),
            default=copy.deepcopy(data.get("default")),
            doc=str(data.get("doc") or ""),
            choices=copy.deepcopy(data.get("choices")),
            required=bool(data.get("required", False)),
            nullable=bool(data.get("nullable", False)),
            choice_notes=dict(data.get("choice_notes") or {}),
            target_defaults=copy.deepcopy(dict(data.get("target_defaults") or {})),
        )


@dataclass
class PassSpec:
    """A pass the user can put in a pipeline: id, labels, doc, typed parameters, availability."""

    id: str
    title: str
    category: str
    doc: str
    params: list[ParamSpec] = field(default_factory=list)
    available: bool = True
    unavailable_reason: str = ""
    composite: bool = False
    needs_trust: bool = False
    warning: str = ""
    omitted_params: dict[str, str] = field(default_factory=dict)
    tvm_name: str = ""
    kind: str = ""
    runs_tuning: bool = False

    def param(self, name: str) -> Optional[ParamSpec]:
        """The parameter called ``name``, or ``None``."""
        for p in self.params:
            if p.name == name:
                return p
        return None

    def defaults(self, target: Any = None) -> dict[str, Any]:
        """Default values of all parameters (on ``target``, see :meth:`ParamSpec.default_for`)."""
        return {p.name: p.default_for(target) for p in self.params}

    def for_target(self, target: Any) -> "PassSpec":
        """A copy whose parameter defaults are those on ``target`` (what a form shows for a step)."""
        spec = copy.deepcopy(self)
        for p in spec.params:
            p.default = p.default_for(target)
        return spec

    def to_json(self) -> dict[str, Any]:
        """The pass spec as a JSON-ready dict (see the module docstring for its shape)."""
        data = copy.deepcopy(asdict(self))
        data["params"] = [p.to_json() for p in self.params]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "PassSpec":
        """Rebuild a pass spec from :meth:`to_json` output."""
        return cls(
            id=str(data["id"]),
            title=str(data.get("title") or data["id"]),
            category=str(data.get("category") or "Optimization"),
            doc=str(data.get("doc") or ""),
            params=[ParamSpec.from_json(p) for p in data.get("params") or []],
            available=bool(data.get("available", True)),
            unavailable_reason=str(data.get("unavailable_reason") or ""),
            composite=bool(data.get("composite", False)),
            needs_trust=bool(data.get("needs_trust", False)),
            warning=str(data.get("warning") or ""),
            omitted_params=dict(data.get("omitted_params") or {}),
            tvm_name=str(data.get("tvm_name") or ""),
            kind=str(data.get("kind") or ""),
            runs_tuning=bool(data.get("runs_tuning", False)),
        )


def _category_key(name: str) -> tuple[int, str]:
    try:
        return (CATEGORY_ORDER.index(name), name)
    except ValueError:
        return (len(CATEGORY_ORDER), name)


def _is_json_plain(value: Any) -> bool:
    if value is None or isinstance(value, (bool, int, str)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json_plain(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json_plain(v) for k, v in value.items())
    return False


#: Parameter kinds whose value names a Relax function of the model (the GUI offers the module's functions, and a
#: step added to a model without the default function gets the function that runs).
FUNCTION_KIND = "function"


def preferred_function(names: list[str], default: Any) -> Any:
    """The value a ``function`` parameter gets on a model whose Relax functions are ``names``: ``default`` when the
    model has it (or nothing is known), else ``main``, ``forward`` or the only/first function — what runs."""
    if not names or default in names:
        return default
    for name in ("main", "forward"):
        if name in names:
            return name
    return names[0]


def target_class(target: Any) -> str:
    """``"gpu"`` for a target dict that compiles for a GPU, else ``"cpu"`` (the keys of ``target_defaults``)."""
    return "gpu" if isinstance(target, dict) and is_gpu_target(target) else "cpu"


def check_param_value(spec: ParamSpec, value: Any) -> Optional[str]:
    """Return an error message if ``value`` does not fit ``spec``, else ``None``."""
    if value is None:
        return None if spec.nullable else f"'{spec.name}' must not be empty (null)"
    kind = spec.kind
    if kind == "bool":
        if not isinstance(value, bool):
            return f"'{spec.name}' must be true or false, not {value!r}"
    elif kind == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            return f"'{spec.name}' must be an integer, not {value!r}"
    elif kind == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            return f"'{spec.name}' must be a finite number, not {value!r}"
    elif kind in ("str", "file", "code", "function"):
        if not isinstance(value, str):
            return f"'{spec.name}' must be a string, not {value!r}"
        if kind == "file" and "\x00" in value:
            return f"'{spec.name}' is not a valid path"
    elif kind == "choice":
        if value not in (spec.choices or []):
            return f"'{spec.name}' must be one of {spec.choices}, not {value!r}"
    elif kind in ("str_list", "rule_list"):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"'{spec.name}' must be a list of strings, not {value!r}"
        if kind == "rule_list":
            bad = [v for v in value if v not in (spec.choices or [])]
            if bad:
                return (f"'{spec.name}' has unknown entries {bad} (misspelt, or from a plug-in that is not installed: "
                        f"'main.py env' lists the plug-ins); known: {spec.choices}")
    elif kind == "json":
        if not _is_json_plain(value):
            return f"'{spec.name}' must be a JSON value (null, bool, number, string, list, object)"
    else:
        return f"'{spec.name}' has an unknown kind {kind!r}"
    return None


class Catalogue:
    """An ordered collection of :class:`PassSpec` keyed by id."""

    def __init__(self, specs: Iterable[PassSpec] = (), meta: Optional[dict[str, Any]] = None) -> None:
        self._specs: dict[str, PassSpec] = {}
        for spec in specs:
            self.add(spec)
        self.meta: dict[str, Any] = dict(meta or {})

    def add(self, spec: PassSpec) -> None:
        """Add (or replace) a spec."""
        self._specs[spec.id] = spec

    def __contains__(self, pass_id: object) -> bool:
        return pass_id in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, pass_id: str) -> Optional[PassSpec]:
        """The spec with ``pass_id``, or ``None``."""
        return self._specs.get(pass_id)

    def ids(self) -> list[str]:
        """All pass ids, in catalogue order (category order, then title)."""
        return [s.id for s in self.specs()]

    def specs(self) -> list[PassSpec]:
        """All specs, sorted by category order, then title."""
        return sorted(self._specs.values(), key=lambda s: (_category_key(s.category), s.title.lower(), s.id))

    def categories(self) -> list[str]:
        """Categories that hold at least one spec, in display order."""
        return sorted({s.category for s in self._specs.values()}, key=_category_key)

    def specs_in(self, category: str) -> list[PassSpec]:
        """Specs in ``category``, sorted by title."""
        return [s for s in self.specs() if s.category == category]

    def search(self, text: str) -> list[PassSpec]:
        """Specs whose id, title or doc contains every word of ``text`` (case-insensitive).

        Matches on id/title rank before matches found only in the doc.
        """
        words = [w for w in text.lower().split() if w]
        if not words:
            return self.specs()
        head: list[PassSpec] = []
        tail: list[PassSpec] = []
        for spec in self.specs():
            label = f"{spec.id} {spec.title} {spec.category}".lower()
            body = f"{label} {spec.doc}".lower()
            if all(w in body for w in words):
                (head if all(w in label for w in words) else tail).append(spec)
        return head + tail

    def validate_params(self, pass_id: str, params: Optional[dict[str, Any]],
                        target: Any = None) -> tuple[dict[str, Any], list[str]]:
        """Check ``params`` against the spec of ``pass_id``.

        Returns ``(cleaned, errors)``: ``cleaned`` holds every parameter of the spec (missing ones
        take their default on ``target``, a target dict); ``errors`` are plain messages naming the pass
        and the parameter.
        """
        spec = self.get(pass_id)
        if spec is None:
            return dict(params or {}), [f"unknown pass {pass_id!r}"]
        return validate_against_spec(spec, params, target)

    def to_json(self) -> dict[str, Any]:
        """The catalogue as JSON (``{"version", "categories", "passes", "meta"}``)."""
        return {
            "version": CATALOGUE_JSON_VERSION,
            "categories": self.categories(),
            "passes": [s.to_json() for s in self.specs()],
            "meta": copy.deepcopy(self.meta),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Catalogue":
        """Rebuild a catalogue from :meth:`to_json` output (e.g. received from the engine)."""
        if not isinstance(data, dict) or not isinstance(data.get("passes"), list):
            raise ValueError("catalogue JSON must be an object with a 'passes' list")
        return cls((PassSpec.from_json(p) for p in data["passes"]), meta=data.get("meta"))

    def dumps(self) -> str:
        """The catalogue as a JSON string."""
        return json.dumps(self.to_json(), indent=1, sort_keys=True)


def validate_against_spec(spec: PassSpec, params: Optional[dict[str, Any]],
                          target: Any = None) -> tuple[dict[str, Any], list[str]]:
    """Validate ``params`` against one spec (defaults on ``target``); see :meth:`Catalogue.validate_params`."""
    errors: list[str] = []
    if not isinstance(params, (dict, type(None))):
        return {}, [f"{spec.id}: params must be an object, not {type(params).__name__}"]
    given = dict(params or {})
    cleaned: dict[str, Any] = {}
    for p in spec.params:
        if p.name in given:
            value = copy.deepcopy(given.pop(p.name))
            if p.kind == "float" and isinstance(value, int) and not isinstance(value, bool):
                value = float(value)
            message = check_param_value(p, value)
            if message:
                errors.append(f"{spec.id}: {message}")
            elif p.required and p.kind in ("str", "file", "code") and not str(value).strip():
                errors.append(f"{spec.id}: '{p.name}' is required")
            cleaned[p.name] = value
        else:
            default = p.default_for(target)
            if p.required and default in (None, ""):
                errors.append(f"{spec.id}: '{p.name}' is required")
            cleaned[p.name] = default
    for name in sorted(given):
        errors.append(f"{spec.id}: unknown parameter {name!r} (known: {[p.name for p in spec.params]})")
    return cleaned, errors


#: Category of each ``tvm.relax.transform`` constructor; new constructors default to "Optimization".
RELAX_CATEGORIES: dict[str, str] = {
    # Lowering
    "LegalizeOps": "Lowering",
    "AnnotateTIROpPattern": "Lowering",
    "CallTIRRewrite": "Lowering",
    "ToNonDataflow": "Lowering",
    "ConvertToDataflow": "Lowering",
    "RemovePurityChecking": "Lowering",
    "RewriteDataflowReshape": "Lowering",
    "DecomposeOpsForInference": "Lowering",
    "DecomposeOpsForTraining": "Lowering",
    "LowerRuntimeBuiltin": "Lowering",
    "VMBuiltinLower": "Lowering",
    "VMShapeLower": "Lowering",
    "ComputePrimValue": "Lowering",
    "LambdaLift": "Lowering",
    "RunCodegen": "Lowering",
    "RealizeVDevice": "Lowering",
    # Fusion
    "FuseOps": "Fusion",
    "FuseTIR": "Fusion",
    "FuseOpsByPattern": "Fusion",
    "MergeCompositeFunctions": "Fusion",
    "FuseTransposeMatmul": "Fusion",
    "CombineParallelMatmul": "Fusion",
    "FoldBatchnormToConv2D": "Fusion",
    # Tuning
    "MetaScheduleTuneTIR": "Tuning (MetaSchedule)",
    "MetaScheduleTuneIRMod": "Tuning (MetaSchedule)",
    "MetaScheduleApplyDatabase": "Tuning (MetaSchedule)",
    # Optimization
    "FoldConstant": "Optimization",
    "DeadCodeElimination": "Optimization",
    "EliminateCommonSubexpr": "Optimization",
    "CanonicalizeBindings": "Optimization",
    "InlinePrivateFunctions": "Optimization",
    "AdjustMatmulOrder": "Optimization",
    "ExpandMatmulOfSum": "Optimization",
    "ReorderPermuteDimsAfterConcat": "Optimization",
    "ReorderTakeAfterMatmul": "Optimization",
    "RemoveRedundantReshape": "Optimization",
    "FastMathTransform": "Optimization",
    "RemoveUnusedOutputs": "Optimization",
    "RemoveUnusedParameters": "Optimization",
    "SpecializePrimFuncBasedOnCallSite": "Optimization",
    "LiftTransformParams": "Optimization",
    "LazyTransformParams": "Optimization",
    "LazyGetInput": "Optimization",
    "LazySetOutput": "Optimization",
    "BindSymbolicVars": "Optimization",
    "Gradient": "Optimization",
    # Layout & precision
    "ConvertLayout": "Layout & precision",
    "ToMixedPrecision": "Layout & precision",
    "OptimizeLayoutTransform": "Layout & precision",
    "AttachAttrLayoutFreeBuffers": "Layout & precision",
    "SplitLayoutRewritePreproc": "Layout & precision",
    # Memory & runtime
    "StaticPlanBlockMemory": "Memory & runtime",
    "LowerAllocTensor": "Memory & runtime",
    "KillAfterLastUse": "Memory & runtime",
    "AllocateWorkspace": "Memory & runtime",
    "RewriteCUDAGraph": "Memory & runtime",
    "DataflowUseInplaceCalls": "Memory & runtime",
    "LowerGPUIPCAllocStorage": "Memory & runtime",
    "IPCAllReduceRewrite": "Memory & runtime",
    "BundleModelParams": "Memory & runtime",
    # Analysis & utility
    "Normalize": "Analysis & utility",
    "NormalizeGlobalVar": "Analysis & utility",
    "AttachGlobalSymbol": "Analysis & utility",
    "TopologicalSort": "Analysis & utility",
    "ExpandTupleArguments": "Analysis & utility",
}


def relax_category(name: str) -> str:
    """Category of the ``tvm.relax.transform`` constructor ``name``."""
    return RELAX_CATEGORIES.get(name, "Optimization")


def title_from_name(name: str) -> str:
    """``FuseOpsByPattern`` -> ``Fuse Ops By Pattern`` (acronyms kept together: ``FuseTIR`` -> ``Fuse TIR``)."""
    out: list[str] = []
    word = ""
    for i, ch in enumerate(name):
        nxt = name[i + 1] if i + 1 < len(name) else ""
        if word and ch.isupper() and not word[-1].isdigit() and (not word[-1].isupper() or (nxt and nxt.islower())):
            out.append(word)
            word = ""
        word += ch
    if word:
        out.append(word)
    return " ".join(out).replace("_", " ")
