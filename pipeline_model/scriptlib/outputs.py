"""Running, timing and checking a built function: shared by the engine and exported scripts.

:func:`flatten_outputs` (a VM call's result as numpy arrays), :func:`warm_up` and :func:`benchmark`
(warm-up runs for :data:`DEFAULT_BENCH` ``warmup_ms``, then ``time_evaluator``; every repeat kept, with the
median and quartiles), :func:`benchmark_interleaved` (several modules timed in rotating rounds, for a fair
comparison), :func:`compare_outputs`
(the numerical check, a tolerance scaled to each output). This module's code is copied into exported
scripts; TVM is imported inside the functions.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

#: ``warmup_ms``: warm-up runs go on until this much time has passed (after at least ``warmup`` runs). On a
#: 2-core machine a tuned MLP ran 21 µs per call for its first ~500 calls (~10 ms) and 11-12 µs after: the
#: runtime's worker threads and the CPU clock settle first. One warm-up run measured the settling.
#: ``repeat`` 20 of ``number`` 5 runs, each repeat lasting at least ``min_repeat_ms`` 20 (more runs for a fast
#: function): a comparison needs enough repeats for its interval, and a repeat shorter than the scheduler's time
#: slice is either clean or many times too slow when another process takes the core (a 55 µs MLP measured 6x
#: too slow in a third of its 0.3 ms repeats on the loaded 2-core machine); docs/PERFORMANCE.md, "Numbers
#: without noise".
DEFAULT_BENCH = {"warmup": 1, "warmup_ms": 100, "number": 5, "repeat": 20, "min_repeat_ms": 20}


def flatten_outputs(value: Any) -> list[np.ndarray]:
    """The outputs of a VM call (a tensor, a scalar or nested tuples of them) as a flat list of numpy arrays."""
    if hasattr(value, "numpy"):
        return [value.numpy()]
    if isinstance(value, (int, float, bool, np.generic)):
        return [np.asarray(value)]
    out: list[np.ndarray] = []
    for item in value:
        out.extend(flatten_outputs(item))
    return out


class Timer:
    """Times one VM function on fixed arguments: :meth:`warm` (warm-up runs), then :meth:`sample` (one
    ``time_evaluator`` measurement of ``number`` runs: the mean time per run in µs)."""

    def __init__(self, vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray], settings: dict[str, Any]) -> None:
        import tvm

        s = {**DEFAULT_BENCH, **{k: v for k, v in (settings or {}).items() if v is not None}}
        self.number, self.repeat = max(1, int(s["number"])), max(1, int(s["repeat"]))
        self.warmup, self.warmup_s = max(0, int(s["warmup"])), max(0.0, float(s.get("warmup_ms") or 0)) / 1000.0
        self.vm, self.func_name, self.dev = vm, func_name, dev
        self.args = [tvm.runtime.tensor(a, dev) for a in arrays]
        self.evaluator = vm.time_evaluator(func_name, dev, number=self.number, repeat=1,
                                           min_repeat_ms=int(s.get("min_repeat_ms") or 0))
        self.warmed, self.warm_s = 0, 0.0
        self.runs_us: list[float] = []

    def warm(self) -> None:
        """The warm-up runs (at least ``warmup`` of them and ``warmup_ms`` of time)."""
        done, spent = warm_up(lambda: self.vm[self.func_name](*self.args), self.dev.sync, self.warmup, self.warmup_s)
        self.warmed, self.warm_s = self.warmed + done, self.warm_s + spent

    def sample(self) -> float:
        """One measurement (µs per run), kept in :attr:`runs_us`."""
        value = float(self.evaluator(*self.args).results[0]) * 1e6
        self.runs_us.append(value)
        return value

    def latency(self) -> dict[str, Any]:
        """The latency dict of the samples so far (:func:`latency_of`)."""
        return latency_of(self.runs_us, self.number, self.warmed, self.warm_s * 1000.0)


def latency_of(runs: list[float], number: int, warmed: int, warmup_ms: float) -> dict[str, Any]:
    """Median, quartiles (``q1_us``, ``q3_us``, ``iqr_us``), mean, std, min and max of the repeats ``runs``
    (µs per run, each the mean of ``number`` runs); every repeat is kept in ``runs_us``."""
    q1, median, q3 = (float(v) for v in np.percentile(runs, [25.0, 50.0, 75.0]))
    return {
        "median_us": median, "mean_us": float(np.mean(runs)), "std_us": float(np.std(runs)),
        "min_us": float(np.min(runs)), "max_us": float(np.max(runs)), "q1_us": q1, "q3_us": q3, "iqr_us": q3 - q1,
        "runs_us": [float(r) for r in runs], "number": number, "repeat": len(runs), "warmup": warmed,
        "warmup_ms": warmup_ms,
    }


def benchmark(vm: Any, func_name: str, dev: Any, arrays: list[np.ndarray], settings: dict[str, Any]) -> dict[str, Any]:
    """Latency with ``time_evaluator``: warm-up runs, then ``repeat`` measurements of ``number`` runs (µs)."""
    timer = Timer(vm, func_name, dev, arrays, settings)
    timer.warm()
    for _ in range(timer.repeat):
        timer.sample()
    return timer.latency()


def benchmark_interleaved(timers: list[Timer], between_rounds: Any = None) -> list[dict[str, Any]]:
    """Time several modules fairly: every one warmed up, then ``repeat`` rounds of one measurement each, the
    order rotating every round, so a change of machine load or clock falls on all of them alike (timing them
    one after the other puts the load of one moment on one module only). ``between_rounds(round)`` is called
    before each round (progress, cancellation). Returns their latency dicts."""
    for timer in timers:
        timer.warm()
    rounds = max(t.repeat for t in timers) if timers else 0
    for r in range(rounds):
        if between_rounds is not None:
            between_rounds(r)
        for k in range(len(timers)):
            timer = timers[(r + k) % len(timers)]
            if len(timer.runs_us) < timer.repeat:
                timer.sample()
    return [t.latency() for t in timers]


def warm_up(call: Any, sync: Any, runs: int, seconds: float, max_runs: int = 1_000_000) -> tuple[int, float]:
    """Call ``call()`` at least ``runs`` times and until ``seconds`` have passed (``sync()`` before reading
    the clock, so queued device work counts); at most ``max_runs`` calls. Returns (calls made, seconds spent).
    """
    start = time.perf_counter()
    done = 0
    while done < max_runs:
        if done >= runs:
            sync()
            if time.perf_counter() - start >= seconds:
                break
        call()
        done += 1
    sync()
    return done, time.perf_counter() - start


#: Below this largest reference magnitude the check compares rounding noise and says nothing.
TINY_OUTPUT = 1e-6


#: The numerical check's default ``rtol`` = ``atol`` by the lowest floating-point precision in the built module
#: (:func:`default_tolerance`): float32 keeps 1e-4; a mixed-precision (float16) module differs from the float32
#: reference by its rounding (~1e-3 relative, more after long sums), so 1e-4 failed it however good it was.
CHECK_TOLERANCE = {"float64": 1e-4, "float32": 1e-4, "float16": 1e-2, "bfloat16": 5e-2, "float8": 1.25e-1}


def _precision_rank(dtype: str) -> int:
    """Mantissa bits of a float dtype name (``float8_e4m3fn`` counts as float8); -1 for other dtypes."""
    bits = {"float64": 52, "float32": 23, "float16": 10, "bfloat16": 7}
    if dtype in bits:
        return bits[dtype]
    return 3 if dtype.startswith("float8") else -1


def module_float_dtypes(mod: Any) -> set[str]:
    """The floating-point dtypes of ``mod``'s tensors: every Relax variable's tensor type (a PrimFunc's buffers are
    those of the ``call_tir`` bindings that call it)."""
    from tvm import relax

    found: set[str] = set()

    def visit(expr: Any) -> None:
        ty = getattr(expr, "ty", None) if isinstance(expr, relax.Var) else None
        if isinstance(ty, relax.TensorType) and ty.dtype:
            found.add(str(ty.dtype))

    for _gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            relax.analysis.post_order_visit(func, visit)
    return {d for d in found if _precision_rank(d) >= 0}


#: Ops of a quantized model (QDQ, QLinear*, MatMulInteger and DynamicQuantizeLinear import as these in Relax).
QUANT_OPS = ("relax.quantize", "relax.dequantize")
#: Ops a dequantized output may go through on its way out keeping its quantization step.
_STEP_KEEPING = ("relax.reshape", "relax.permute_dims", "relax.squeeze", "relax.expand_dims", "relax.flatten",
                 "relax.strided_slice", "relax.take", "relax.concat", "relax.split", "relax.nn.max_pool2d")


def module_is_quantized(mod: Any) -> bool:
    """Whether ``mod`` is a quantized model: a ``quantize``/``dequantize`` call, or quantized weights (an int8/uint8
    constant or weight parameter: the built module after ``app.QuantizedToInteger`` and legalization keeps them), in
    one of its Relax functions. An int8/uint8 model input (an image model reading uint8 pixels) or value computed
    on the way (a float GPT-2's attention mask reduced as int8) does not make a model quantized."""
    import tvm
    from tvm import relax

    found: list[bool] = []

    def quantized_type(expr: Any) -> bool:
        ty = getattr(expr, "ty", None)
        return isinstance(ty, relax.TensorType) and str(ty.dtype) in ("int8", "uint8")

    def visit(expr: Any) -> None:
        if found:
            return
        if isinstance(expr, tvm.ir.Constant) and quantized_type(expr):
            found.append(True)
        elif isinstance(expr, relax.Call) and getattr(expr.op, "name", "") in QUANT_OPS:
            found.append(True)

    for _gv, func in mod.functions.items():
        if isinstance(func, relax.Function):
            count = int(func.attrs["num_input"]) if func.attrs and "num_input" in func.attrs else len(func.params)
            if any(quantized_type(p) for p in list(func.params)[count:]):
                return True
            relax.analysis.post_order_visit(func, visit)
            if found:
                return True
    return False


def output_quant_step(mod: Any, weights: Any = None) -> Any:
    """The quantization step of ``mod``'s output: the scale of the last ``dequantize`` before the entry function's
    (first) output, through reshapes and the like; its value from a constant or from ``weights`` (name -> array, a
    parameter's); the largest of a per-channel scale. None when the output is not dequantized or the scale unknown."""
    from tvm import relax

    if "main" not in [gv.name_hint for gv in mod.get_global_vars()] or not isinstance(mod["main"], relax.Function):
        return None
    func = mod["main"]
    var2val = relax.analysis.get_var2val(func)
    expr = func.body.body if isinstance(func.body, relax.SeqExpr) else func.body
    for _ in range(64):
        if isinstance(expr, relax.Var) and expr in var2val:
            expr = var2val[expr]
        elif isinstance(expr, relax.Tuple) and len(expr.fields):
            expr = expr.fields[0]
        elif isinstance(expr, relax.TupleGetItem):
            expr = expr.tuple_value
        elif isinstance(expr, relax.Call) and getattr(expr.op, "name", "") in _STEP_KEEPING:
            expr = expr.args[0] if not isinstance(expr.args[0], relax.Tuple) else expr.args[0].fields[0]
        elif isinstance(expr, relax.Call) and getattr(expr.op, "name", "") == "relax.dequantize":
            scale = expr.args[1]
            if hasattr(scale, "value") and hasattr(scale.value, "numpy"):
                value = scale.value.numpy()
            elif isinstance(scale, relax.Var) and weights is not None and str(scale.name) in weights:
                value = np.asarray(weights[str(scale.name)])
            else:
                return None
            return float(np.max(np.abs(value))) if value.size else None
        else:
            return None
    return None


def default_tolerance(mod: Any, reference: Any = None, weights: Any = None, outputs: Any = None) -> dict[str, Any]:
    """The check's default ``{"rtol", "atol", "dtype"}`` for the built module ``mod``: those of its
    lowest-precision float dtype (:data:`CHECK_TOLERANCE`; float32's when it has none).

    A quantized model (:func:`module_is_quantized` of ``mod`` or of ``reference``, the model as loaded) is judged at
    one quantization step of its output instead (int8 rounding flips an element by a step whenever the float
    arithmetic before a ``quantize`` differs in its last bit): ``{"rtol": 0, "atol": step, "scale": "absolute",
    "dtype": "int8", "quant_step": step, "step_from": ...}`` with ``step`` the scale of the output's last
    ``dequantize`` (:func:`output_quant_step` of ``reference`` with ``weights``), or, for an output computed in float
    after dynamically quantized ops, derived from the output's range: ``(max - min) / 255`` of ``outputs``. The
    reference a quantized model is compared with computes each op in float64 (rounded once to float32), not the
    float32 build (``quant_reference``'s :func:`check_reference`: that build's own rounding flips elements)."""
    if module_is_quantized(mod) or (reference is not None and module_is_quantized(reference)):
        step, source = output_quant_step(reference if reference is not None else mod, weights), "scale"
        if step is None and outputs:
            ranges = [float(np.max(o) - np.min(o)) for o in outputs if np.size(o) and np.isfinite(o).all()]
            step, source = (max(ranges) / 255.0 if ranges else None), "range"
        if step:  # (a difference of exactly one step, computed in float32, may exceed the step by a rounding)
            return {"rtol": 0.0, "atol": step * (1 + 1e-5), "scale": "absolute", "dtype": "int8", "quant_step": step,
                    "step_from": source}
    dtypes = module_float_dtypes(mod)
    lowest = min(dtypes, key=_precision_rank) if dtypes else "float32"
    key = "float8" if lowest.startswith("float8") else lowest
    tol = CHECK_TOLERANCE.get(key, CHECK_TOLERANCE["float32"])
    return {"rtol": tol, "atol": tol, "dtype": lowest}


def compare_outputs(got: list[np.ndarray], ref: list[np.ndarray], rtol: float, atol: float,
                    scale: str = "output") -> dict[str, Any]:
    """Compare outputs with a tolerance scaled to each output; pass/fail, errors and warnings.

    ``scale="output"`` (default): an element passes when ``|got - ref| <= atol * max|ref| + rtol * |ref|``,
    so the absolute tolerance follows the output's magnitude (a fixed ``atol=1e-4`` passes anything when
    outputs are ~1e-12). ``scale="absolute"``: ``|got - ref| <= atol + rtol * |ref|``.
    Reported per output and overall: ``max_abs`` (max |diff|), ``max_ref`` (max |ref|), ``max_abs_over_ref``
    (max |diff| / max |ref|, the figure to read) and ``max_rel`` (elementwise, where |ref| is above the
    absolute tolerance). ``warnings`` says when an output is all zeros or so small (max |ref| <
    :data:`TINY_OUTPUT`) that the check cannot tell a right result from a wrong one.
    """
    base = {"rtol": rtol, "atol": atol, "scale": scale}
    if len(got) != len(ref):
        return {"passed": False, **base, "max_abs": None, "max_rel": None, "max_ref": None,
                "max_abs_over_ref": None, "warnings": [],
                "error": f"the optimized module returns {len(got)} outputs, the reference {len(ref)}", "outputs": []}
    per: list[dict[str, Any]] = []
    warnings: list[str] = []
    passed, max_abs, max_rel, max_ref, max_ratio = True, 0.0, 0.0, 0.0, 0.0
    for i, (a, b) in enumerate(zip(got, ref)):
        if a.shape != b.shape:
            per.append({"index": i, "passed": False, "error": f"shape {list(a.shape)} vs reference {list(b.shape)}"})
            passed = False
            continue
        a64, b64 = np.asarray(a).astype(np.float64), np.asarray(b).astype(np.float64)
        diff = np.abs(a64 - b64)
        both_nan = np.isnan(a64) & np.isnan(b64)
        diff = np.where(both_nan, 0.0, diff)
        finite_ref = np.abs(b64[np.isfinite(b64)])
        m_ref = float(finite_ref.max()) if finite_ref.size else 0.0
        abs_tol = atol * m_ref if scale == "output" and m_ref > 0 else atol
        ok = bool(np.all(diff <= abs_tol + rtol * np.abs(b64)) and not np.isnan(diff).any())
        m_abs = float(np.nanmax(diff)) if diff.size else 0.0
        mask = np.abs(b64) > abs_tol
        m_rel = float(np.max(diff[mask] / np.abs(b64[mask]))) if mask.any() else 0.0
        ratio = m_abs / m_ref if m_ref > 0 else (0.0 if m_abs == 0 else float("inf"))
        entry: dict[str, Any] = {"index": i, "passed": ok, "max_abs": m_abs, "max_rel": m_rel, "max_ref": m_ref,
                                 "max_abs_over_ref": ratio, "abs_tolerance": abs_tol}
        if b64.size and m_ref == 0.0:
            warnings.append(f"output {i}: the reference is all zeros: the check cannot tell a right result "
                            "from a wrong one (use real inputs/weights)")
        elif b64.size and m_ref < TINY_OUTPUT:
            warnings.append(f"output {i}: the reference is tiny (max |ref| = {m_ref:.3g} < {TINY_OUTPUT:g}): "
                            "the check compares rounding noise (use real inputs/weights)")
        per.append(entry)
        passed &= ok
        max_abs, max_rel = max(max_abs, m_abs), max(max_rel, m_rel)
        max_ref, max_ratio = max(max_ref, m_ref), max(max_ratio, ratio)
    return {"passed": passed, **base, "max_abs": max_abs, "max_rel": max_rel, "max_ref": max_ref,
            "max_abs_over_ref": max_ratio, "warnings": warnings, "outputs": per}
