"""The arguments a Relax function runs on: seeded random inputs (or a user's ``.npy``/``.npz``) and weights.

Shared by the engine (``build_run``, ``compare``, ``profile``, ``export_library``) and exported scripts
(this module's code is copied into them): inputs are seeded random arrays from the entry function's
parameter types (symbolic dims from ``dims``, default 1), integer inputs that index a table stay below
its size (:func:`integer_input_bounds`); weights are the model's when it has them, else seeded random
arrays of the right shapes. TVM is imported inside the functions.
"""

from __future__ import annotations

import os
import re
from typing import Any, Optional

import numpy as np

from pipeline_model.scriptlib.functions import BuildError, first_line, relax_function_names

DEFAULT_SEED = 0
DEFAULT_DIM = 1


def input_count(func: Any) -> int:
    """How many leading parameters of ``func`` are inputs (its ``num_input`` attribute, else all)."""
    attrs = func.attrs
    if attrs is not None and "num_input" in attrs:
        return int(attrs["num_input"])
    return len(func.params)


def _tensor_param(name: str, ty: Any) -> dict[str, Any]:
    """Name, shape (ints and symbolic names) and dtype of a tensor parameter ``name`` of type ``ty``."""
    import tvm

    if not isinstance(ty, tvm.relax.TensorType) or ty.shape is None:
        raise BuildError(
            f"parameter {name!r} of the entry function is not a tensor of known rank ({ty}); "
            "only tensor parameters can be fed"
        )
    dims: list[Any] = []
    for d in ty.shape.values:
        if isinstance(d, tvm.tirx.IntImm):
            dims.append(int(d))
        elif isinstance(d, tvm.tirx.Var):
            dims.append(str(d.name))
        else:
            dims.append(str(d))
    return {"name": name, "shape": dims, "dtype": str(ty.dtype)}


def param_types(func: Any) -> list[dict[str, Any]]:
    """Name, shape (ints and symbolic names) and dtype of each parameter of ``func``."""
    return [_tensor_param(str(var.name), var.ty) for var in func.params]


#: ``relax.LiftTransformParams`` moves the weight-only work of ``f`` (weights pre-packed for a schedule,
#: folded constants) into ``f + TRANSFORM_SUFFIX``, which takes the weights as one tuple and returns what
#: the lifted ``f`` takes after its inputs.
TRANSFORM_SUFFIX = "_transform_params"


def transform_param_types(func: Any, lifted: Any = None) -> list[dict[str, Any]]:
    """The weights a ``<f>_transform_params`` function takes (its tuple's fields), named as ``f``'s
    parameters were: the names of the bindings that read the tuple's fields; for a field the function passes
    through unchanged (``return model_params``, or ``model_params[j]`` as output ``k``), the name of the
    lifted ``f``'s ``k``-th weight parameter (``lifted``, optional); else ``param_<i>``."""
    import tvm

    params = list(func.params)
    if len(params) != 1 or not isinstance(params[0].ty, tvm.relax.TupleType):
        return param_types(func)
    names: dict[int, str] = {}
    for block in getattr(func.body, "blocks", []):
        for binding in block.bindings:
            value = binding.value
            if isinstance(value, tvm.relax.TupleGetItem) and value.tuple_value.same_as(params[0]):
                names.setdefault(int(value.index), str(binding.var.name))
    if lifted is not None:
        for index, name in _passed_through(func, params[0], lifted).items():
            names.setdefault(index, name)
    return [_tensor_param(names.get(i, f"param_{i}"), ty) for i, ty in enumerate(params[0].ty.fields)]


