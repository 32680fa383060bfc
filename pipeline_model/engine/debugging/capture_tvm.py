"""Every intermediate value of one run, captured through the VM instrument (engine side, imports TVM).

The module is built as the reference build builds it (:func:`build_module`: ``tvm.compile``'s ``default_build``
pipeline for a module not yet lowered for the VM, nothing more for one already lowered), split in two halves
(:func:`front_half`, :func:`back_half`): after the first (dispatch, ``LegalizeOps``, ``RewriteDataflowReshape``)
every binding of the entry function calls a PrimFunc, a packed function or a Relax function; the second
completes the build.

While the entry function runs, ``relax.VirtualMachine.set_instrument`` sees every call but the VM's own
builtins (``vm.builtin.*``, skipped, but for ``vm.builtin.reshape``, an ``R.reshape``): after each call a copy of its output is kept (the destination arguments
of a ``call_tir``/``call_dps_packed``, the in-place arguments of a ``call_tir_inplace``, the return value of a
packed or Relax function; in a module lowered for the VM, the last tensor argument of a call), so memory reuse
does not matter. Calls are matched to the bindings that made them by callee and occurrence order within the
Relax function running (the entry function, or a Relax function it calls: its bindings are *inner* values
with the calling binding as parent, e.g. the operators inside a fused function before ``FuseTIR``); the call
stack at run time says which call instance an inner value belongs to. Aliases, tuple items and reshapes of
captured values are derived without a call.

Keys are unique: a binding's key is its name, or ``name#2``, ``name#3`` ... for the second, third binding of
that name in the same function (the scheme of the graph's node ids, :mod:`pipeline_model.engine.graph_extract_tvm`),
prefixed by its call's key inside a called function (``lv#2/add``). Names are labels only: every entry also
carries its place in the dataflow (``inputs``: the ids of what it reads, through called functions' parameters
to the caller's arguments, down to ``param:NAME`` / ``const:...`` leaves; ``op``; ``ty``), which
:mod:`pipeline_model.engine.debugging.align` matches across a step.
"""

from __future__ import annotations

import hashlib
import re
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
#: The VM builtin ``R.reshape`` runs as (the one builtin whose result is kept: a binding's value).
RESHAPE = "vm.builtin.reshape"
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
    inputs: tuple[str, ...] = ()  # ids of the values it reads (entry keys, or param:/const:/lit: leaves)
    op: str = ""  # what computes it, without made-up numbering (an operator, a PrimFunc's stem, "tuple" ...)
    ty: str = ""  # dtype and shape as text (symbolic dimensions by name)
    returns: Optional[str] = None  # for a "relax" entry: the id of the called function's returned value


@dataclass
class Layout:
    """The entries of one Relax function and, per callee symbol, its call entries in binding order."""

    entries: list[Entry] = field(default_factory=list)
    sites: dict[str, list[Entry]] = field(default_factory=dict)
    returns: Optional[str] = None  # the id of the value the function returns (one tensor), else None


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
           cache: Optional[dict[tuple[str, Optional[str]], Layout]] = None,
           params: Optional[list[str]] = None, lowered: Optional[bool] = None) -> Layout:
    """The :class:`Entry` list of ``func_name`` (inner entries of called Relax functions follow their parent);
    ``params``: the ids its parameters stand for (the caller's arguments; ``param:NAME`` for the entry)."""
    from tvm import relax

    cache = {} if cache is None else cache
    if (func_name, prefix) in cache:
        return cache[(func_name, prefix)]
    out = Layout()
    func = mod[func_name]
    if not isinstance(func, relax.Function) or not isinstance(func.body, relax.SeqExpr):
        return out
    lowered = _is_vm_lowered(mod) if lowered is None else lowered  # prints the module: once per layout tree
    ids = list(params or [])
    names: dict[Any, str] = {p: (ids[i] if i < len(ids) else f"param:{p.name}") for i, p in enumerate(func.params)}
    scope = BindingScope(names, {p.name for p in func.params}, prefix)
    for block in func.body.blocks:
        for binding in block.bindings:
            found = _binding_entry(mod, binding, scope, lowered)
            if found is None:
                continue
            entry, holder = found
            scope.ids[holder] = entry.key
            out.entries.append(entry)
            if entry.kind in ("dps", "inplace", "packed", "relax", "lowered", "reshape"):
                out.sites.setdefault(entry.symbol, []).append(entry)
            if entry.sub is not None and depth < MAX_DEPTH:
                inner = layout(mod, entry.sub, entry.key, depth + 1, cache, list(entry.inputs), lowered)
                entry.returns = inner.returns
                out.entries += inner.entries
    returned = scope.resolve(func.body.body)
    out.returns = returned[0] if len(returned) == 1 else None
    cache[(func_name, prefix)] = out
    return out


