"""Client-side, TVM-free wrappers over the engine's build commands (``build_run``, ``compare``,
``profile``, ``profile_get``, ``export_library``) returning typed results, and profile comparison
(:func:`diff_profiles`, :func:`compare_profiles`).

The engine does the work (see :mod:`pipeline_model.engine.handlers_build`, ``handlers_compare``,
``handlers_profile``); these functions only
shape the requests from a :class:`~pipeline_model.document.PipelineDocument` and turn the replies into
dataclasses. Errors from the engine arrive as ``EngineError`` with a plain message naming what failed.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, Optional

from pipeline_model.document import PipelineDocument
from pipeline_model.latency_stats import (
    FASTER, MIN_REPEATS, NO_DIFFERENCE, SLOWER, Comparison, compare_runs, ranges_overlap,
)

EventCallback = Callable[[str, dict], None]


@dataclass
class BenchSettings:
    """Latency measurement: warm-up (at least ``warmup`` runs and ``warmup_ms`` milliseconds of runs), then
    ``repeat`` measurements of ``number`` runs each (more runs when they take under ``min_repeat_ms``)."""

    warmup: int = 1
    warmup_ms: int = 100
    number: int = 5
    repeat: int = 20
    min_repeat_ms: int = 20


@dataclass
class InputSpec:
    """Where inputs come from: a ``.npy``/``.npz`` ``path``, else seeded random data (``seed``, ``dims``: the
    symbolic dims of the inputs, default 1). ``more_dims``: more runs of the same built module, one per item,
    on seeded inputs of those symbolic dims (a model with a dynamic axis checked at several lengths)."""

    path: Optional[str] = None
    seed: int = 0
    dims: dict[str, int] = field(default_factory=dict)
    more_dims: list[dict[str, int]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """Request form."""
        out: dict[str, Any] = {"path": self.path} if self.path else {"seed": self.seed}
        out["dims"] = dict(self.dims)
        if self.more_dims:
            out["more_dims"] = [dict(d) for d in self.more_dims]
        return out


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
    """Per-run latency in microseconds over ``repeat`` measurements (each the mean of ``number`` runs):
    median, quartiles (``q1_us``, ``q3_us``, ``iqr_us``; ``None`` from an engine that did not send them) and
    every repeat (``runs_us``)."""

    median_us: float
    mean_us: float
    std_us: float
    min_us: float
    max_us: float
    runs_us: list[float]
    number: int
    repeat: int
    warmup: int
    warmup_ms: float = 0.0
    q1_us: Optional[float] = None
    q3_us: Optional[float] = None
    iqr_us: Optional[float] = None
    #: Timed in turn with the other modules of a comparison (repeat ``i`` of each in the same round).
    interleaved: bool = False

    @classmethod
    def from_json(cls, data: Optional[dict[str, Any]]) -> Optional["LatencyStats"]:
        """From the engine's reply (``None`` stays ``None``; unknown keys are ignored)."""
        return cls(**_known(cls, data)) if data else None


def _known(cls: Any, data: dict[str, Any]) -> dict[str, Any]:
    """The keys of ``data`` that are fields of the dataclass ``cls`` (newer engines may send more)."""
    names = {f.name for f in fields(cls)}
    return {k: v for k, v in data.items() if k in names}