def _passed_through(func: Any, tuple_param: Any, lifted: Any) -> dict[int, str]:
    """Field index of the transform's tuple parameter -> the name of the lifted function's weight parameter
    it is passed to unchanged."""
    import tvm

    weights = [str(v.name) for v in list(lifted.params)[input_count(lifted):]]
    body = func.body
    result = body.body if isinstance(body, tvm.relax.SeqExpr) else body
    bound: dict[Any, Any] = {}
    for block in getattr(body, "blocks", []):
        for binding in block.bindings:
            bound[binding.var] = binding.value
    while isinstance(result, tvm.relax.Var) and result in bound:
        result = bound[result]
    if isinstance(result, tvm.relax.Var) and result.same_as(tuple_param):
        n = len(tuple_param.ty.fields)
        return {i: weights[i] for i in range(n)} if len(weights) == n else {}
    out: dict[int, str] = {}
    if isinstance(result, tvm.relax.Tuple):
        for k, field in enumerate(result.fields):
            while isinstance(field, tvm.relax.Var) and field in bound:
                field = bound[field]
            if (isinstance(field, tvm.relax.TupleGetItem) and field.tuple_value.same_as(tuple_param)
                    and k < len(weights)):
                out.setdefault(int(field.index), weights[k])
    return out


def caller_signature(mod: Any, func_name: str) -> tuple[list[dict[str, Any]], int]:
    """The parameters a caller gives ``func_name`` (:func:`param_types`) and how many are inputs: its own,
    or when ``relax.LiftTransformParams`` made ``<func_name>_transform_params``, its inputs then the
    original weights (what that function takes; :class:`PrepackedVM` runs it once and calls the lifted
    function with its result)."""
    func = mod[func_name]
    ptypes, n_in = param_types(func), input_count(func)
    lifted = func_name + TRANSFORM_SUFFIX
    if lifted not in relax_function_names(mod):
        return ptypes, n_in
    return ptypes[:n_in] + transform_param_types(mod[lifted], func), n_in


class PrepackedVM:
    """A Relax VM whose functions lifted by ``relax.LiftTransformParams`` take their original arguments:
    calling ``vm[f](*inputs, *weights)`` (or ``vm.time_evaluator(f, ...)``) runs ``f_transform_params`` on
    the weights once (again only for other weight objects) and calls ``f`` with the inputs and its result,
    so timings measure ``f`` alone. Everything else is the VM's own."""

    def __init__(self, vm: Any, lifted: dict[str, int]) -> None:
        self.vm, self.lifted = vm, lifted
        self._packed: dict[str, tuple[tuple[Any, ...], list[Any]]] = {}

    def __getattr__(self, attr: str) -> Any:
        if attr in ("vm", "lifted", "_packed"):  # not set yet (a copy being built): no recursion into self.vm
            raise AttributeError(attr)
        return getattr(self.vm, attr)

    def __getitem__(self, name: str) -> Any:
        func = self.vm[name]
        if name not in self.lifted:
            return func
        return lambda *args: func(*self.arguments(name, args))

    def arguments(self, name: str, args: Any) -> list[Any]:
        """The arguments of the lifted ``name``: the inputs, then the weights transformed (once)."""
        n_in = self.lifted[name]
        weights = tuple(args[n_in:])
        cached = self._packed.get(name)
        if cached is None or len(cached[0]) != len(weights) or any(a is not b for a, b in zip(cached[0], weights)):
            packed = self.vm[name + TRANSFORM_SUFFIX](list(weights))
            cached = (weights, [packed] if hasattr(packed, "numpy") else list(packed))
            self._packed[name] = cached
        return list(args[:n_in]) + cached[1]

    def time_evaluator(self, func_name: str, dev: Any, *args: Any, **kwargs: Any) -> Any:
        """The VM's ``time_evaluator`` of ``func_name``; for a lifted function it takes the original arguments."""
        evaluator = self.vm.time_evaluator(func_name, dev, *args, **kwargs)
        if func_name not in self.lifted:
            return evaluator
        return lambda *call_args: evaluator(*self.arguments(func_name, call_args))


def prepacked_vm(vm: Any, mod: Any) -> Any:
    """``vm`` itself, or a :class:`PrepackedVM` when ``mod`` has functions lifted by ``LiftTransformParams``."""
    names = relax_function_names(mod)
    lifted = {n: input_count(mod[n]) for n in names if n + TRANSFORM_SUFFIX in names}
    return PrepackedVM(vm, lifted) if lifted else vm


