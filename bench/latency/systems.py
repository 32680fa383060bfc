"""The systems timed in the bench process, each a zero-argument callable running the model once on the same
inputs, with a function returning its outputs as numpy arrays (for the numerical check):

* a TVM module exported by the app (``model.so`` + ``weights.npz`` + ``model.json``, see
  :mod:`bench.latency.appside`) in a ``relax.VirtualMachine``;
* PyTorch eager (``torch.inference_mode``);
* ``torch.compile`` (inductor, CPU; the first call compiles: :func:`torch_compiled` warms it);
* ONNX Runtime (``CPUExecutionProvider``) on the dynamo ONNX file the app imports.

All on the same thread count (:func:`set_threads` before TVM or ONNX Runtime start their pools).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np


@dataclass
class System:
    """One timed column: ``run`` runs the model once; ``outputs`` runs it and returns numpy arrays."""

    name: str
    run: Callable[[], Any]
    outputs: Callable[[], list[np.ndarray]]


def set_threads(threads: int) -> None:
    """Every system on ``threads`` threads: TVM's runtime pool (``TVM_NUM_THREADS``, read when the pool starts,
    also by the engine process the bench starts afterwards) and PyTorch's intra-op pool; ONNX Runtime gets
    ``intra_op_num_threads`` in :func:`onnxruntime_session`. Parallel loops run on the pool the app runs them
    on (:func:`pipeline_model.runtime_threads.ensure_runtime_threads`: the app's own pool when this is called
    before ``import tvm``), the TVM default column's too (one pool per process)."""
    from pipeline_model.runtime_threads import ensure_runtime_threads

    os.environ["TVM_NUM_THREADS"] = str(threads)
    ensure_runtime_threads()
    import torch

    torch.set_num_threads(threads)


def _flatten(value: Any) -> list[np.ndarray]:
    """Outputs of any system as a flat list of numpy arrays (tensors, TVM tensors, tuples, lists)."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in _flatten(v)]
    if hasattr(value, "detach"):
        return [value.detach().cpu().numpy()]
    if hasattr(value, "numpy"):
        return [np.asarray(value.numpy())]
    if hasattr(value, "__len__") and hasattr(value, "__getitem__"):  # a TVM runtime Array
        return [a for i in range(len(value)) for a in _flatten(value[i])]
    return [np.asarray(value)]


def tvm_system(name: str, lib_dir: str, inputs: tuple[Any, ...], check_shape: bool = True) -> System:
    """The module ``export_library`` wrote into ``lib_dir``, on ``inputs`` (torch tensors, in order) plus its
    exported weights (0-d weights keep their shape). ``check_shape`` False: a module with a dynamic axis, run on
    inputs of another length than the one ``model.json`` describes."""
    import tvm
    from tvm import relax

    with open(os.path.join(lib_dir, "model.json"), encoding="utf-8") as fh:
        meta = json.load(fh)
    dev = tvm.cpu(0)
    vm = relax.VirtualMachine(tvm.runtime.load_module(os.path.join(lib_dir, meta["library"])), dev)
    described = meta["inputs"]
    if len(described) != len(inputs):
        raise SystemExit(f"{name}: the module takes {len(described)} inputs, the model {len(inputs)}")
    args = []
    for d, t in zip(described, inputs):
        arr = t.detach().numpy().astype(d["dtype"])
        if check_shape and list(arr.shape) != [int(s) for s in d["shape"]]:
            raise SystemExit(f"{name}: input {d.get('name')} has shape {d['shape']}, the model's {list(arr.shape)}")
        args.append(tvm.runtime.tensor(arr, dev))
    weights = np.load(os.path.join(lib_dir, "weights.npz"))
    weight_args = [tvm.runtime.tensor(np.asarray(weights[f"w{i}"]), dev) for i in range(len(meta["weights"]))]
    try:  # weights pre-packed by relax.LiftTransformParams (the default CPU pipeline): transform them once,
        transform = vm[meta["function"] + "_transform_params"]  # as the app's deploy.py does, outside the timing
    except Exception:  # noqa: BLE001 - no such function: the weights go in as they are
        transform = None
    if transform is not None:
        packed = transform(weight_args)
        weight_args = [packed] if hasattr(packed, "numpy") else list(packed)
    args += weight_args
    func = vm[meta["function"]]

    def run() -> Any:
        return func(*args)

    return System(name, run, lambda: _flatten(run()))


def torch_eager(model: Any, inputs: tuple[Any, ...]) -> System:
    """PyTorch eager under ``torch.inference_mode``."""
    import torch

    def run() -> Any:
        with torch.inference_mode():
            return model(*inputs)

    return System("PyTorch eager", run, lambda: _flatten(run()))


def torch_compiled(model: Any, inputs: tuple[Any, ...]) -> System:
    """``torch.compile(model)`` (inductor on CPU), compiled by a first call here (seconds to a minute)."""
    import torch

    compiled = torch.compile(model)

    def run() -> Any:
        with torch.inference_mode():
            return compiled(*inputs)

    run()
    return System("torch.compile", run, lambda: _flatten(run()))


def onnxruntime_session(onnx_path: str, inputs: tuple[Any, ...], threads: int) -> System:
    """ONNX Runtime on ``onnx_path`` with ``intra_op_num_threads=threads`` (inter-op 1, sequential)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    sess = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
    feed = {i.name: t.detach().numpy() for i, t in zip(sess.get_inputs(), inputs)}

    def run() -> Any:
        return sess.run(None, feed)

    return System("ONNX Runtime", run, lambda: _flatten(run()))


def relative_error(got: list[np.ndarray], ref: list[np.ndarray]) -> float:
    """max |got - ref| / max |ref| over all outputs (inf when the outputs do not match in number or shape)."""
    if len(got) != len(ref):
        return float("inf")
    worst = 0.0
    for g, r in zip(got, ref):
        if g.shape != r.shape:
            return float("inf")
        g64, r64 = g.astype(np.float64), r.astype(np.float64)
        scale = float(np.max(np.abs(r64))) if r64.size else 0.0
        diff = float(np.max(np.abs(g64 - r64))) if r64.size else 0.0
        worst = max(worst, diff / scale if scale > 0 else diff)
    return worst
