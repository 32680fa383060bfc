"""Client-side, TVM-free wrappers over the engine's build commands (``build_run``, ``compare``,
``export_library``) returning typed results.

The engine does the work (see :mod:`pipeline_model.engine.handlers_build`); these functions only
shape the requests from a :class:`~pipeline_model.document.PipelineDocument` and turn the replies into
dataclasses. Errors from the engine arrive as ``EngineError`` with a plain message naming what failed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Optional

from pipeline_model.document import PipelineDocument

EventCallback = Callable[[str, dict], None]


@dataclass
class BenchSettings:
    """Latency measurement: ``warmup`` runs, then ``repeat`` measurements of ``number`` runs each."""

    warmup: int = 1
    number: int = 10
    repeat: int = 5
    min_repeat_ms: int = 0


@dataclass
class InputSpec:
    """Where inputs come from: a ``.npy``/``.npz`` ``path``, else seeded random data (``seed``, ``dims``)."""

    path: Optional[str] = None
    seed: int = 0
    dims: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """Request form."""
        if self.path:
            return {"path": self.path, "dims": dict(self.dims)}
        return {"seed": self.seed, "dims": dict(self.dims)}


@dataclass
class OutputStats:
    """One output of a run: shape, dtype and statistics (``None`` for an empty/non-numeric output)."""

    index: int
    shape: list[int]
    dtype: str
    min: Optional[float] = None
    max: Optional[float] = None
    mean: Optional[float] = None
    std: Optional[float] = None
    nan: int = 0
    inf: int = 0


@dataclass
class LatencyStats:
    """Per-run latency in microseconds over ``repeat`` measurements (each the mean of ``number`` runs)."""

    median_us: float
    mean_us: float
    std_us: float
    min_us: float
    max_us: float
    runs_us: list[float]
    number: int
    repeat: int
    warmup: int


@dataclass
class CheckResult:
    """Numerical check against the reference build (model as loaded, default pipeline, CPU)."""

    passed: bool
    rtol: float
    atol: float
    max_abs: Optional[float]
    max_rel: Optional[float]
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reference: str = ""
    error: Optional[str] = None


@dataclass
class BuildRunResult:
    """What ``build_run`` reports."""

    function: str
    target: dict[str, Any]
    device: str
    label: str
    build_ms: float
    arguments: list[dict[str, Any]]
    weights: str
    outputs: list[OutputStats]
    latency: Optional[LatencyStats]
    check: Optional[CheckResult]

    @property
    def ok(self) -> bool:
        """True unless the numerical check ran and failed."""
        return self.check is None or self.check.passed

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict (the CLI's ``--json`` output)."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "BuildRunResult":
        """From the engine's reply."""
        return cls(
            function=str(data["function"]), target=dict(data["target"]), device=str(data["device"]),
            label=str(data.get("label", "")), build_ms=float(data["build_ms"]),
            arguments=list(data.get("arguments") or []), weights=str(data.get("weights", "")),
            outputs=[OutputStats(**o) for o in data.get("outputs") or []],
            latency=LatencyStats(**data["latency"]) if data.get("latency") else None,
            check=CheckResult(**data["check"]) if data.get("check") else None,
        )


@dataclass
class CompareSide:
    """One side of a comparison."""

    label: str
    target: dict[str, Any]
    device: str
    build_ms: float
    latency: LatencyStats
    outputs: list[OutputStats]


@dataclass
class CompareResult:
    """Two modules on the same inputs; ``speedup`` = latency(a) / latency(b) (> 1: b is faster)."""

    function: str
    a: CompareSide
    b: CompareSide
    speedup: float
    check: Optional[CheckResult] = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CompareResult":
        """From the engine's reply."""
        def side(d: dict[str, Any]) -> CompareSide:
            return CompareSide(label=str(d["label"]), target=dict(d["target"]), device=str(d["device"]),
                               build_ms=float(d["build_ms"]), latency=LatencyStats(**d["latency"]),
                               outputs=[OutputStats(**o) for o in d.get("outputs") or []])

        return cls(function=str(data["function"]), a=side(data["a"]), b=side(data["b"]),
                   speedup=float(data["speedup"]),
                   check=CheckResult(**data["check"]) if data.get("check") else None)


@dataclass
class ExportResult:
    """Files written by ``export_library``."""

    library: str
    deploy_script: str
    weights: str
    metadata: str
    function: str


def module_request(doc: PipelineDocument, *, key: Optional[str] = None, baseline: bool = False,
                   target: Optional[dict[str, Any]] = None, trust_custom_code: bool = False) -> dict[str, Any]:
    """The part of a build request naming the module: the document's run arguments plus a snapshot
    ``key`` (default: the engine runs the pipeline and takes the final module) or ``baseline``."""
    from pipeline_model.engine.client import EngineClient

    run = EngineClient.run_args(doc, trust_custom_code=trust_custom_code)
    run["name"] = doc.name
    req: dict[str, Any] = {"run": run, "baseline": bool(baseline)}
    if key:
        req["key"] = key
    if target:
        req["target"] = dict(target)
    return req


def build_run(client: Any, doc: PipelineDocument, *, key: Optional[str] = None,
              target: Optional[dict[str, Any]] = None, inputs: Optional[InputSpec] = None,
              bench: Optional[BenchSettings] = None, check: Optional[tuple[float, float]] = (1e-4, 1e-4),
              function: Optional[str] = None, trust_custom_code: bool = False,
              on_event: Optional[EventCallback] = None) -> BuildRunResult:
    """Build the document's module (snapshot ``key`` or the final one), run it, optionally time it
    (``bench``) and check it (``check`` = ``(rtol, atol)``, ``None`` to skip)."""
    args = module_request(doc, key=key, target=target, trust_custom_code=trust_custom_code)
    args.update({
        "inputs": (inputs or InputSpec()).to_json(),
        "bench": asdict(bench) if bench is not None else None,
        "check": {"rtol": check[0], "atol": check[1]} if check is not None else None,
        "function": function,
    })
    return BuildRunResult.from_json(client.request("build_run", args, on_event))


def compare(client: Any, a: dict[str, Any], b: dict[str, Any], *, inputs: Optional[InputSpec] = None,
            bench: Optional[BenchSettings] = None, check: Optional[tuple[float, float]] = (1e-4, 1e-4),
            on_event: Optional[EventCallback] = None) -> CompareResult:
    """Compare two modules given as :func:`module_request` dicts (e.g. baseline vs pipeline)."""
    args = {"a": a, "b": b, "inputs": (inputs or InputSpec()).to_json(),
            "bench": asdict(bench or BenchSettings()),
            "check": {"rtol": check[0], "atol": check[1]} if check is not None else None}
    return CompareResult.from_json(client.request("compare", args, on_event))


def export_library(client: Any, doc: PipelineDocument, out_dir: str, *, key: Optional[str] = None,
                   target: Optional[dict[str, Any]] = None, trust_custom_code: bool = False,
                   on_event: Optional[EventCallback] = None) -> ExportResult:
    """Build and write ``model.so``, ``weights.npz``, ``model.json`` and ``deploy.py`` into ``out_dir``."""
    import os

    args = module_request(doc, key=key, target=target, trust_custom_code=trust_custom_code)
    args["out_dir"] = os.path.abspath(out_dir)
    reply = client.request("export_library", args, on_event)
    return ExportResult(**reply)
