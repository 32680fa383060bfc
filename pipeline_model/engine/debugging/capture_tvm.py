"""Every intermediate value of one run, captured through the VM instrument (engine side, imports TVM).

The module is built as the reference build builds it (:func:`build_module`: ``tvm.compile``'s ``default_build``
pipeline for a module not yet lowered for the VM, nothing more for one already lowered), split in two halves
(:func:`front_half`, :func:`back_half`): after the first (dispatch, ``LegalizeOps``, ``RewriteDataflowReshape``)
every binding of the entry function calls a PrimFunc, a packed function or a Relax function; the second
completes the build.

While the entry function runs, ``relax.VirtualMachine.set_instrument`` sees every call but the VM's own
builtins (``vm.builtin.*``, skipped): after each call a copy of its output is kept (the destination arguments
of a ``call_tir``/``call_dps_packed``, the in-place arguments of a ``call_tir_inplace``, the return value of a
packed or Relax function; in a module lowered for the VM, the last tensor argument of a call), so memory reuse
does not matter. Calls are matched to the bindings that made them by callee and occurrence order within the
Relax function running (the entry function, or a Relax function it calls: its bindings are *inner* values
with the calling binding as parent, e.g. the operators inside a fused function before ``FuseTIR``). Aliases,
tuple items and reshapes of captured values are derived without a call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Optional

import numpy as np

from pipeline_model.scriptlib.arguments import PrepackedVM, prepacked_vm
from pipeline_model.engine.build.devices import device_for, tvm_target
from pipeline_model import targets as targets_mod
from pipeline_model.engine.build.measure import _is_vm_lowered, _refuse_unscheduled, build_module
from pipeline_model.engine.build.errors import error_text
from pipeline_model.engine.debugging.split_tvm import has_intermediates
from pipeline_model.scriptlib.functions import BuildError

#: Ops whose first argument is the callee and second the tuple of inputs (destination-passing or in place).
_DPS_OPS = ("relax.call_tir", "relax.call_dps_packed", "relax.call_tir_inplace", "relax.call_tir_with_grad")
_PACKED_OPS = ("relax.call_packed", "relax.call_pure_packed", "relax.call_inplace_packed")
#: Bytes of call inputs kept (per run) for splitting PrimFunc calls (:mod:`.split_tvm`).
KEEP_INPUT_BYTES = 256 << 20
#: Nesting below the entry function that is followed (a Relax function calling a Relax function ...).
MAX_DEPTH = 4


@dataclass
class Entry:
    """One value of a Relax function's bindings: ``key`` is ``name`` for the entry function's bindings and
    ``parent-key/name`` inside a called Relax function."""

    key: str
    name: str
    parent: Optional[str]
    callee: str
    kind: str  # "dps", "inplace", "packed", "relax", "lowered", "alias", "item", "reshape"
    symbol: str = ""
    n_in: int = 0
    n_out: int = 1
    inplace: tuple[int, ...] = ()
    sub: Optional[str] = None  # the Relax function a "relax" entry calls
    source: Optional[str] = None  # the key an alias / item / reshape derives from
    index: int = 0
    shape: Optional[tuple[int, ...]] = None
    split: bool = False  # a PrimFunc call whose intermediate buffers can be split out (its inputs are kept)


@dataclass
class Layout:
    """The entries of one Relax function and, per callee symbol, its call entries in binding order."""

    entries: list[Entry] = field(default_factory=list)
    sites: dict[str, list[Entry]] = field(default_factory=dict)


def _symbol(mod: Any, gv: Any) -> str:
    func = mod[gv]
    attrs = func.attrs or {}
    return str(attrs["global_symbol"]) if "global_symbol" in attrs else str(gv.name_hint)


def _static_shape(ty: Any) -> Optional[tuple[int, ...]]:
    import tvm

    shape = getattr(ty, "shape", None)
    if shape is None or not isinstance(ty, tvm.relax.TensorType):
        return None
    try:
        return tuple(int(d) for d in shape.values)
    except (TypeError, AttributeError, ValueError):
        return None


def _call_entry(mod: Any, value: Any, lowered: bool) -> Optional[dict[str, Any]]:
    """What a call binding calls and where its output is: ``None`` for what runs no instrumented call."""
    import tvm
    from tvm import relax

    op = value.op
    if isinstance(op, tvm.ir.Op):
        name = op.name
        args = list(value.args)
        if name in _DPS_OPS and args:
            callee = args[0]
            symbol = _symbol(mod, callee) if isinstance(callee, tvm.ir.GlobalVar) else str(
                getattr(callee, "global_symbol", ""))
            out_ty = value.ty
            n_out = len(out_ty.fields) if isinstance(out_ty, relax.TupleType) else 1
            n_in = 1
            if len(args) > 1 and isinstance(args[1], relax.Tuple):
                n_in = len(args[1].fields)
            elif len(args) > 1 and isinstance(getattr(args[1], "ty", None), relax.TupleType):
                n_in = len(args[1].ty.fields)
            label = getattr(callee, "name_hint", symbol)
            split = isinstance(callee, tvm.ir.GlobalVar) and isinstance(mod[callee], tvm.tirx.PrimFunc) and \
                has_intermediates(mod[callee])
            if name == "relax.call_tir_inplace":
                indices = tuple(int(i) for i in value.attrs.inplace_indices)
                return {"kind": "inplace", "symbol": symbol, "callee": label, "n_in": n_in, "inplace": indices}
            return {"kind": "dps", "symbol": symbol, "callee": label, "n_in": n_in, "n_out": n_out, "split": split}
        if name in _PACKED_OPS and args and isinstance(args[0], relax.ExternFunc):
            return {"kind": "packed", "symbol": str(args[0].global_symbol), "callee": str(args[0].global_symbol)}
        return None
    if isinstance(op, relax.ExternFunc):
        return {"kind": "lowered" if lowered else "packed", "symbol": str(op.global_symbol),
                "callee": str(op.global_symbol)}
    if isinstance(op, tvm.ir.GlobalVar):
        func = mod[op]
        if isinstance(func, relax.Function):
            return {"kind": "relax", "symbol": _symbol(mod, op), "callee": op.name_hint, "sub": op.name_hint}
        return {"kind": "lowered", "symbol": _symbol(mod, op), "callee": op.name_hint}
    return None


def layout(mod: Any, func_name: str, prefix: Optional[str] = None, depth: int = 0,
           cache: Optional[dict[tuple[str, Optional[str]], Layout]] = None) -> Layout:
    """The :class:`Entry` list of ``func_name`` (inner entries of called Relax functions follow their parent)."""
    from tvm import relax

    cache = {} if cache is None else cache
    if (func_name, prefix) in cache:
        return cache[(func_name, prefix)]
    out = Layout()
    func = mod[func_name]
    if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
        return out
    lowered = _is_vm_lowered(mod)
    keys: dict[Any, str] = {}
    for block in func.body.blocks:
        for binding in block.bindings:
            entry = _binding_entry(mod, binding, prefix, keys, lowered)
            if entry is None:
                continue
            keys[binding.var] = entry.key
            out.entries.append(entry)
            if entry.kind in ("dps", "inplace", "packed", "relax", "lowered"):
                out.sites.setdefault(entry.symbol, []).append(entry)
            if entry.sub is not None and depth < MAX_DEPTH:
                out.entries += layout(mod, entry.sub, entry.key, depth + 1, cache).entries
    cache[(func_name, prefix)] = out
    return out


def _binding_entry(mod: Any, binding: Any, prefix: Optional[str], keys: dict[Any, str],
                   lowered: bool) -> Optional[Entry]:
    import tvm
    from tvm import relax

    var, value = binding.var, binding.value
    name = var.name
    key = name if prefix is None else f"{prefix}/{name}"
    shape = _static_shape(var.ty)
    if isinstance(value, relax.Call):
        if isinstance(value.op, tvm.ir.Op) and value.op.name == "relax.reshape" and value.args[0] in keys:
            return Entry(key, name, prefix, "relax.reshape", "reshape", source=keys[value.args[0]], shape=shape)
        found = _call_entry(mod, value, lowered)
        if found is None:
            return None
        if lowered and found["kind"] == "lowered":
            tensors = [a for a in value.args if isinstance(a, relax.Var) and isinstance(a.ty, relax.TensorType)]
            if not tensors or found["symbol"].startswith("vm.builtin."):
                return None
            name = tensors[-1].name
            key = name if prefix is None else f"{prefix}/{name}"
            shape = _static_shape(tensors[-1].ty)
            found["n_in"] = max(i for i, a in enumerate(value.args) if a.same_as(tensors[-1]))
            found["split"] = isinstance(value.op, tvm.ir.GlobalVar) and isinstance(
                mod[value.op], tvm.tirx.PrimFunc) and has_intermediates(mod[value.op])
        if found["symbol"].startswith("vm.builtin."):
            return None
        return Entry(key, name, prefix, found["callee"], found["kind"], symbol=found["symbol"],
                     n_in=found.get("n_in", 0), n_out=found.get("n_out", 1), inplace=found.get("inplace", ()),
                     sub=found.get("sub"), shape=shape, split=bool(found.get("split")))
    if isinstance(value, relax.Var) and value in keys:
        return Entry(key, name, prefix, "", "alias", source=keys[value], shape=shape)
    if isinstance(value, relax.TupleGetItem) and value.tuple_value in keys:
        return Entry(key, name, prefix, "", "item", source=keys[value.tuple_value], index=int(value.index),
                     shape=shape)
    return None


def _host(value: Any) -> Any:
    """A copy of a runtime value on the host: a numpy array, a list of them, or ``None``."""
    import tvm

    if isinstance(value, tvm.runtime.Tensor):
        return value.numpy()
    if isinstance(value, (list, tuple)) or type(value).__name__ == "Array":
        return [_host(v) for v in value]
    return None


def _outputs(entry: Entry, ret: Any, args: tuple[Any, ...]) -> Any:
    """The output of a call of ``entry`` as seen after it ran (see the module docstring)."""
    import tvm

    if entry.kind == "dps":
        outs = [_host(a) for a in args[entry.n_in: entry.n_in + entry.n_out]]
        return outs[0] if entry.n_out == 1 and outs else outs
    if entry.kind == "inplace":
        new = iter(args[entry.n_in:])
        outs = [_host(args[i]) if i >= 0 else _host(next(new, None)) for i in entry.inplace]
        return outs[0] if len(outs) == 1 else outs
    if entry.kind == "lowered":
        tensors = [a for a in args if isinstance(a, tvm.runtime.Tensor)]
        return _host(tensors[-1]) if tensors else None
    got = _host(ret)
    if got is None and entry.kind == "packed":
        tensors = [a for a in args if isinstance(a, tvm.runtime.Tensor)]
        return _host(tensors[-1]) if tensors else None
    return got


class Recorder:
    """The instrument: keeps a copy of each call's output under the key of the binding that made it."""

    def __init__(self, mod: Any, func_name: str) -> None:
        self.mod = mod
        self.cache: dict[tuple[str, Optional[str]], Layout] = {}
        self.top = layout(mod, func_name, cache=self.cache)
        self.values: dict[str, Any] = {}
        self.frames: list[Optional[tuple[Layout, dict[str, int]]]] = [(self.top, {})]
        self.calls: list[Optional[Entry]] = []
        self.unmatched = 0
        self.inputs: dict[str, list[Any]] = {}
        self.kept_bytes = 0

    def __call__(self, func: Any, symbol: Any, before: bool, ret: Any, *args: Any) -> int:
        name = str(symbol)
        if name.startswith("vm.builtin."):
            return 0
        if before:
            frame = self.frames[-1]
            entry = None
            if frame is not None:
                lay, counts = frame
                n = counts.get(name, 0)
                counts[name] = n + 1
                sites = lay.sites.get(name, [])
                entry = sites[n] if n < len(sites) else None
                if entry is None:
                    self.unmatched += 1
            self.calls.append(entry)
            if entry is not None and entry.split and self.kept_bytes < KEEP_INPUT_BYTES:
                try:
                    self._keep_inputs(entry, args)
                except Exception:  # noqa: BLE001 - inputs that cannot be copied: the call is not split
                    self.inputs.pop(entry.key, None)
            sub: Optional[tuple[Layout, dict[str, int]]] = None
            if entry is not None and entry.sub is not None and entry.key.count("/") < MAX_DEPTH:
                sub = (layout(self.mod, entry.sub, entry.key, entry.key.count("/") + 1, self.cache), {})
            self.frames.append(sub)
            return 0
        self.frames.pop()
        entry = self.calls.pop() if self.calls else None
        if entry is not None:
            try:
                value = _outputs(entry, ret, args)
            except Exception:  # noqa: BLE001 - an output that cannot be copied: no value (not_captured), run on
                return 0
            if value is not None:
                self.values[entry.key] = value
        return 0

    def _keep_inputs(self, entry: Entry, args: tuple[Any, ...]) -> None:
        import tvm

        kept: list[Any] = []
        for i, arg in enumerate(args):
            if entry.n_in <= i < entry.n_in + entry.n_out:
                kept.append(None)
            elif isinstance(arg, tvm.runtime.Tensor):
                kept.append(arg.numpy())
                self.kept_bytes += kept[-1].nbytes
            elif isinstance(arg, (int, float)):
                kept.append(arg)
            else:
                return
        self.inputs[entry.key] = kept

    def derive(self, entries: list[Entry]) -> None:
        """Values of aliases, tuple items and reshapes of captured values."""
        for entry in entries:
            if entry.source is None or entry.source not in self.values:
                continue
            src = self.values[entry.source]
            if entry.kind == "alias":
                self.values[entry.key] = src
            elif entry.kind == "item" and isinstance(src, list) and entry.index < len(src):
                self.values[entry.key] = src[entry.index]
            elif entry.kind == "reshape" and isinstance(src, np.ndarray) and entry.shape is not None:
                if int(np.prod(entry.shape)) == src.size:
                    self.values[entry.key] = src.reshape(entry.shape)


