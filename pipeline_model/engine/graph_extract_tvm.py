"""Relax function -> graph JSON (the model of :mod:`pipeline_model.ir_graph`) and the texts the graph view
asks the engine for (engine side: imports TVM).

:func:`extract_graph_json` walks one Relax function and builds its graph JSON directly (what the engine's
``graph`` command sends); :func:`extract_graph` gives the same graph as a ``networkx.DiGraph``;
:func:`relax_functions` and :func:`default_function` name the functions a view can show;
:func:`prim_func_text` prints one PrimFunc.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import networkx as nx
import tvm
import tvm_ffi
from tvm import relax, tirx

from pipeline_model.ir_graph import GRAPH_FORMAT, GRAPH_VERSION, graph_from_json

__all__ = [
    "relax_functions",
    "default_function",
    "extract_graph",
    "extract_graph_json",
    "extract_graph_outline",
    "prim_func_text",
]

# Relax ops whose first argument is the callee and whose second argument is the tuple of real inputs.
_ARRAY_GET: Optional[Callable[[Any, int], Any]] = None
_ARRAY_SIZE: Optional[Callable[[Any], int]] = None
try:  # the FFI's own element access: an Array's Python __iter__ bounds-checks and re-reads its size per item
    from tvm_ffi.container import _ffi_api as _container_api

    _ARRAY_GET, _ARRAY_SIZE = _container_api.ArrayGetItem, _container_api.ArraySize
except (ImportError, AttributeError):  # pragma: no cover - another tvm_ffi: the public iteration
    pass


def _items(array: Any) -> list[Any]:
    """The elements of an FFI ``Array`` (a 50k-node function iterates ~150k of them: ~20 % of the walk)."""
    get, size = _ARRAY_GET, _ARRAY_SIZE
    if get is None or size is None or not isinstance(array, tvm_ffi.Array):
        return list(array)
    return [get(array, i) for i in range(size(array))]


_CALLEE_OPS = {
    "relax.call_tir",
    "relax.call_tir_with_grad",
    "relax.call_tir_inplace",
    "relax.call_dps_packed",
    "relax.call_pure_packed",
    "relax.call_inplace_packed",
    "relax.call_builtin_with_ctx",
}
_MAX_ATTR_TEXT = 200


def _composite_name(func: Any) -> Optional[str]:
    """The ``Composite`` (else ``Codegen``) attribute of a Relax function: the pattern or backend it
    was fused for, or None."""
    fattrs = func.attrs
    if fattrs is None:
        return None
    for key in ("Composite", "Codegen"):
        if key in fattrs:
            return str(fattrs[key])
    return None


def relax_functions(mod: Any) -> list[str]:
    """Return the names of the Relax functions of ``mod``: public ones first (sorted), then private ones."""
    public: list[str] = []
    private: list[str] = []
    for gvar, func in mod.functions.items():
        if not isinstance(func, relax.Function):
            continue
        attrs = func.attrs
        is_public = attrs is not None and "global_symbol" in attrs
        (public if is_public else private).append(gvar.name_hint)
    return sorted(public) + sorted(private)


def default_function(mod: Any) -> str | None:
    """Return the Relax function a view should show first: the one that runs
    (:func:`pipeline_model.scriptlib.functions.entry_function`), else the first public one."""
    from pipeline_model.scriptlib.functions import BuildError, entry_function

    try:
        return entry_function(mod)
    except BuildError:
        names = relax_functions(mod)
        return names[0] if names else None


def _text(value: Any) -> str:
    """Short, JSON-safe text of a TVM value."""
    text = "None" if value is None else str(value)
    if len(text) > _MAX_ATTR_TEXT:
        text = text[: _MAX_ATTR_TEXT - 1] + "\u2026"
    return text


# attrs class -> its ffi field names, or None for a mapping (DictAttrs): asked once per class, not per call
_ATTR_FIELDS: dict[type, Optional[list[str]]] = {}


def _attr_fields(attrs: Any) -> Optional[list[str]]:
    cls = type(attrs)
    if cls in _ATTR_FIELDS:
        return _ATTR_FIELDS[cls]
    try:  # DictAttrs (function attributes) behave like a mapping
        attrs.keys()
        names: Optional[list[str]] = None
    except Exception:  # noqa: BLE001 - op attrs have no keys(); use the ffi field table
        names = []
        info = getattr(cls, "__tvm_ffi_type_info__", None)
        while info is not None:
            names.extend(field.name for field in info.fields if field.name not in names)
            info = info.parent_type_info
    _ATTR_FIELDS[cls] = names
    return names


def _attrs_dict(attrs: Any, text: Callable[[Any], str] = _text) -> dict[str, str]:
    """Op attributes (an ``ir.Attrs`` object or a dict-like ``DictAttrs``) as a dict of strings (each value
    written by ``text``)."""
    if attrs is None:
        return {}
    out: dict[str, str] = {}
    names = _attr_fields(attrs)
    if names is None:
        for key in list(attrs.keys()):
            out[str(key)] = text(attrs[key])
        return out
    for name in names:
        try:
            out[name] = text(getattr(attrs, name))
        except Exception as exc:  # noqa: BLE001 - a field we cannot read is shown as such
            out[name] = f"<unreadable: {exc}>"
    return out


def _tensor_type_text(ty: Any, shape: list[int | str] | None, dtype: str | None, dims: Any) -> str | None:
    """``str(ty)`` of a plain tensor type built without the script printer (7-8 µs a call, thousands of
    calls per graph): only for a shape of int64 constants and bare symbolic variables, a known dtype
    and no virtual device; ``None`` otherwise (the caller prints). ``tests/test_ir_graph.py`` checks it
    against the printer on real modules."""
    if shape is None or dtype is None or getattr(ty, "vdevice", None) is not None:
        return None
    for dim in dims:
        if isinstance(dim, tirx.IntImm):
            if str(dim.ty) != "int64":
                return None
        elif not isinstance(dim, tirx.Var):
            return None
    inner = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = f'R.Tensor(({inner}), dtype="{dtype}")'
    return text if len(text) <= _MAX_ATTR_TEXT else None


def _dim_text(dim: Any, tirx: Any) -> str:
    """A symbolic dimension as the printer writes it: a plain variable by its name (no printer call)."""
    if isinstance(dim, tirx.Var):
        name = dim.name
        if isinstance(name, str) and name.isidentifier():
            return name
    return str(dim)


def _type_info(ty: Any) -> tuple[list[int | str] | None, str | None, str]:
    """(shape, dtype, type_text) of a Relax type; symbolic dims appear as their names."""
    if ty is None:
        return None, None, ""
    if isinstance(ty, relax.TensorType):
        dtype = str(ty.dtype) if ty.dtype is not None else None
        if dtype in ("", "void"):
            dtype = None
        shape: list[int | str] | None = None
        sh = ty.shape
        if isinstance(sh, relax.ShapeExpr):
            dims = list(sh.values)
            shape = [int(dim.value) if isinstance(dim, tirx.IntImm) else _dim_text(dim, tirx) for dim in dims]
            fast = _tensor_type_text(ty, shape, dtype, dims)
            if fast is not None:
                return shape, dtype, fast
        return shape, dtype, _text(ty)
    type_text = _text(ty)
    if isinstance(ty, relax.ShapeType) and ty.values is not None:
        return [int(v.value) if isinstance(v, tirx.IntImm) else str(v) for v in ty.values], None, type_text
    return None, None, type_text


def _by_structure(memo: dict[int, list[tuple[Any, Any]]], obj: Any, compute: Callable[[Any], Any]) -> Any:
    """``compute(obj)``, reused for a structurally equal object seen before (``memo``: structural hash ->
    [(object, result)]); hashing in C++ is far cheaper than the reads or printing ``compute`` does."""
    try:
        h = int(tvm_ffi.structural_hash(obj))
    except Exception:  # noqa: BLE001 - an unhashable object is computed every time
        return compute(obj)
    bucket = memo.setdefault(h, [])
    for known, result in bucket:
        if known.same_as(obj) or tvm_ffi.structural_equal(known, obj):
            return result
    result = compute(obj)
    bucket.append((obj, result))
    return result


class _Extractor:
    """Walks one Relax function and fills the node-link lists of its graph JSON (see the module docstring
    for the model). Nodes are dicts in binding order; edges are kept per source in first-use order (the
    order ``networkx`` gives), so :func:`graph_to_json` of :func:`extract_graph` and
    :func:`extract_graph_json` agree.

    With ``details=False`` (an outline) the walk makes the same nodes and edges but leaves each node's
    type (``shape``, ``dtype``, ``type_text``) and ``attrs`` empty; :meth:`fill` writes them on the nodes a
    view shows (what type-reading and printing cost is then paid for those only)."""

    def __init__(self, mod: Any, func: Any, name: str, details: bool = True) -> None:
        self.mod = mod
        self.func = func
        self.name = name
        self.details = details
        # outline: node id -> (its type, what its attrs come from: a binding, ("output", result) or None)
        # (its type is read then: one FFI read less per node in the walk)
        self._sources: dict[str, tuple[Any, Any]] = {}
        self.nodes: list[dict[str, Any]] = []
        self.node_by_id: dict[str, dict[str, Any]] = {}
        self.out_edges: dict[str, dict[str, dict[str, Any]]] = {}
        # node id by the variable's object address: a Var as a dict key is compared with Relax's __eq__
        # (operator overloading, ~4 us a lookup through is_prim_expr); addresses are fixed while the
        # function holds its variables
        self.var_node: dict[int, str] = {}
        self.used_ids: set[str] = set()
        self.const_count = 0
        self.groups: list[dict[str, Any]] = []
        self.functions = {gv.name_hint: f for gv, f in mod.functions.items()}
        # (structural hash of a type) -> [(type, (shape, dtype, type_text))]: a function has few distinct
        # types (a dozen in a 128-layer decoder), and hashing one in C++ is ~5x cheaper than reading its
        # shape field by field through the FFI.
        self._types: dict[int, list[tuple[Any, Any]]] = {}
        # Python class -> what it is for the walk (an isinstance chain per expression costs ~5 us through
        # TVM's ABC classes; the answer only depends on the class)
        self._kinds: dict[type, str] = {}
        # op name by the Op's address (an Op as a dict key hashes and compares through the FFI)
        self._op_names: dict[int, str] = {}
        self._texts: dict[int, list[tuple[Any, Any]]] = {}  # (structural hash) -> [(object, its text)]
        self._global_var_class = tvm.ir.GlobalVar
        self._callees: dict[int, tuple[str | None, str | None, str | None]] = {}  # GlobalVar address -> callee

    # -- helpers
    def _new_id(self, base: str) -> str:
        base = base or "v"
        node_id = base
        k = 2
        while node_id in self.used_ids:
            node_id = f"{base}#{k}"
            k += 1
        self.used_ids.add(node_id)
        return node_id

    def _type_info(self, ty: Any) -> tuple[Any, Any, str]:
        if ty is None:
            return None, None, ""
        return _by_structure(self._types, ty, _type_info)

    def _object_text(self, value: Any) -> str:
        """:func:`_text` of a value, a TVM object's text reused for a structurally equal one (a reshape's
        shape, a transpose's axes: thousands per large function, each a script-printer call otherwise)."""
        if not isinstance(value, tvm_ffi.Object):
            return _text(value)
        return _by_structure(self._texts, value, _text)

    def _add_node(self, node_id: str, kind: str, name: str, typed: Any, source: Any = None,
                  **extra: Any) -> dict[str, Any]:
        """Add a node; ``typed``: the expression whose ``ty`` is its type; ``source``: what :meth:`fill`
        reads its attrs from."""
        if self.details:
            shape, dtype, type_text = self._type_info(getattr(typed, "ty", None))
        else:
            shape, dtype, type_text = None, None, ""
            self._sources[node_id] = (typed, source)
        attrs: dict[str, Any] = {
            "id": node_id,
            "kind": kind,
            "name": name,
            "op": None,
            "callee": None,
            "callee_kind": None,
            "composite": None,
            "shape": list(shape) if shape is not None else None,
            "dtype": dtype,
            "type_text": type_text,
            "attrs": {},
            "group": None,
            "is_dataflow": False,
            **extra,
        }
        attrs["label"] = attrs["callee"] or attrs["op"] or name
        self.nodes.append(attrs)
        self.node_by_id[node_id] = attrs
        return attrs

    def _add_edge(self, src: str, dst: str, index: int) -> None:
        targets = self.out_edges.get(src)
        if targets is None:  # (not setdefault: no new dict made for each of ~60k edges)
            targets = self.out_edges[src] = {}
        edge = targets.get(dst)
        if edge is not None:
            edge["indices"].append(index)
        else:
            targets[dst] = {"source": src, "target": dst, "index": index, "indices": [index]}

    def _callee_of(self, expr: Any) -> tuple[str | None, str | None, str | None]:
        """(callee name, callee kind, composite) for a GlobalVar / ExternFunc / local Var callee; a
        module's GlobalVar (one object per function, called by thousands of bindings) answered once."""
        if type(expr) is self._global_var_class:
            handle = expr.__chandle__()
            hit = self._callees.get(handle)
            if hit is None:
                hit = self._callees[handle] = self._global_callee(expr)
            return hit
        return self._global_callee(expr)

    def _global_callee(self, expr: Any) -> tuple[str | None, str | None, str | None]:
        if isinstance(expr, tvm.ir.GlobalVar):
            name = expr.name_hint
            kind = None
            composite = None
            func = self.functions.get(name)
            if func is not None:
                if isinstance(func, relax.Function):
                    kind = "relax_function"
                    composite = _composite_name(func)
                elif isinstance(func, tvm.tirx.PrimFunc):
                    kind = "prim_func"
                else:
                    kind = type(func).__name__
            return name, kind, composite
        if isinstance(expr, relax.ExternFunc):
            return str(expr.global_symbol), "extern", None
        if isinstance(expr, tvm.ir.StringImm):
            return str(expr.value), "extern", None
        if isinstance(expr, tvm.ir.Var):
            return expr.name, "local", None
        return None, None, None

    def _kind(self, obj: Any) -> str:
        """What ``obj`` is for the walk: ``var``, ``tuple``, ``tuple_get_item``, ``constant``, ``call``,
        ``op``, ``function``, ``if``, ``shape``, ``match_cast`` or ``other`` (cached per class)."""
        cls = type(obj)
        kind = self._kinds.get(cls)
        if kind is None:
            kinds = (("match_cast", relax.MatchCast), ("var", tvm.ir.Var), ("tuple", tvm.ir.Tuple),
                     ("tuple_get_item", tvm.ir.TupleGetItem), ("constant", tvm.ir.Constant),
                     ("call", tvm.ir.Call), ("op", tvm.ir.Op), ("function", relax.Function),
                     ("if", relax.If), ("shape", relax.ShapeExpr))
            kind = next((name for name, base in kinds if isinstance(obj, base)), "other")
            self._kinds[cls] = kind
        return kind

    def _is_tensor_constant(self, expr: Any) -> bool:
        return isinstance(getattr(expr, "ty", None), relax.TensorType)

    def _inputs(self, expr: Any, dst: str, index: int, attrs: dict[str, str], texts: bool = True,
                edges: bool = True) -> None:
        """Add the data-flow edges (``edges``) of argument ``expr`` (position ``index``) into node ``dst``
        and write the text of an argument that is no node into ``attrs`` (``texts``)."""
        kind = self._kind(expr)
        if kind == "var":
            src = self.var_node.get(expr.__chandle__())
            if src is None:
                if texts:
                    attrs[f"arg{index}"] = _text(expr.name)
            elif edges:
                self._add_edge(src, dst, index)
            return
        if kind == "tuple":
            for field in _items(expr.fields):
                self._inputs(field, dst, index, attrs, texts, edges)
            return
        if kind == "tuple_get_item":
            self._inputs(expr.tuple_value, dst, index, attrs, texts, edges)
            return
        if kind == "constant" and self._is_tensor_constant(expr):
            if not edges:
                return
            self.const_count += 1
            node_id = self._new_id(f"const{self.const_count}")
            self._add_node(node_id, "constant", f"const{self.const_count}", expr, op="relax.const")
            self._add_edge(node_id, dst, index)
            return
        if texts:
            attrs[f"arg{index}"] = self._object_text(expr)

    # -- walk
    def run(self) -> dict[str, Any]:
        """Walk the function; return its graph JSON (see :func:`graph_to_json`)."""
        for param in _items(self.func.params):
            node_id = self._new_id(param.name)
            self.var_node[param.__chandle__()] = node_id
            self._add_node(node_id, "param", param.name, param)
        body = self.func.body
        if isinstance(body, relax.SeqExpr):
            for block_index, block in enumerate(_items(body.blocks)):
                is_df = isinstance(block, relax.DataflowBlock)
                if is_df:
                    self.groups.append({"id": block_index, "label": f"dataflow block {block_index}"})
                self._bindings(_items(block.bindings), block_index if is_df else None, is_df)
            result = body.body
        else:
            result = body
        out_id = self._new_id("output")
        out_node = self._add_node(out_id, "output", "output", result, ("output", result),
                                  op="return")
        out_attrs: dict[str, str] = {}
        self._inputs(result, out_id, 0, out_attrs, self.details)
        out_node["attrs"] = out_attrs
        out_edges, none = self.out_edges, {}  # type: dict[str, dict[str, dict[str, Any]]], dict[str, dict[str, Any]]
        edges = [edge for node in self.nodes for edge in out_edges.get(node["id"], none).values()]
        return {
            "format": GRAPH_FORMAT,
            "version": GRAPH_VERSION,
            "directed": True,
            "multigraph": False,
            "graph": {"function": self.name, "groups": self.groups},
            "nodes": self.nodes,
            "edges": edges,
        }

    def _bindings(self, bindings: list[Any], group: int | None, is_df: bool) -> None:
        """Add the node and the in-edges of each binding of a block (~42k for a 50k-node function: the
        walk's inner loop, with the state it touches in locals and the common binding, a variable bound to
        an op's call, read inline; any other goes through :meth:`_describe`). Same ids, node dicts (keys in
        the same order) and edges as one :meth:`_add_node` and :meth:`_inputs` per binding would make."""
        used, details, nodes, node_by_id = self.used_ids, self.details, self.nodes, self.node_by_id
        kinds, var_node, sources, op_names = self._kinds, self.var_node, self._sources, self._op_names
        out_edges = self.out_edges
        for binding in bindings:
            var = binding.var
            name = var.name  # each FFI field read once
            if name and name not in used:
                node_id = name
                used.add(name)
            else:
                node_id = self._new_id(name)
            value = binding.value
            call_op = value.op if kinds.get(type(value)) == "call" and kinds.get(type(binding)) == "other" else None
            op = op_names.get(call_op.__chandle__()) if call_op is not None and kinds.get(type(call_op)) == "op" \
                else None
            if op is not None and not details:
                # an op's call (the outline has no attrs to read): what _describe answers for it
                args, callee, callee_kind, composite = self._op_call(value, op)
                attrs: dict[str, str] = {}
            else:
                op, callee, callee_kind, composite, args, attrs = self._describe(binding, details)
            if details:
                shape, dtype, type_text = self._type_info(getattr(var, "ty", None))
                shape = list(shape) if shape is not None else None
            else:
                shape, dtype, type_text = None, None, ""
                sources[node_id] = (var, binding)
            node = {"id": node_id, "kind": "binding", "name": name, "op": op, "callee": callee,
                    "callee_kind": callee_kind, "composite": composite, "shape": shape, "dtype": dtype,
                    "type_text": type_text, "attrs": attrs, "group": group, "is_dataflow": is_df,
                    "label": callee or op or name}
            nodes.append(node)
            node_by_id[node_id] = node
            for index, arg in enumerate(args):
                # a tuple argument (call_tir's inputs) is its fields, each at this index (as _inputs does)
                for field in (_items(arg.fields) if kinds.get(type(arg)) == "tuple" else (arg,)):
                    src = var_node.get(field.__chandle__()) if kinds.get(type(field)) == "var" else None
                    if src is None:
                        self._inputs(field, node_id, index, attrs, details)
                        continue
                    # most arguments: a variable bound earlier (what _inputs and _add_edge do, inline)
                    targets = out_edges.get(src)
                    if targets is None:
                        out_edges[src] = {node_id: {"source": src, "target": node_id, "index": index,
                                                    "indices": [index]}}
                        continue
                    edge = targets.get(node_id)
                    if edge is not None:
                        edge["indices"].append(index)
                    else:
                        targets[node_id] = {"source": src, "target": node_id, "index": index, "indices": [index]}
            var_node[var.__chandle__()] = node_id

    def _op_call(self, value: Any, op: str) -> tuple[list[Any], Any, Any, Any]:
        """(argument expressions, callee, callee kind, composite) of a call of the op named ``op``: a call_tir-like
        op's first argument is its callee (and no argument)."""
        args = _items(value.args)
        if op in _CALLEE_OPS and args:
            callee, callee_kind, composite = self._callee_of(args[0])
            if callee is not None:
                return args[1:], callee, callee_kind, composite
        return args, None, None, None

    def _describe(self, binding: Any, texts: bool) -> tuple[str, Any, Any, Any, list[Any], dict[str, str]]:
        """(op, callee, callee kind, composite, argument expressions, attrs) of a binding; the attrs (texts
        of op attributes and values) only with ``texts``."""
        value = binding.value
        attrs: dict[str, str] = {}
        op: str
        callee = callee_kind = composite = None
        args: list[Any] = []
        kinds = self._kinds
        kind = kinds.get(type(value)) or self._kind(value)
        if (kinds.get(type(binding)) or self._kind(binding)) == "match_cast":
            op = "match_cast"
            if texts:
                attrs["ty"] = _text(binding.ty)
            args = [value]
        elif kind == "call":
            call_op = value.op
            op_kind = kinds.get(type(call_op)) or self._kind(call_op)
            if op_kind == "op":
                op = self._op_names.get(call_op.__chandle__())  # type: ignore[assignment]
                if op is None:
                    op = self._op_names[call_op.__chandle__()] = str(call_op.name)
                args, callee, callee_kind, composite = self._op_call(value, op)
            else:
                op = "call"
                callee, callee_kind, composite = self._callee_of(call_op)
                args = _items(value.args)
                if op_kind == "var" and call_op.__chandle__() in self.var_node:
                    # calling a local function / closure bound earlier: it flows into the call
                    args = [call_op, *args]
            if texts:
                attrs.update(_attrs_dict(value.attrs, self._object_text))
        elif kind == "tuple":
            op = "tuple"
            args = _items(value.fields)
        elif kind == "tuple_get_item":
            op = "tuple_get_item"
            if texts:
                attrs["index"] = str(int(value.index))
            args = [value.tuple_value]
        elif kind == "var":
            op = "var"
            args = [value]
        elif kind == "constant" and self._is_tensor_constant(value):
            op = "relax.const"
        elif kind == "function":
            op = "function"
            composite = _composite_name(value)
        elif kind == "if":
            op = "if"
            args = [value.cond]
        else:
            op = "shape" if kind == "shape" else type(value).__name__.lower()
            if texts:
                attrs["value"] = _text(value)
        return op, callee, callee_kind, composite, args, attrs

    def fill(self, nodes: list[dict[str, Any]]) -> None:
        """Write the type and attrs of each outline node in ``nodes`` (as the full walk writes them)."""
        for node in nodes:
            source = self._sources.pop(node["id"], None)
            if source is None:
                continue
            typed, origin = source
            shape, dtype, type_text = self._type_info(getattr(typed, "ty", None))
            node["shape"], node["dtype"] = (list(shape) if shape is not None else None), dtype
            node["type_text"] = type_text
            if origin is None:  # a parameter or a constant: no attrs
                continue
            attrs: dict[str, str]
            if isinstance(origin, tuple):  # ("output", the function's result)
                attrs = {}
                self._inputs(origin[1], node["id"], 0, attrs, edges=False)
            else:
                args, attrs = self._describe(origin, True)[4:]
                for index, arg in enumerate(args):
                    self._inputs(arg, node["id"], index, attrs, edges=False)
            node["attrs"] = attrs


