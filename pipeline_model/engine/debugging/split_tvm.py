"""The values inside one PrimFunc call (a fused PrimFunc after ``FuseTIR``, or any PrimFunc with intermediate
buffers): engine side, imports TVM.

The PrimFunc's intermediate buffers (``T.sblock_alloc_buffer`` of its root block) become extra parameters after
its own (the TVMScript is rewritten and parsed back: a PrimFunc whose text does not parse back, or whose
intermediate buffers have a non-global scope or a dynamic shape, is not split). It is compiled alone for the
target and called on the inputs the VM instrument copied when the call was made
(:class:`pipeline_model.engine.debugging.capture_tvm.Recorder`); each intermediate buffer's contents are then
the value an operator inside the fused call made, named by the buffer.
"""

from __future__ import annotations

import re
from typing import Any, Optional

import numpy as np

from pipeline_model.engine.build.devices import device_for, tvm_target

_ALLOC = re.compile(r"^    (\w+) = T\.sblock_alloc_buffer\((.*)\)$")


def has_intermediates(func: Any) -> bool:
    """True when the PrimFunc ``func`` allocates buffers in its root block (read from the IR, not printed)."""
    block = getattr(func.body, "block", None)
    return bool(len(getattr(block, "alloc_buffers", None) or []))


def expose_intermediates(func: Any) -> Optional[tuple[Any, list[str]]]:
    """``func`` with its root block's intermediate buffers as extra parameters after its own, and their names;
    ``None`` when it has none or the rewritten text does not parse back."""
    import tvm

    lines = func.script().splitlines()
    extra: list[tuple[str, str]] = []
    keep: list[str] = []
    for line in lines:
        m = _ALLOC.match(line)
        if m is not None and "scope=" not in m.group(2):
            extra.append((m.group(1), m.group(2)))
            continue
        keep.append(line)
    heads = [i for i, line in enumerate(keep) if line.startswith("def ") and line.endswith("):")]
    if not extra or len(heads) != 1:
        return None
    i = heads[0]
    keep[i] = keep[i][:-2] + "".join(f", {name}: T.Buffer({args})" for name, args in extra) + "):"
    try:
        exposed = tvm.script.from_source("\n".join(keep))
    except Exception:  # noqa: BLE001 - a text that does not parse back: not split
        return None
    if not isinstance(exposed, tvm.tirx.PrimFunc) or len(exposed.params) != len(func.params) + len(extra):
        return None
    return exposed, [name for name, _args in extra]


def _static(shape: Any) -> Optional[list[int]]:
    try:
        return [int(d) for d in shape]
    except (TypeError, ValueError):
        return None


def inner_values(func: Any, args: list[Any], outputs: list[np.ndarray], n_in: int,
                 target: dict[str, Any]) -> dict[str, np.ndarray]:
    """The intermediate buffers of ``func`` when it runs on ``args`` (the call's arguments as copied before it
    ran: arrays and scalars; ``outputs``, the shapes of its outputs, take positions ``n_in..``): buffer name ->
    contents. Empty when it cannot be split."""
    import tvm

    found = expose_intermediates(func)
    if found is None:
        return {}
    exposed, names = found
    extra_params = list(exposed.params)[len(func.params):]
    shapes = [_static(getattr(p, "shape", None)) for p in extra_params]
    if any(s is None for s in shapes):
        return {}
    dev = device_for(target)
    try:
        ex = tvm.compile(tvm.IRModule({"main": exposed.with_attr("global_symbol", "main")}),
                         target=tvm_target(target))
        call: list[Any] = []
        for i, arg in enumerate(args):
            if n_in <= i < n_in + len(outputs):
                out = outputs[i - n_in]
                call.append(tvm.runtime.empty(out.shape, str(out.dtype), dev))
            elif isinstance(arg, np.ndarray):
                call.append(tvm.runtime.tensor(arg, dev))
            else:
                call.append(arg)
        buffers = [tvm.runtime.empty(tuple(s or ()), str(p.dtype), dev) for s, p in zip(shapes, extra_params)]
        ex["main"](*call, *buffers)
        return {name: buf.numpy() for name, buf in zip(names, buffers)}
    except Exception:  # noqa: BLE001 - a PrimFunc that does not compile or run alone: not split
        return {}