def concrete_shape(param: dict[str, Any], dims: dict[str, int]) -> tuple[int, ...]:
    """The shape of ``param`` with its symbolic dims from ``dims`` (default :data:`DEFAULT_DIM`)."""
    shape = []
    for d in param["shape"]:
        if isinstance(d, int):
            shape.append(d)
        elif str(d).isidentifier():
            shape.append(int(dims.get(str(d), DEFAULT_DIM)))
        else:
            raise BuildError(
                f"parameter {param['name']!r} has the shape expression {d!r}: give inputs from a .npz file"
            )
    return tuple(shape)


def random_array(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, weight: bool,
                  high: Optional[int] = None) -> np.ndarray:
    """Seeded random data that keeps activations bounded (weights scaled by 1/sqrt(fan-in)).

    Integer data is drawn from ``[0, high)`` (default ``[0, 2)``): ``high`` is the table size of the
    embedding lookup the input feeds (see :func:`integer_input_bounds`).
    """
    np_dtype = np.dtype(dtype) if dtype != "bfloat16" else np.dtype("float32")
    if np_dtype.kind == "f":
        if weight and len(shape) >= 2:
            data = rng.standard_normal(shape) / np.sqrt(max(shape[-1], 1))
        elif weight:
            data = rng.uniform(0.5, 1.0, shape)  # biases, norm scales, variances: positive is safe
        else:
            data = rng.standard_normal(shape)
        return np.asarray(data).astype(np_dtype)
    if np_dtype.kind == "b":
        return np.asarray(rng.integers(0, 2, shape)).astype(bool)
    if np_dtype.kind in "iu":
        return np.asarray(rng.integers(0, max(1, int(high or 2)), shape)).astype(np_dtype)
    raise BuildError(f"cannot make random data of dtype {dtype}")


#: Ops through which an integer input keeps its values (its ids reach the lookup unchanged).
_VALUE_PRESERVING_OPS = {"relax.astype", "relax.reshape", "relax.expand_dims", "relax.squeeze",
                         "relax.permute_dims", "relax.flatten", "relax.broadcast_to", "relax.strided_slice",
                         "relax.take_along_axis", "relax.add"}
#: Lookup ops: (op name, index of the table argument, index of the indices argument).
_LOOKUP_OPS = {"relax.take": (0, 1), "relax.gather_elements": (0, 1), "relax.gather_nd": (0, 1)}


def integer_input_bounds(mod: Any, func_name: str) -> dict[str, int]:
    """Upper bounds (exclusive) for integer inputs of ``func_name`` that index a table.

    An input feeding ``R.take(table, ids, axis)`` (embeddings, ONNX ``Gather``), directly or through
    value-preserving ops (``astype``, ``reshape``, ...), must stay below ``table.shape[axis]``; random
    inputs for it are drawn from ``[0, bound)``. Inputs whose bound cannot be derived are left out.
    """
    import tvm

    if func_name not in relax_function_names(mod):
        return {}
    func = mod[func_name]
    origin: dict[Any, str] = {}
    for var in func.params:
        ty = var.ty
        if isinstance(ty, tvm.relax.TensorType) and str(ty.dtype).startswith(("int", "uint")):
            origin[var] = str(var.name)
    bounds: dict[str, int] = {}
    body = func.body
    for block in getattr(body, "blocks", []):
        for binding in block.bindings:
            value = binding.value
            if not isinstance(value, tvm.relax.Call) or not hasattr(value.op, "name"):
                continue
            op = str(value.op.name)
            args = list(value.args)
            if op in _VALUE_PRESERVING_OPS and args and args[0] in origin:
                origin[binding.var] = origin[args[0]]
            elif op == "relax.where" and len(args) == 3 and (args[1] in origin or args[2] in origin):
                # ONNX Gather wraps negative ids: where(ids < 0, ids + n, ids)
                origin[binding.var] = origin[args[2] if args[2] in origin else args[1]]
            elif op in _LOOKUP_OPS:
                t_i, i_i = _LOOKUP_OPS[op]
                if len(args) <= max(t_i, i_i) or args[i_i] not in origin:
                    continue
                table_ty = args[t_i].ty
                axis = int(getattr(value.attrs, "axis", 0) or 0) if value.attrs is not None else 0
                shape = getattr(table_ty, "shape", None)
                if shape is None or not hasattr(shape, "values"):
                    continue
                dims = list(shape.values)
                if not dims:
                    continue
                dim = dims[axis if axis >= 0 else len(dims) + axis] if -len(dims) <= axis < len(dims) else None
                if isinstance(dim, tvm.tirx.IntImm):
                    name = origin[args[i_i]]
                    bounds[name] = min(bounds.get(name, int(dim)), int(dim))
    return bounds