def extract_graph(mod: Any, function: str | None = None) -> nx.DiGraph:
    """Build the node graph of one Relax function of ``mod`` (default: :func:`default_function`).

    Raises ``KeyError`` naming the available functions when ``function`` is not a Relax function of ``mod``.
    """
    return graph_from_json(extract_graph_json(mod, function))


def _relax_function(mod: Any, function: str | None) -> tuple[str, Any]:
    """(name, function) of the Relax function ``function`` of ``mod`` (None: :func:`default_function`)."""
    names = relax_functions(mod)
    if function is None:
        function = default_function(mod)
        if function is None:
            raise KeyError("the module has no Relax function to show")
    if function not in names:
        raise KeyError(f"no Relax function {function!r} in the module; it has: {', '.join(names) or 'none'}")
    func = mod[function]
    assert isinstance(func, relax.Function)
    return function, func


def extract_graph_json(mod: Any, function: str | None = None) -> dict[str, Any]:
    """The graph JSON (:func:`graph_to_json`'s format) of one Relax function of ``mod``, built directly
    (what the engine sends; no ``networkx`` graph in between). Raises like :func:`extract_graph`."""
    name, func = _relax_function(mod, function)
    return _Extractor(mod, func, name).run()


def extract_graph_outline(mod: Any, function: str | None = None,
                          ) -> tuple[dict[str, Any], Callable[[list[dict[str, Any]]], None]]:
    """``(graph, fill)``: the graph JSON of :func:`extract_graph_json` with every node's type and attrs
    left empty (an outline: what a collapsed view needs of the nodes it does not show, at a fraction of
    the walk), and ``fill(nodes)``, which writes them on the given nodes of that graph as the full walk
    would (the nodes a view shows). Raises like :func:`extract_graph`."""
    name, func = _relax_function(mod, function)
    walk = _Extractor(mod, func, name, details=False)
    return walk.run(), walk.fill


def prim_func_text(mod: Any, name: str) -> str:
    """TVMScript text of the PrimFunc ``name`` of ``mod`` (raises ``KeyError`` naming what exists)."""
    prim_names = sorted(gv.name_hint for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc))
    if name not in prim_names:
        shown = ", ".join(prim_names[:30]) + (" ..." if len(prim_names) > 30 else "")
        raise KeyError(f"no PrimFunc {name!r} in the module; PrimFuncs: {shown or 'none'}")
    return mod[name].script()