#: ``tvm.relax.pipeline.default_build_pipeline`` (TVM 0.27) in two halves: the bindings are read after the
#: first (every operator then calls a PrimFunc), the second completes the build
#: (``tests/test_debug_diverge.py`` checks that both together build what ``default_build`` builds).
FRONT_PASSES = (("backend", "DispatchSampling"), ("backend", "DispatchSortScan"), ("transform", "LegalizeOps"),
                ("transform", "RewriteDataflowReshape"))
BACK_PASSES = ("ToNonDataflow", "RemovePurityChecking", "CallTIRRewrite", "StaticPlanBlockMemory",
               "RewriteCUDAGraph", "LowerAllocTensor", "KillAfterLastUse", "LowerRuntimeBuiltin",
               "ComputePrimValue", "VMShapeLower", "AttachGlobalSymbol")


def _sequential(names: Any) -> Any:
    import tvm
    from tvm import relax

    return tvm.transform.Sequential([getattr(getattr(relax, where), name)() for where, name in names])


def front_half(mod: Any, target: dict[str, Any]) -> Any:
    """``mod`` after the first passes of ``default_build`` (:data:`FRONT_PASSES`), or ``mod`` when it is
    already lowered for the VM."""
    if _is_vm_lowered(mod):
        return mod
    try:
        with tvm_target(target):
            return _sequential(FRONT_PASSES)(mod)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"tvm.compile for {target.get('kind')} failed: {error_text(exc)}") from None


