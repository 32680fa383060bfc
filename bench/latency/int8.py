"""Int8 rows of the latency bench (issue 34): ``python -m bench.bench_latency --int8 [--models ...]``.

Each model is exported to ONNX (:mod:`bench.latency.exporting`) and quantized with ONNX Runtime's own tools, as users
ship int8 models: the CNNs with ``quantize_static`` (QDQ, uint8 activations / int8 weights, calibrated on
:data:`CALIBRATION_BATCHES` seeded random batches), the transformers with ``quantize_dynamic`` (int8 weights,
``MatMulInteger``). The quantized file goes through the app's engine (``cpu_build.json``: the app default), is
checked at the app's int8 tolerance (one quantization step of the output,
:func:`pipeline_model.scriptlib.outputs.default_tolerance`) against the same file as loaded with each op computed in
float64 and rounded once to float32 (:func:`pipeline_model.scriptlib.quant_reference.check_reference`) and against
ONNX Runtime on the same file (max |diff| in quantization steps), and timed interleaved with ONNX Runtime in this process (:mod:`.timing`), with
the load average before and after each model. The quantization tools are bench-only requirements (onnxruntime).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import numpy as np

from bench.latency import appside, exporting, models, systems, timing

#: Models quantized statically (QDQ); every other model is quantized dynamically (MatMulInteger).
STATIC = ("resnet18_tv", "mobilenet_v3_small", "efficientnet_b0", "cnn", "resnet18")
CALIBRATION_BATCHES = 4


def quantize(name: str, onnx_path: str, inputs: tuple[Any, ...], folder: str) -> tuple[str, str]:
    """``(path, "static" | "dynamic")`` of ``onnx_path`` quantized by ONNX Runtime's tools into ``folder``."""
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                          quantize_static)

    if name not in STATIC:
        out = os.path.join(folder, f"{name}.int8_dynamic.onnx")
        quantize_dynamic(onnx_path, out, weight_type=QuantType.QInt8)
        return out, "dynamic"
    import onnxruntime as ort

    feed_names = [i.name for i in ort.InferenceSession(onnx_path, providers=["CPUExecutionProvider"]).get_inputs()]
    rng = np.random.default_rng(0)
    batches = [{n: rng.standard_normal(tuple(t.shape)).astype(np.float32) for n, t in zip(feed_names, inputs)}
               for _ in range(CALIBRATION_BATCHES)]

    class Reader(CalibrationDataReader):  # type: ignore[misc]
        def __init__(self) -> None:
            self.left = iter(batches)

        def get_next(self) -> Any:
            return next(self.left, None)

    out = os.path.join(folder, f"{name}.int8_static.onnx")
    quantize_static(onnx_path, out, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8)
    return out, "static"


def _engine_row(client: Any, plan: Any, name: str, path: str, kind: str) -> dict[str, Any]:
    """The app default column of one quantized file and its check (at the int8 tolerance) against TVM's default."""
    from pipeline_model import build_api

    doc = plan.docs["cpu_build"].clone()
    doc.model, doc.path, doc.target, doc.name = path, None, dict(plan.target), f"app default on {name} int8"
    col = appside.timed(f"{name} int8 {kind} app default", lambda: appside.app_column(
        client, doc, f"{name} int8", os.path.join(plan.tmp, "lib", f"{name}.int8")))
    row: dict[str, Any] = {"model": name, "kind": kind, "path": path, "app": col}
    if "error" not in col:
        result = build_api.build_run(client, doc, key=col["key"], bench=build_api.BenchSettings(
            warmup=1, number=1, repeat=1), check=(None, None))
        row["check"] = result.check
    return row


def _ort_steps(got: list[np.ndarray], ref: list[np.ndarray], step: float) -> float:
    """max |app - ORT| in quantization steps (inf when the outputs do not match)."""
    if len(got) != len(ref) or any(g.shape != r.shape for g, r in zip(got, ref)):
        return float("inf")
    worst = max(float(np.max(np.abs(g.astype(np.float64) - r))) for g, r in zip(got, ref))
    return worst / step if step else float("inf")


def _time_row(plan: Any, row: dict[str, Any], inputs: tuple[Any, ...]) -> None:
    """ONNX Runtime and the app's module on the same file, checked and timed interleaved; fills ``row``."""
    load_before = timing.loadavg()
    app = systems.tvm_system("app default", row["app"]["lib"], inputs)
    ort_sys = systems.onnxruntime_session(row["path"], inputs, plan.threads)
    check = row.get("check")
    step = check.quant_step if check is not None and check.quant_step else 0.0
    row["vs_ort_steps"] = _ort_steps(app.outputs(), ort_sys.outputs(), step)
    samples = timing.interleaved({"app": app.run, "ort": ort_sys.run}, plan.opts.repeat, plan.opts.sample_ms)
    row.update(app_ms={k: v / 1000 for k, v in timing.summary(samples["app"]).items()},
               ort_ms={k: v / 1000 for k, v in timing.summary(samples["ort"]).items()},
               ratio=timing.ratios(samples["app"], samples["ort"]), load=(load_before, timing.loadavg()))


def run(plan: Any) -> list[dict[str, Any]]:
    """Every model of ``plan`` quantized, built by the app and timed against ONNX Runtime; one row each."""
    rows, inputs_of = [], {}
    with appside.plan_client(plan) as client:
        for name in plan.models:
            model, inputs = models.make_model(name)
            t0 = time.perf_counter()
            fp32 = exporting.export(model, inputs, plan.tmp, name, "onnx")
            path, kind = quantize(name, fp32, inputs, plan.tmp)
            print(f"{name}: exported and quantized ({kind}) in {time.perf_counter() - t0:.0f} s", file=sys.stderr,
                  flush=True)
            inputs_of[name] = inputs
            rows.append(_engine_row(client, plan, name, path, kind))
    for row in rows:
        if "error" not in row["app"]:
            _time_row(plan, row, inputs_of[row["model"]])
    return rows


def print_rows(rows: list[dict[str, Any]], markdown: bool) -> int:
    """The int8 table (Markdown with ``markdown``); returns 1 when a check failed or a column has an error."""
    header = ["model", "int8", "app default ms", "ORT ms", "app÷ORT", "check (int8 tolerance)", "app vs ORT",
              "load before → after"]
    lines, failed = [], False
    for r in rows:
        chk = r.get("check")
        if "error" in r["app"] or "app_ms" not in r:
            lines.append([r["model"], r["kind"], "error", "", "", str(r["app"].get("error", ""))[:80], "", ""])
            failed = True
            continue
        verdict = "pass" if chk is not None and chk.passed else "FAIL"
        failed |= verdict != "pass"
        step = f"{chk.quant_step:.3g}" if chk is not None and chk.quant_step else "?"
        lines.append([r["model"], r["kind"], f"{r['app_ms']['min']:.3g} / {r['app_ms']['median']:.3g}",
                      f"{r['ort_ms']['min']:.3g} / {r['ort_ms']['median']:.3g}",
                      f"{r['ratio']['median']:.2f}x ({r['ratio']['min']:.2f}x)",
                      f"{verdict} (max |diff| {chk.max_abs:.3g}, step {step})" if chk is not None else "none",
                      f"{r['vs_ort_steps']:.1f} steps", f"{r['load'][0]} → {r['load'][1]}"])
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("| " + " | ".join("---" for _ in header) + " |")
        for line in lines:
            print("| " + " | ".join(line) + " |")
    else:
        for line in [header, *lines]:
            print("  ".join(line))
    return 1 if failed else 0