def load_user_inputs(path: str, names: list[str]) -> list[np.ndarray]:
    """The arrays for inputs ``names`` from a ``.npy`` (one input) or ``.npz`` file (by name, else in order)."""
    if not os.path.isfile(path):
        raise BuildError(f"inputs file {path}: no such file")
    try:
        data = np.load(path, allow_pickle=False)
    except Exception as exc:  # noqa: BLE001
        raise BuildError(f"inputs file {path}: not a readable .npy/.npz file ({first_line(exc)})") from None
    if isinstance(data, np.ndarray):
        if len(names) != 1:
            raise BuildError(f"inputs file {path}: a .npy holds one array but the model takes "
                             f"{len(names)} inputs ({', '.join(names)}); use a .npz")
        return [data]
    with data:
        keys = list(data.files)
        if all(n in keys for n in names):
            return [data[n] for n in names]
        if len(keys) == len(names):
            return [data[k] for k in keys]  # positional, in file order
        raise BuildError(f"inputs file {path}: it holds {', '.join(keys) or 'nothing'} but the model takes "
                         f"{', '.join(names)} (name the arrays like the inputs, or give exactly "
                         f"{len(names)} arrays in order)")


def check_dim_bounds(func: Any, func_name: str, dims: dict[str, int]) -> None:
    """:class:`BuildError` when a value of ``dims`` is outside the bounds ``func`` declares for that symbolic
    dim (``tir_var_lower_bound``/``tir_var_upper_bound``, e.g. from ``torch.export.Dim("seq", max=64)``):
    the built module plans its memory for the upper bound and cannot run past it."""
    attrs = func.attrs if func.attrs is not None else {}
    for key, word, outside in (("tir_var_upper_bound", "at most", lambda v, b: v > b),
                               ("tir_var_lower_bound", "at least", lambda v, b: v < b)):
        bounds = {str(k): int(v) for k, v in dict(attrs[key]).items()} if key in attrs else {}
        for name, value in dims.items():
            if name in bounds and outside(int(value), bounds[name]):
                raise BuildError(f"input shape {name}={value}: {func_name} declares {name} {word} {bounds[name]} "
                                 "(the bounds of the model's dynamic axis, e.g. torch.export.Dim's min/max)")