def back_half(front: Any, target: dict[str, Any]) -> Any:
    """The executable of a module after :func:`front_half`: the rest of ``default_build``
    (:data:`BACK_PASSES`), then ``tvm.compile`` (what :func:`build_module` builds from the module before the
    first half; a GPU target refuses unscheduled PrimFuncs as it does)."""
    import tvm

    if _is_vm_lowered(front):
        return build_module(front, target)
    if targets_mod.is_gpu_target(target):
        _refuse_unscheduled(front, target)
    tgt = tvm_target(target)
    try:
        with tgt:
            lowered = _sequential([("transform", name) for name in BACK_PASSES])(front)
        return tvm.compile(lowered, target=tgt, relax_pipeline=None)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"tvm.compile for {target.get('kind')} failed: {error_text(exc)}") from None


@dataclass
class Captured:
    """The values of one run: ``values`` by key (numpy arrays; lists for tuples), ``entries`` in binding
    order (inner entries after their parent), ``unmatched`` calls no binding claimed, ``inputs`` the arguments kept of calls that can be split
    (:mod:`.split_tvm`), ``module`` the module whose bindings the keys name (after the first passes)."""

    values: dict[str, Any]
    entries: list[Entry]
    unmatched: int
    inputs: dict[str, list[Any]] = field(default_factory=dict)
    module: Any = None


def capture(mod: Any, target: dict[str, Any], func_name: str, arrays: list[np.ndarray],
            check_cancel: Optional[Callable[[], None]] = None) -> Captured:
    """Build ``mod`` unchanged (as :func:`build_module`), run ``func_name`` once on ``arrays`` with the
    instrument and return every captured value (see the module docstring)."""
    import tvm

    front = front_half(mod, target)
    if check_cancel is not None:
        check_cancel()
    ex = back_half(front, target)
    dev = device_for(target)
    vm = prepacked_vm(tvm.relax.VirtualMachine(ex, dev), front)
    recorder = Recorder(front, func_name)
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    if isinstance(vm, PrepackedVM):  # weights packed once by <func>_transform_params, outside the capture
        if func_name in vm.lifted:
            args = vm.arguments(func_name, args)
        vm = vm.vm
    vm.set_instrument(recorder)
    try:
        vm[func_name](*args)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"running {func_name} failed: {error_text(exc)}") from None
    finally:
        vm.set_instrument(None)
    entries = recorder.top.entries
    recorder.derive(entries)
    return Captured(recorder.values, entries, recorder.unmatched, recorder.inputs, front)