@dataclass
class CheckResult:
    """Numerical check against a reference (the model as loaded built by ``tvm.compile``, or the framework).

    The tolerance is scaled to the output (``scale="output"``: ``atol * max|ref| + rtol * |ref|``);
    ``max_abs_over_ref`` (max |diff| / max |ref|) is the figure to read; ``warnings`` says when the
    outputs are too small or all zeros for the check to mean anything.
    """

    passed: bool
    rtol: float
    atol: float
    max_abs: Optional[float]
    max_rel: Optional[float]
    outputs: list[dict[str, Any]] = field(default_factory=list)
    reference: str = ""
    error: Optional[str] = None
    max_ref: Optional[float] = None
    max_abs_over_ref: Optional[float] = None
    scale: str = "output"
    warnings: list[str] = field(default_factory=list)
    #: Why the default-pipeline reference could not be used (it crashed, or did not build or run): the check
    #: then fell back to the framework (``reference`` names it) or could not be done (``error``).
    reference_failure: Optional[str] = None
    #: The lowest float precision of the built module when it chose the tolerance (the request left it out).
    tolerance_dtype: Optional[str] = None
    #: A quantized model's tolerance: one quantization step of its output (absolute), and where the step came from
    #: (``"scale"``: the last dequantize's scale; ``"range"``: the output's range / 255).
    quant_step: Optional[float] = None
    step_from: Optional[str] = None

    @classmethod
    def from_json(cls, data: Optional[dict[str, Any]]) -> Optional["CheckResult"]:
        """From the engine's reply (``None`` stays ``None``)."""
        return cls(**_known(cls, data)) if data else None


@dataclass
class ProfileEntry:
    """One callee of a profile: ``calls`` per run, ``total_us`` per run (median over the runs), ``share``."""

    name: str
    kind: str
    calls: int
    total_us: float
    mean_us: float
    share: float
    min_total_us: float = 0.0
    max_total_us: float = 0.0
    #: This callee's time in each instrumented run (the spread of ``total_us``).
    totals_us: list[float] = field(default_factory=list)


#: :attr:`Profile.method`: every call timed by the VM's instrument; each kernel timed by itself on an RPC device.
PROFILE_INSTRUMENT, PROFILE_KERNELS = "instrument", "kernels"


@dataclass
class Profile:
    """Where the time of one run goes, per callee (PrimFunc, packed/builtin function), largest first.

    ``key`` is the snapshot key of the profiled module (profiles of two steps compare by key);
    ``nodes`` maps a callee to the graph node ids (of the entry function) that call it.
    """

    entries: list[ProfileEntry]
    total_us: float
    run_us: float
    repeat: int
    warmup: int
    key: str = ""
    label: str = ""
    function: str = ""
    target: dict[str, Any] = field(default_factory=dict)
    nodes: dict[str, list[str]] = field(default_factory=dict)
    #: Wall time of each instrumented run (the spread of ``run_us``).
    runs_us: list[float] = field(default_factory=list)
    #: How the figures were measured: :data:`PROFILE_INSTRUMENT` (every call of a run timed by the VM's
    #: instrument, on a device of this machine) or :data:`PROFILE_KERNELS` (on an RPC device: each kernel timed
    #: there by itself; ``run_us`` the whole run timed there, the VM's work between the kernels not in the rows).
    method: str = "instrument"
    #: Kernels not timed (:data:`PROFILE_KERNELS`: their argument shapes could not be known, or the library
    #: lacks them).
    skipped: list[str] = field(default_factory=list)

    def top(self, n: int, kinds: Optional[set[str]] = None) -> list[ProfileEntry]:
        """The ``n`` entries holding the most time (optionally of the given ``kinds`` only)."""
        chosen = [e for e in self.entries if kinds is None or e.kind in kinds]
        return chosen[:max(0, n)]

    def node_shares(self) -> dict[str, float]:
        """Share of total time per graph node id (a node calling a callee gets the callee's share,
        split evenly between the nodes calling it) — the heat overlay of the graph view."""
        out: dict[str, float] = {}
        for e in self.entries:
            ids = self.nodes.get(e.name) or []
            for node_id in ids:
                out[node_id] = out.get(node_id, 0.0) + e.share / len(ids)
        return out

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: Optional[dict[str, Any]]) -> Optional["Profile"]:
        """From the engine's reply (``None`` stays ``None``)."""
        if not data:
            return None
        d = _known(cls, data)
        d["entries"] = [ProfileEntry(**_known(ProfileEntry, e)) for e in data.get("entries") or []]
        return cls(**d)


#: :attr:`ProfileDiffRow.status` of a callee in both profiles, only in the later one, only in the earlier one.
IN_BOTH, ADDED, REMOVED = "both", "added", "removed"