class BindingScope:
    """The ids of one function's values while its bindings are read: ``ids`` (a var -> its entry key or the
    leaf/argument id it stands for), the names taken (keys unique as the graph's node ids are)."""

    def __init__(self, ids: dict[Any, str], taken: set[str], prefix: Optional[str]) -> None:
        self.ids = ids
        self.taken = taken
        self.prefix = prefix

    def key(self, name: str) -> str:
        """A key for a new binding named ``name``: ``name``, else ``name#2``, ``name#3`` ..."""
        local, k = name or "v", 2
        while local in self.taken:
            local, k = f"{name}#{k}", k + 1
        self.taken.add(local)
        return local if self.prefix is None else f"{self.prefix}/{local}"

    def resolve(self, expr: Any) -> list[str]:
        """The ids of the values ``expr`` reads (a tuple: its fields; a constant: its dtype, shape and data)."""
        import tvm
        from tvm import relax

        if isinstance(expr, relax.Var):
            return [self.ids.get(expr, f"?:{expr.name}")]
        if isinstance(expr, tvm.ir.Constant):
            return [_const_id(expr)]
        if isinstance(expr, relax.Tuple):
            return [i for f in expr.fields for i in self.resolve(f)]
        if isinstance(expr, (tvm.ir.GlobalVar, relax.ExternFunc)):
            return []
        return ["lit:" + str(expr)[:80]]

    def resolve_all(self, exprs: Any) -> tuple[str, ...]:
        """The ids ``exprs`` read, in order (:meth:`resolve` of each)."""
        return tuple(i for e in exprs for i in self.resolve(e))


def _const_id(const: Any) -> str:
    """``const:`` + dtype, shape and a digest of the first values (weights bound as constants differ by them)."""
    try:
        data = const.data.numpy()
    except Exception:  # noqa: BLE001 - a constant that cannot be read: by type only
        return "const:" + _type_text(const.ty)
    digest = hashlib.sha1(np.ascontiguousarray(data.reshape(-1)[:256]).tobytes()).hexdigest()[:12]
    return f"const:{data.dtype}{list(data.shape)}:{digest}"


def _type_text(ty: Any) -> str:
    """dtype and shape of a tensor (tuple) type as text; symbolic dimensions by name."""
    from tvm import relax

    if isinstance(ty, relax.TupleType):
        return "(" + ",".join(_type_text(f) for f in ty.fields) + ")"
    if isinstance(ty, relax.TensorType):
        shape = getattr(ty, "shape", None)
        dims = [str(d) for d in shape.values] if shape is not None and hasattr(shape, "values") else ["?"]
        return f"{ty.dtype}[{','.join(dims)}]"
    return type(ty).__name__


#: A made-up numbering at the end of a name (``matmul1``, ``fused_add_3``): ignored in ``Entry.op``.
_NUMBERED = re.compile(r"_?\d+$")


def _stem(name: str) -> str:
    return _NUMBERED.sub("", name) or name


def _op_text(mod: Any, value: Any) -> str:
    """What a call computes, without made-up numbering: an operator's name, a called function's stem (its
    ``Composite`` pattern name when it has one)."""
    import tvm
    from tvm import relax

    op = value.op
    if isinstance(op, tvm.ir.Op):
        if op.name in _DPS_OPS + _PACKED_OPS and value.args:
            callee = value.args[0]
            name = getattr(callee, "name_hint", None) or str(getattr(callee, "global_symbol", op.name))
            return "call:" + _stem(str(name))
        return str(op.name)
    if isinstance(op, tvm.ir.GlobalVar):
        func = mod[op]
        composite = (func.attrs or {}).get("Composite") if isinstance(func, relax.Function) else None
        return "fn:" + (str(composite) if composite else _stem(op.name_hint))
    if isinstance(op, relax.ExternFunc):
        return "extern:" + str(op.global_symbol)
    return "call"