def make_arguments(
    mod: Any,
    func_name: str,
    params: Optional[dict[str, np.ndarray]],
    inputs: Optional[dict[str, Any]] = None,
    bounds: Optional[dict[str, int]] = None,
) -> tuple[list[np.ndarray], list[dict[str, Any]]]:
    """The arguments for ``func_name``: inputs then weights, as numpy arrays, and a description of each.

    ``inputs`` is ``{"seed": int, "dims": {name: int}}`` or ``{"path": ".npy/.npz file"}``;
    ``bounds``: exclusive upper bounds of integer inputs (:func:`integer_input_bounds`; default: derived
    from ``mod`` itself).
    """
    if bounds is None:
        bounds = integer_input_bounds(mod, func_name)
    inputs = dict(inputs or {})
    ptypes, n_in = caller_signature(mod, func_name)
    if params and n_in == len(ptypes):
        n_in = len([p for p in ptypes if p["name"] not in params])
    seed = int(inputs.get("seed", DEFAULT_SEED))
    rng = np.random.default_rng(seed)
    dims = {str(k): int(v) for k, v in (inputs.get("dims") or {}).items()}
    arrays: list[np.ndarray] = []
    described: list[dict[str, Any]] = []
    input_params = ptypes[:n_in]
    known = [d for p in ptypes for d in p["shape"] if isinstance(d, str) and d.isidentifier()]
    unknown = sorted(set(dims) - set(known))
    if unknown:
        have = ", ".join(dict.fromkeys(known)) or "none (all its dimensions are static)"
        raise BuildError(f"input shape {', '.join(unknown)}: {func_name} has no symbolic dimension of that name; "
                         f"its symbolic dimensions: {have}")
    check_dim_bounds(mod[func_name], func_name, dims)
    if inputs.get("path"):
        user = load_user_inputs(str(inputs["path"]), [p["name"] for p in input_params])
        for p, arr in zip(input_params, user):
            if len(arr.shape) != len(p["shape"]):
                raise BuildError(f"input {p['name']!r}: the file gives shape {list(arr.shape)}, the model expects "
                                 f"rank {len(p['shape'])} {p['shape']}")
            for d, n in zip(p["shape"], arr.shape):
                if isinstance(d, int) and d != n:
                    raise BuildError(f"input {p['name']!r}: the file gives shape {list(arr.shape)}, the model "
                                     f"expects {p['shape']}")
                if isinstance(d, str) and d.isidentifier():
                    if dims.setdefault(d, int(n)) != int(n):
                        raise BuildError(f"input {p['name']!r}: dimension {d} is {n} here but {dims[d]} elsewhere")
            if str(arr.dtype) != p["dtype"]:
                arr = arr.astype(p["dtype"])
            arrays.append(contiguous(arr))
            described.append({"name": p["name"], "shape": list(arr.shape), "dtype": p["dtype"], "source": "file"})
    else:
        for p in input_params:
            high = bounds.get(p["name"])
            arr = random_array(rng, concrete_shape(p, dims), p["dtype"], weight=False, high=high)
            arrays.append(arr)
            entry = {"name": p["name"], "shape": list(arr.shape), "dtype": p["dtype"],
                     "source": f"random(seed={seed})"}
            if high is not None and np.dtype(p["dtype"]).kind in "iu":
                entry["range"] = [0, int(high)]
            described.append(entry)
    wrng = np.random.default_rng(seed + 1)
    for p in ptypes[n_in:]:
        shape = concrete_shape(p, dims)
        value = lookup_param(params, p["name"]) if params else None
        if value is not None:
            if tuple(value.shape) != shape:
                raise BuildError(f"weight {p['name']!r}: the model's value has shape {list(value.shape)}, "
                                 f"the function expects {list(shape)}")
            arr, source = contiguous(value.astype(p["dtype"], copy=False)), "model"
        else:
            arr, source = random_array(wrng, shape, p["dtype"], weight=True), f"random(seed={seed + 1})"
        arrays.append(arr)
        described.append({"name": p["name"], "shape": list(shape), "dtype": p["dtype"], "source": source,
                          "weight": True})
    return arrays, described


def arguments_by_name(mod: Any, func_name: str, values: dict[str, np.ndarray],
                      default: list[np.ndarray]) -> list[np.ndarray]:
    """The arguments of ``mod``'s ``func_name`` taken from ``values`` by parameter name (modules compared side
    by side may differ in signature: one with its weights bound as constants takes only its inputs);
    ``default`` when a parameter has no value there."""
    names = [p["name"] for p in caller_signature(mod, func_name)[0]]
    if any(name not in values for name in names):
        return default
    return [values[name] for name in names]


def contiguous(arr: np.ndarray) -> np.ndarray:
    """``arr`` as a C-contiguous array of the same shape.

    Unlike ``np.ascontiguousarray`` (which returns at least 1-d arrays), a 0-d (scalar) array keeps its
    shape ``()``: ONNX models exported by torch's dynamo exporter have 0-d initializers, and the VM
    refuses a ``(1,)`` tensor for a ``R.Tensor((), ...)`` parameter ("Mismatched ... ndim").
    """
    arr = np.asarray(arr)
    return arr if arr.flags.c_contiguous else np.array(arr, order="C", copy=True)


def lookup_param(params: dict[str, np.ndarray], name: str) -> Optional[np.ndarray]:
    """The model's value of weight ``name`` (exactly, else with non-word characters read as ``_``)."""
    if name in params:
        return params[name]
    canon = re.sub(r"\W", "_", name)
    for key, value in params.items():
        if re.sub(r"\W", "_", key) == canon:
            return value
    return None