@dataclass
class ProfileDiffRow:
    """One callee of two profiles compared (:func:`diff_profiles`).

    ``status`` is :data:`IN_BOTH`, :data:`ADDED` (only in ``after``) or :data:`REMOVED` (only in
    ``before``); callees match by name only, so a function renamed by a pass (``fused_*`` after
    FuseOps/FuseTIR) shows as one removed and one added. Times are per run in microseconds (``None``
    where the callee is absent); ``delta_us`` = after - before (an absent side counts 0);
    ``ratio`` = after / before (``None`` unless both are present and before > 0); shares are of each
    profile's total (``None`` where absent).
    """

    name: str
    kind: str
    status: str
    before_us: Optional[float]
    after_us: Optional[float]
    delta_us: float
    ratio: Optional[float]
    share_before: Optional[float]
    share_after: Optional[float]
    calls_before: Optional[int]
    calls_after: Optional[int]
    #: For a callee in both: :mod:`pipeline_model.latency_stats` verdict of its time per run over the
    #: instrumented runs (``no_difference`` when the spread covers the change); "" otherwise.
    verdict: str = ""
    #: How far the interval of the ratio reaches from 1, in per cent (``None`` when unknown).
    noise_pct: Optional[float] = None

    @property
    def significant(self) -> bool:
        """The change is larger than the spread (a callee added or removed always is)."""
        return self.status != IN_BOTH or self.verdict in (FASTER, SLOWER)

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)


def _ratio(before: Optional[float], after: Optional[float]) -> Optional[float]:
    """``after / before`` when both are known and ``before`` is positive, else ``None``."""
    if before is None or after is None or before <= 0:
        return None
    return after / before


def _entry_verdict(ea: ProfileEntry, eb: ProfileEntry) -> tuple[str, Optional[float]]:
    """Whether a callee's time changed beyond its spread: the bootstrap verdict over its per-run times, or,
    for profiles without them, whether the min..max ranges overlap. Returns (verdict, noise %)."""
    if len(ea.totals_us) >= MIN_REPEATS and len(eb.totals_us) >= MIN_REPEATS:
        cmp = compare_runs(ea.totals_us, eb.totals_us)
        return cmp.verdict, cmp.noise_pct
    if ea.max_total_us <= 0 or eb.max_total_us <= 0:
        return "", None
    if ranges_overlap(ea.min_total_us, ea.max_total_us, eb.min_total_us, eb.max_total_us):
        spread = max(ea.max_total_us - ea.min_total_us, eb.max_total_us - eb.min_total_us)
        return NO_DIFFERENCE, 100.0 * spread / ea.total_us if ea.total_us > 0 else None
    return (FASTER if eb.total_us < ea.total_us else SLOWER), None


def diff_profiles(before: Profile, after: Profile) -> list[ProfileDiffRow]:
    """Per callee (matched by name): time before and after, change and ratio, whether the change is larger
    than the spread of the instrumented runs (``verdict``), largest |change| first (ties by name). Used to compare the profiles of two steps (keyed by their snapshot keys)."""
    a = {e.name: e for e in before.entries}
    b = {e.name: e for e in after.entries}
    rows = []
    for name in sorted(set(a) | set(b)):
        ea, eb = a.get(name), b.get(name)
        ta = ea.total_us if ea is not None else None
        tb = eb.total_us if eb is not None else None
        status = IN_BOTH if ea is not None and eb is not None else (ADDED if ea is None else REMOVED)
        seen = eb if eb is not None else ea
        kind = seen.kind if seen is not None else ""
        verdict, noise = _entry_verdict(ea, eb) if ea is not None and eb is not None else ("", None)
        rows.append(ProfileDiffRow(
            name=name, kind=kind, status=status, before_us=ta, after_us=tb,
            delta_us=(tb or 0.0) - (ta or 0.0), ratio=_ratio(ta, tb),
            share_before=ea.share if ea is not None else None, share_after=eb.share if eb is not None else None,
            calls_before=ea.calls if ea is not None else None, calls_after=eb.calls if eb is not None else None,
            verdict=verdict, noise_pct=noise))
    rows.sort(key=lambda r: (-abs(r.delta_us), r.name))
    return rows