def _binding_entry(mod: Any, binding: Any, scope: BindingScope, lowered: bool) -> Optional[tuple[Entry, Any]]:
    """The entry of one binding and the variable that then holds its value (in a module lowered for the VM,
    the output argument of a call); in a module not lowered, every binding gets one (``kind`` "struct" when
    it runs no call: its place in the dataflow still counts)."""
    import tvm
    from tvm import relax

    var, value = binding.var, binding.value
    name, ty, holder = var.name, var.ty, var
    if isinstance(value, relax.Call):
        args = list(value.args)
        if isinstance(value.op, tvm.ir.Op) and value.op.name == "relax.reshape" and value.args[0] in scope.ids:
            source = scope.ids[value.args[0]]
            return Entry(scope.key(name), name, scope.prefix, "relax.reshape", "reshape", symbol=RESHAPE,
                         source=source, shape=_static_shape(ty), inputs=scope.resolve_all(args),
                         op="relax.reshape", ty=_type_text(ty)), var
        found = _call_entry(mod, value, lowered)
        if found is not None and lowered and found["kind"] == "lowered":
            tensors = [a for a in args if isinstance(a, relax.Var) and isinstance(a.ty, relax.TensorType)]
            if not tensors or found["symbol"].startswith("vm.builtin."):
                return None
            holder = tensors[-1]
            name, ty = holder.name, holder.ty
            found["n_in"] = max(i for i, a in enumerate(args) if a.same_as(holder))
            args = [a for a in args if not a.same_as(holder)]
            found["split"] = isinstance(value.op, tvm.ir.GlobalVar) and isinstance(
                mod[value.op], tvm.tirx.PrimFunc) and has_intermediates(mod[value.op])
        elif isinstance(value.op, tvm.ir.Op) and value.op.name in _DPS_OPS + _PACKED_OPS:
            args = args[1:]
        if found is None or found["symbol"].startswith("vm.builtin."):
            if lowered:
                return None
            return _struct(scope, name, ty, _op_text(mod, value), scope.resolve_all(args)), var
        return Entry(scope.key(name), name, scope.prefix, found["callee"], found["kind"], symbol=found["symbol"],
                     n_in=found.get("n_in", 0), n_out=found.get("n_out", 1), inplace=found.get("inplace", ()),
                     sub=found.get("sub"), shape=_static_shape(ty), split=bool(found.get("split")),
                     inputs=scope.resolve_all(args), op=_op_text(mod, value), ty=_type_text(ty)), holder
    if isinstance(value, relax.Var) and value in scope.ids:
        source = scope.ids[value]
        return Entry(scope.key(name), name, scope.prefix, "", "alias", source=source, shape=_static_shape(ty),
                     inputs=(source,), op="alias", ty=_type_text(ty)), var
    if isinstance(value, relax.TupleGetItem) and value.tuple_value in scope.ids:
        source = scope.ids[value.tuple_value]
        return Entry(scope.key(name), name, scope.prefix, "", "item", source=source, index=int(value.index),
                     shape=_static_shape(ty), inputs=(source,), op=f"item{int(value.index)}",
                     ty=_type_text(ty)), var
    if lowered:
        return None
    kind = "tuple" if isinstance(value, relax.Tuple) else type(value).__name__.lower()
    return _struct(scope, name, ty, kind, scope.resolve_all([value])), var


def _struct(scope: BindingScope, name: str, ty: Any, op: str, inputs: tuple[str, ...]) -> Entry:
    """An entry that runs no instrumented call (a tuple, a shape computation ...): no value, a place."""
    return Entry(scope.key(name), name, scope.prefix, op, "struct", shape=_static_shape(ty), inputs=inputs, op=op,
                 ty=_type_text(ty))


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
        # R.reshape runs as vm.builtin.reshape: kept (a reshape to a symbolic shape is not derived otherwise)
        self.reshapes = any(e.kind == "reshape" for e in self.top.entries)

    def __call__(self, func: Any, symbol: Any, before: bool, ret: Any, *args: Any) -> int:
        name = str(symbol)
        if name.startswith("vm.builtin.") and not (self.reshapes and name == RESHAPE):
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
            if entry.kind == "reshape" and (not isinstance(value, np.ndarray) or (
                    entry.shape is not None and tuple(value.shape) != entry.shape)):
                return 0  # not the value of that binding: left to derive()
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
            if entry.source is None or entry.source not in self.values or entry.key in self.values:
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
    returns: Optional[str] = None  # the id of the value the entry function returns


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
    return Captured(recorder.values, entries, recorder.unmatched, recorder.inputs, front, recorder.top.returns)