@dataclass
class ProfileComparison:
    """Two profiles compared: the per-callee :func:`diff_profiles` rows and the totals.

    ``total_before_us``/``total_after_us`` are the profiles' totals (sum of the calls' time per run),
    ``ratio`` = after / before (``None`` when before is 0); ``run_*_us`` the instrumented runs' wall time;
    ``runs``: after against before over the runs' wall times (``None`` when the profiles lack them).
    """

    before: Profile
    after: Profile
    rows: list[ProfileDiffRow]
    total_before_us: float
    total_after_us: float
    ratio: Optional[float]
    run_before_us: float
    run_after_us: float
    runs: Optional[Comparison] = None

    @property
    def delta_us(self) -> float:
        """Change of the total: after - before."""
        return self.total_after_us - self.total_before_us

    def count(self, status: str) -> int:
        """How many callees have ``status`` (:data:`IN_BOTH`, :data:`ADDED`, :data:`REMOVED`)."""
        return sum(1 for r in self.rows if r.status == status)


def compare_profiles(before: Profile, after: Profile) -> ProfileComparison:
    """:func:`diff_profiles` plus the totals before → after and their ratio."""
    return ProfileComparison(
        before=before, after=after, rows=diff_profiles(before, after),
        total_before_us=float(before.total_us), total_after_us=float(after.total_us),
        ratio=_ratio(float(before.total_us), float(after.total_us)),
        run_before_us=float(before.run_us), run_after_us=float(after.run_us),
        runs=compare_runs(before.runs_us, after.runs_us, same_build=bool(before.key) and before.key == after.key)
        if before.runs_us and after.runs_us else None)


@dataclass
class ShapeRun:
    """The built module run once more on inputs of other symbolic dims (:attr:`InputSpec.more_dims`)."""

    dims: dict[str, int]
    arguments: list[dict[str, Any]]
    outputs: list[OutputStats]
    latency: Optional[LatencyStats]
    check: Optional[CheckResult]
    framework_check: Optional[CheckResult] = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "ShapeRun":
        """From the engine's reply (an item of ``runs``)."""
        return cls(dims={str(k): int(v) for k, v in dict(data.get("dims") or {}).items()},
                   arguments=list(data.get("arguments") or []),
                   outputs=[OutputStats(**o) for o in data.get("outputs") or []],
                   latency=LatencyStats.from_json(data.get("latency")), check=CheckResult.from_json(data.get("check")),
                   framework_check=CheckResult.from_json(data.get("framework_check")))


@dataclass
class BuildRunResult:
    """What ``build_run`` reports (``dims``: the symbolic dims of its inputs; ``runs``: the same module run
    again at other dims)."""

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
    framework_check: Optional[CheckResult] = None
    profile: Optional[Profile] = None
    key: str = ""
    profile_note: str = ""  # why there is no profile (profiling on the RPC device failed)
    dims: dict[str, int] = field(default_factory=dict)
    runs: list[ShapeRun] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True unless a numerical check ran and failed (in any run)."""
        checks = [self.check, self.framework_check] + [c for r in self.runs for c in (r.check, r.framework_check)]
        return all(c is None or c.passed for c in checks)

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
            latency=LatencyStats.from_json(data.get("latency")),
            check=CheckResult.from_json(data.get("check")),
            framework_check=CheckResult.from_json(data.get("framework_check")),
            profile=Profile.from_json(data.get("profile")), key=str(data.get("key") or ""),
            profile_note=str(data.get("profile_note") or ""),
            dims={str(k): int(v) for k, v in dict(data.get("dims") or {}).items()},
            runs=[ShapeRun.from_json(r) for r in data.get("runs") or []],
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
    fingerprint: str = ""


@dataclass
class CompareResult:
    """Two modules on the same inputs; ``speedup`` = latency(a) / latency(b) (ratio of the medians, > 1: b is
    faster) and ``comparison``: b against a with its interval and verdict (:mod:`pipeline_model.latency_stats`;
    read this one: a ratio inside the spread is no speed-up)."""

    function: str
    a: CompareSide
    b: CompareSide
    speedup: float
    check: Optional[CheckResult] = None
    comparison: Optional[Comparison] = None

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "CompareResult":
        """From the engine's reply."""
        def side(d: dict[str, Any]) -> CompareSide:
            latency = LatencyStats.from_json(d["latency"])
            assert latency is not None
            return CompareSide(label=str(d["label"]), target=dict(d["target"]), device=str(d["device"]),
                               build_ms=float(d["build_ms"]), latency=latency,
                               outputs=[OutputStats(**o) for o in d.get("outputs") or []],
                               fingerprint=str(d.get("fingerprint") or ""))

        a, b = side(data["a"]), side(data["b"])
        comparison = Comparison.from_json(data.get("comparison")) or compare_runs(
            a.latency.runs_us, b.latency.runs_us, paired=a.latency.interleaved and b.latency.interleaved,
            same_build=bool(a.fingerprint) and a.fingerprint == b.fingerprint and a.target == b.target)
        return cls(function=str(data["function"]), a=a, b=b, speedup=float(data["speedup"]),
                   check=CheckResult.from_json(data.get("check")), comparison=comparison)


@dataclass
class CompareRow:
    """One module of a many-module comparison (``error`` set when it failed to build or run)."""

    label: str
    key: str
    target: dict[str, Any]
    build_ms: Optional[float]
    latency: Optional[LatencyStats]
    outputs: list[OutputStats]
    check: Optional[CheckResult]
    error: Optional[str] = None
    device: str = ""
    fingerprint: str = ""
    #: Against the first row (every row after the first that ran): ratio, interval, verdict.
    vs_first: Optional[Comparison] = None
    #: ``vs_first`` says faster or slower (not within the spread, not the same build).
    significant: bool = False


@dataclass
class MultiCompareResult:
    """Two or more modules on the same model and inputs: one row each, the final-IR diff of every pair
    (``diffs``: ``{a, b, identical, stats, functions}`` with row indices), ``best`` (the fastest row by
    median) and ``best_clear`` (it is significantly faster than every other row; otherwise there is no
    fastest to recommend)."""

    function: str
    rows: list[CompareRow]
    diffs: list[dict[str, Any]]
    best: Optional[int]
    arguments: list[dict[str, Any]] = field(default_factory=list)
    best_clear: bool = False

    def to_json(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "MultiCompareResult":
        """From the engine's reply."""
        rows = []
        for r in data.get("rows") or []:
            rows.append(CompareRow(
                label=str(r.get("label", "")), key=str(r.get("key") or ""), target=dict(r.get("target") or {}),
                build_ms=r.get("build_ms"), latency=LatencyStats.from_json(r.get("latency")),
                outputs=[OutputStats(**o) for o in r.get("outputs") or []],
                check=CheckResult.from_json(r.get("check")), error=r.get("error"), device=str(r.get("device") or ""),
                fingerprint=str(r.get("fingerprint") or ""), vs_first=Comparison.from_json(r.get("vs_first")),
                significant=bool(r.get("significant"))))
        return cls(function=str(data.get("function") or ""), rows=rows, diffs=list(data.get("diffs") or []),
                   best=data.get("best"), arguments=list(data.get("arguments") or []),
                   best_clear=bool(data.get("best_clear")))


@dataclass
class ExportResult:
    """Files written by ``export_library``."""

    library: str
    deploy_script: str
    weights: str
    metadata: str
    function: str


def module_request(doc: PipelineDocument, *, key: Optional[str] = None, baseline: bool = False,
                   target: Optional[dict[str, Any]] = None, remote: Optional[dict[str, Any]] = None) -> dict[str, Any]:
    """The part of a build request naming the module: the document's run arguments plus a snapshot
    ``key`` (default: the engine runs the pipeline and takes the final module) or ``baseline``; ``remote``
    (:func:`pipeline_model.targets.remote_spec`): run it on that RPC device.
    Consent (:mod:`pipeline_model.consent`) is the client's: it attaches it to the build request."""
    from pipeline_model.engine.run_call import run_args

    run = run_args(doc)
    run["name"] = doc.name
    req: dict[str, Any] = {"run": run, "baseline": bool(baseline)}
    if key:
        req["key"] = key
    if target:
        req["target"] = dict(target)
    if remote:
        req["remote"] = dict(remote)
    return req


@dataclass
class ProfileSettings:
    """Profile of a built module: ``warmup`` runs, then ``repeat`` instrumented runs (median per callee)."""

    warmup: int = 1
    repeat: int = 5


CHECK_AGAINST = ("tvm", "framework", "both")


def build_run(client: Any, doc: PipelineDocument, *, key: Optional[str] = None,
              target: Optional[dict[str, Any]] = None, inputs: Optional[InputSpec] = None,
              bench: Optional[BenchSettings] = None,
              check: Optional[tuple[Optional[float], Optional[float]]] = (1e-4, 1e-4),
              function: Optional[str] = None,
              on_event: Optional[EventCallback] = None, profile: Optional[ProfileSettings] = None,
              check_against: str = "tvm", check_scale: str = "output",
              remote: Optional[dict[str, Any]] = None) -> BuildRunResult:
    """Build the document's module (snapshot ``key`` or the final one), run it, optionally time it
    (``bench``), profile it (``profile``) and check it (``check`` = ``(rtol, atol)``, ``None`` to skip; a ``None``
    tolerance is the engine's default for the lowest float precision of the built module, named in the result;
    ``check_against``: ``"tvm"`` (model as loaded, default build), ``"framework"`` (ONNX Runtime /
    PyTorch on the original file) or ``"both"``; ``check_scale``: ``"output"`` or ``"absolute"``; ``remote``: run and
    time it on that RPC device, :func:`pipeline_model.targets.remote_spec`)."""
    if check_against not in CHECK_AGAINST:
        raise ValueError(f"check_against must be one of {', '.join(CHECK_AGAINST)}")
    args = module_request(doc, key=key, target=target, remote=remote)
    args.update({
        "inputs": (inputs or InputSpec()).to_json(),
        "bench": asdict(bench) if bench is not None else None,
        "check": {"rtol": check[0], "atol": check[1], "scale": check_scale} if check is not None else None,
        "check_against": check_against,
        "function": function,
        "profile": asdict(profile) if profile is not None else None,
    })
    return BuildRunResult.from_json(request_build_run(client, args, on_event))


def request_build_run(client: Any, args: dict[str, Any], on_event: Optional[EventCallback] = None) -> dict[str, Any]:
    """The engine's ``build_run`` reply. When the reference (the model as loaded built by ``tvm.compile``'s
    default pipeline: progress phase ``"reference"``) crashes the engine, the module itself built and ran: the
    request is sent once more to the restarted engine with ``reference_failed``, and the reply's check says the
    reference crashed (and falls back to the framework, or says the check could not be done)."""
    from pipeline_model.engine.errors import EngineCrashed

    phase: dict[str, str] = {}

    def listen(name: str, data: dict[str, Any]) -> None:
        if name == "build_progress":
            if data.get("phase") == "reference":
                phase["now"] = "reference"
            elif data.get("phase") not in ("building", "running"):
                phase.pop("now", None)
        if on_event is not None:
            on_event(name, data)

    try:
        return dict(client.request("build_run", args, listen))
    except EngineCrashed as exc:
        if phase.get("now") != "reference" or getattr(exc, "cancelled", False) or args.get("reference_failed"):
            raise
        crash = str(exc.message).split("\n", 1)[0]
        return dict(client.request("build_run", dict(args, reference_failed=f"the reference crashed: {crash}",
                                                      rerun_missing=True),
                                   on_event))


def profile(client: Any, doc: PipelineDocument, *, key: Optional[str] = None,
            target: Optional[dict[str, Any]] = None, inputs: Optional[InputSpec] = None,
            settings: Optional[ProfileSettings] = None,
            on_event: Optional[EventCallback] = None) -> Profile:
    """Build the module (snapshot ``key`` or the final one) and profile it: time per callee."""
    args = module_request(doc, key=key, target=target)
    args.update({"inputs": (inputs or InputSpec()).to_json(), "profile": asdict(settings or ProfileSettings())})
    result = Profile.from_json(client.request("profile", args, on_event))
    if result is None:
        raise RuntimeError("the engine returned no profile")
    return result


def stored_profile(client: Any, key: str) -> Optional[Profile]:
    """The profile the engine keeps for snapshot ``key`` (``None`` if that module was not profiled)."""
    return Profile.from_json(client.request("profile_get", {"key": key}).get("profile"))


def stored_profile_keys(client: Any) -> list[str]:
    """The snapshot keys of the profiles the engine keeps (oldest first)."""
    return [str(k) for k in client.request("profile_get", {}).get("keys") or []]


def stored_profiles(client: Any, keys: list[str]) -> dict[str, Profile]:
    """The profiles the engine keeps for any of ``keys`` (one ``profile_get`` for the list, one per kept key)."""
    kept = set(stored_profile_keys(client))
    out: dict[str, Profile] = {}
    for key in keys:
        if key in kept and key not in out:
            prof = stored_profile(client, key)
            if prof is not None:
                out[key] = prof
    return out


def compare_many(client: Any, modules: list[dict[str, Any]], *, inputs: Optional[InputSpec] = None,
                 bench: Optional[BenchSettings] = None, check: Optional[tuple[float, float]] = (1e-4, 1e-4),
                 on_event: Optional[EventCallback] = None) -> MultiCompareResult:
    """Build and run two or more modules (:func:`module_request` dicts, each may carry a ``label``) on the
    same inputs: latency, build time, check against the model as loaded, final-IR diffs, fastest."""
    args = {"modules": list(modules), "inputs": (inputs or InputSpec()).to_json(),
            "bench": asdict(bench or BenchSettings()),
            "check": {"rtol": check[0], "atol": check[1]} if check is not None else None}
    return MultiCompareResult.from_json(client.request("compare", args, on_event))


def compare(client: Any, a: dict[str, Any], b: dict[str, Any], *, inputs: Optional[InputSpec] = None,
            bench: Optional[BenchSettings] = None, check: Optional[tuple[float, float]] = (1e-4, 1e-4),
            on_event: Optional[EventCallback] = None) -> CompareResult:
    """Compare two modules given as :func:`module_request` dicts (e.g. baseline vs pipeline)."""
    args = {"a": a, "b": b, "inputs": (inputs or InputSpec()).to_json(),
            "bench": asdict(bench or BenchSettings()),
            "check": {"rtol": check[0], "atol": check[1]} if check is not None else None}
    return CompareResult.from_json(client.request("compare", args, on_event))


#: The files ``export_library`` writes into its folder (checked before the build: none replaced unasked).
EXPORT_FILES = ("model.so", "weights.npz", "model.json", "deploy.py")


def export_library(client: Any, doc: PipelineDocument, out_dir: str, *, key: Optional[str] = None,
                   target: Optional[dict[str, Any]] = None,
                   on_event: Optional[EventCallback] = None, overwrite: bool = False) -> ExportResult:
    """Build and write ``model.so``, ``weights.npz``, ``model.json`` and ``deploy.py`` into ``out_dir``; an
    existing file of those names is replaced only with ``overwrite`` (``--force``, the GUI's prompt)."""
    import os

    args = module_request(doc, key=key, target=target)
    args["out_dir"] = os.path.abspath(out_dir)
    args["overwrite"] = bool(overwrite)
    reply = client.request("export_library", args, on_event)
    return ExportResult(**reply)
