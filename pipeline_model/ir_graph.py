"""Relax function -> node graph (``networkx.DiGraph``), its JSON form, and graph comparison.

The extraction functions (:func:`relax_functions`, :func:`extract_graph`, :func:`prim_func_text`) need TVM and
import it lazily, so this module itself imports without TVM: the GUI process uses :func:`graph_from_json`,
:func:`changed_nodes` and :func:`layered_layout` on the JSON that the engine sends.

Graph model (one graph per Relax function):

* nodes -- ``kind`` is ``param`` (function parameter), ``binding`` (one per binding of the function body),
  ``constant`` (one node per use of a tensor constant) or ``output`` (the function's return value).
  Attributes: ``name`` (var name), ``op`` (e.g. ``relax.matmul``; ``call`` for calls of functions,
  ``tuple``/``tuple_get_item``/``var``/``const``/``function``/``if``/``match_cast``/... for other bindings),
  ``callee`` (PrimFunc/function/extern name for ``relax.call_tir``, ``relax.call_dps_packed``, calls of
  GlobalVars or local functions, else None), ``callee_kind`` (``prim_func``, ``relax_function``, ``extern``,
  ``local`` or None), ``composite`` (the callee's ``Composite``/``Codegen`` attribute, else None), ``label``
  (callee or op, what a view shows as title), ``shape`` (list of ints and symbolic names, or None),
  ``dtype`` (str or None), ``type_text`` (the type as TVMScript prints it), ``attrs`` (op attributes and
  non-tensor arguments, as a dict of strings), ``group`` (dataflow block index or None), ``is_dataflow``.
* edges -- data flow ``source -> target`` (a var use, also through tuples and ``TupleGetItem`` arguments);
  ``index`` is the first argument position, ``indices`` all of them.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Optional

import networkx as nx

from pipeline_model.layout import layered_layout  # re-exported: the contract lists it here

GRAPH_FORMAT = "relax-pipeline-studio.graph"
GRAPH_VERSION = 1

__all__ = [
    "GRAPH_FORMAT",
    "GRAPH_VERSION",
    "relax_functions",
    "default_function",
    "extract_graph",
    "extract_graph_json",
    "graph_to_json",
    "graph_from_json",
    "changed_nodes",
    "node_signatures",
    "prim_func_text",
    "layered_layout",
]

# Relax ops whose first argument is the callee and whose second argument is the tuple of real inputs.
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


# --------------------------------------------------------------------------- TVM side (lazy imports)



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
    from tvm import relax  # noqa: PLC0415 - lazy: the GUI imports this module without TVM

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


def _attrs_dict(attrs: Any) -> dict[str, str]:
    """Op attributes (an ``ir.Attrs`` object or a dict-like ``DictAttrs``) as a dict of strings."""
    if attrs is None:
        return {}
    out: dict[str, str] = {}
    try:  # DictAttrs (function attributes) behave like a mapping
        keys = list(attrs.keys())
    except Exception:  # noqa: BLE001 - op attrs have no keys(); use the ffi field table
        keys = None
    if keys is not None:
        for key in keys:
            out[str(key)] = _text(attrs[key])
        return out
    info = getattr(type(attrs), "__tvm_ffi_type_info__", None)
    while info is not None:
        for field in info.fields:
            if field.name not in out:
                try:
                    out[field.name] = _text(getattr(attrs, field.name))
                except Exception as exc:  # noqa: BLE001 - a field we cannot read is shown as such
                    out[field.name] = f"<unreadable: {exc}>"
        info = info.parent_type_info
    return out


def _tensor_type_text(ty: Any, shape: list[int | str] | None, dtype: str | None, dims: Any) -> str | None:
    """``str(ty)`` of a plain tensor type built without the script printer (7-8 µs a call, thousands of
    calls per graph): only for a shape of int64 constants and bare symbolic variables, a known dtype
    and no virtual device; ``None`` otherwise (the caller prints). ``tests/test_ir_graph.py`` checks it
    against the printer on real modules."""
    from tvm import tirx  # noqa: PLC0415

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
    from tvm import relax, tirx  # noqa: PLC0415

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


class _Extractor:
    """Walks one Relax function and fills the node-link lists of its graph JSON (see the module docstring
    for the model). Nodes are dicts in binding order; edges are kept per source in first-use order (the
    order ``networkx`` gives), so :func:`graph_to_json` of :func:`extract_graph` and
    :func:`extract_graph_json` agree."""

    def __init__(self, mod: Any, func: Any, name: str) -> None:
        self.mod = mod
        self.func = func
        self.name = name
        self.nodes: list[dict[str, Any]] = []
        self.node_by_id: dict[str, dict[str, Any]] = {}
        self.out_edges: dict[str, dict[str, dict[str, Any]]] = {}
        self.var_node: dict[Any, str] = {}
        self.used_ids: set[str] = set()
        self.const_count = 0
        self.groups: list[dict[str, Any]] = []
        self.functions = {gv.name_hint: f for gv, f in mod.functions.items()}
        # (structural hash of a type) -> [(type, (shape, dtype, type_text))]: a function has few distinct
        # types (a dozen in a 128-layer decoder), and hashing one in C++ is ~5x cheaper than reading its
        # shape field by field through the FFI.
        self._types: dict[int, list[tuple[Any, tuple[Any, Any, str]]]] = {}
        # Python class -> what it is for the walk (an isinstance chain per expression costs ~5 us through
        # TVM's ABC classes; the answer only depends on the class)
        self._kinds: dict[type, str] = {}
        self._op_names: dict[Any, str] = {}

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
        import tvm_ffi  # noqa: PLC0415

        try:
            h = int(tvm_ffi.structural_hash(ty))
        except Exception:  # noqa: BLE001 - an unhashable type is read field by field
            return _type_info(ty)
        bucket = self._types.setdefault(h, [])
        for known, info in bucket:
            if known.same_as(ty) or tvm_ffi.structural_equal(known, ty):
                return info
        info = _type_info(ty)
        bucket.append((ty, info))
        return info

    def _add_node(self, node_id: str, kind: str, name: str, ty: Any, **extra: Any) -> dict[str, Any]:
        shape, dtype, type_text = self._type_info(ty)
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
        }
        attrs.update(extra)
        attrs["label"] = attrs["callee"] or attrs["op"] or name
        self.nodes.append(attrs)
        self.node_by_id[node_id] = attrs
        return attrs

    def _add_edge(self, src: str, dst: str, index: int) -> None:
        targets = self.out_edges.setdefault(src, {})
        edge = targets.get(dst)
        if edge is not None:
            edge["indices"].append(index)
        else:
            targets[dst] = {"source": src, "target": dst, "index": index, "indices": [index]}

    def _callee_of(self, expr: Any) -> tuple[str | None, str | None, str | None]:
        """(callee name, callee kind, composite) for a GlobalVar / ExternFunc / local Var callee."""
        import tvm  # noqa: PLC0415
        from tvm import relax  # noqa: PLC0415

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
            import tvm  # noqa: PLC0415
            from tvm import relax  # noqa: PLC0415

            kinds = (("match_cast", relax.MatchCast), ("var", tvm.ir.Var), ("tuple", tvm.ir.Tuple),
                     ("tuple_get_item", tvm.ir.TupleGetItem), ("constant", tvm.ir.Constant),
                     ("call", tvm.ir.Call), ("op", tvm.ir.Op), ("function", relax.Function),
                     ("if", relax.If), ("shape", relax.ShapeExpr))
            kind = next((name for name, base in kinds if isinstance(obj, base)), "other")
            self._kinds[cls] = kind
        return kind

    def _is_tensor_constant(self, expr: Any) -> bool:
        from tvm import relax  # noqa: PLC0415

        return isinstance(getattr(expr, "ty", None), relax.TensorType)

    def _inputs(self, expr: Any, dst: str, index: int, attrs: dict[str, str]) -> None:
        """Add the data-flow edges of argument ``expr`` (position ``index``) into node ``dst``."""
        kind = self._kind(expr)
        if kind == "var":
            src = self.var_node.get(expr)
            if src is not None:
                self._add_edge(src, dst, index)
            else:
                attrs[f"arg{index}"] = _text(expr.name)
            return
        if kind == "tuple":
            for field in expr.fields:
                self._inputs(field, dst, index, attrs)
            return
        if kind == "tuple_get_item":
            self._inputs(expr.tuple_value, dst, index, attrs)
            return
        if kind == "constant" and self._is_tensor_constant(expr):
            self.const_count += 1
            node_id = self._new_id(f"const{self.const_count}")
            self._add_node(node_id, "constant", f"const{self.const_count}", expr.ty, op="relax.const")
            self._add_edge(node_id, dst, index)
            return
        attrs[f"arg{index}"] = _text(expr)

    # -- walk
    def run(self) -> dict[str, Any]:
        """Walk the function; return its graph JSON (see :func:`graph_to_json`)."""
        from tvm import relax  # noqa: PLC0415

        for param in self.func.params:
            node_id = self._new_id(param.name)
            self.var_node[param] = node_id
            self._add_node(node_id, "param", param.name, param.ty)
        body = self.func.body
        if isinstance(body, relax.SeqExpr):
            for block_index, block in enumerate(body.blocks):
                is_df = isinstance(block, relax.DataflowBlock)
                if is_df:
                    self.groups.append({"id": block_index, "label": f"dataflow block {block_index}"})
                for binding in block.bindings:
                    self._binding(binding, block_index if is_df else None, is_df)
            result = body.body
        else:
            result = body
        out_id = self._new_id("output")
        out_node = self._add_node(out_id, "output", "output", getattr(result, "ty", None), op="return")
        out_attrs: dict[str, str] = {}
        self._inputs(result, out_id, 0, out_attrs)
        out_node["attrs"] = out_attrs
        edges = [edge for node in self.nodes for edge in self.out_edges.get(node["id"], {}).values()]
        return {
            "format": GRAPH_FORMAT,
            "version": GRAPH_VERSION,
            "directed": True,
            "multigraph": False,
            "graph": {"function": self.name, "groups": self.groups},
            "nodes": self.nodes,
            "edges": edges,
        }

    def _binding(self, binding: Any, group: int | None, is_df: bool) -> None:
        var = binding.var
        value = binding.value
        node_id = self._new_id(var.name)
        attrs: dict[str, str] = {}
        op: str
        callee = callee_kind = composite = None
        args: list[Any] = []
        kind = self._kind(value)
        if self._kind(binding) == "match_cast":
            op = "match_cast"
            attrs["ty"] = _text(binding.ty)
            args = [value]
        elif kind == "call":
            call_op = value.op
            if self._kind(call_op) == "op":
                op = self._op_names.get(call_op)  # type: ignore[assignment]
                if op is None:
                    op = self._op_names[call_op] = str(call_op.name)
                args = list(value.args)
                if op in _CALLEE_OPS and args:
                    callee, callee_kind, composite = self._callee_of(args[0])
                    if callee is not None:
                        args = args[1:]
            else:
                op = "call"
                callee, callee_kind, composite = self._callee_of(call_op)
                args = list(value.args)
                if self._kind(call_op) == "var" and call_op in self.var_node:
                    # calling a local function / closure bound earlier: it flows into the call
                    args = [call_op, *args]
            attrs.update(_attrs_dict(value.attrs))
        elif kind == "tuple":
            op = "tuple"
            args = list(value.fields)
        elif kind == "tuple_get_item":
            op = "tuple_get_item"
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
        elif kind == "shape":
            op = "shape"
            attrs["value"] = _text(value)
        else:
            op = type(value).__name__.lower()
            attrs["value"] = _text(value)
        node = self._add_node(
            node_id,
            "binding",
            var.name,
            var.ty,
            op=op,
            callee=callee,
            callee_kind=callee_kind,
            composite=composite,
            group=group,
            is_dataflow=is_df,
        )
        for index, arg in enumerate(args):
            self._inputs(arg, node_id, index, attrs)
        node["attrs"] = attrs
        self.var_node[var] = node_id


def extract_graph(mod: Any, function: str | None = None) -> nx.DiGraph:
    """Build the node graph of one Relax function of ``mod`` (default: :func:`default_function`).

    Raises ``KeyError`` naming the available functions when ``function`` is not a Relax function of ``mod``.
    """
    return graph_from_json(extract_graph_json(mod, function))


def extract_graph_json(mod: Any, function: str | None = None) -> dict[str, Any]:
    """The graph JSON (:func:`graph_to_json`'s format) of one Relax function of ``mod``, built directly
    (what the engine sends; no ``networkx`` graph in between). Raises like :func:`extract_graph`."""
    from tvm import relax  # noqa: PLC0415

    names = relax_functions(mod)
    if function is None:
        function = default_function(mod)
        if function is None:
            raise KeyError("the module has no Relax function to show")
    if function not in names:
        raise KeyError(f"no Relax function {function!r} in the module; it has: {', '.join(names) or 'none'}")
    func = mod[function]
    assert isinstance(func, relax.Function)
    return _Extractor(mod, func, function).run()


def prim_func_text(mod: Any, name: str) -> str:
    """TVMScript text of the PrimFunc ``name`` of ``mod`` (raises ``KeyError`` naming what exists)."""
    import tvm  # noqa: PLC0415

    prim_names = sorted(gv.name_hint for gv, f in mod.functions.items() if isinstance(f, tvm.tirx.PrimFunc))
    if name not in prim_names:
        shown = ", ".join(prim_names[:30]) + (" ..." if len(prim_names) > 30 else "")
        raise KeyError(f"no PrimFunc {name!r} in the module; PrimFuncs: {shown or 'none'}")
    return mod[name].script()


# --------------------------------------------------------------------------- TVM-free side


def graph_to_json(g: nx.DiGraph) -> dict[str, Any]:
    """Node-link JSON of a graph made by :func:`extract_graph` (JSON-safe; node order preserved)."""
    nodes = []
    for node_id, data in g.nodes(data=True):
        item = {"id": str(node_id)}
        item.update(data)
        nodes.append(item)
    edges = []
    for src, dst, data in g.edges(data=True):
        item = {"source": str(src), "target": str(dst)}
        item.update(data)
        edges.append(item)
    graph_attrs = {k: v for k, v in g.graph.items()}
    data = {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "directed": True,
        "multigraph": False,
        "graph": graph_attrs,
        "nodes": nodes,
        "edges": edges,
    }
    # fail here (engine side) rather than in the GUI if something is not JSON-safe
    json.dumps(data)
    return data


def graph_from_json(data: dict[str, Any]) -> nx.DiGraph:
    """Rebuild the DiGraph from :func:`graph_to_json` output (raises ``ValueError`` on malformed input)."""
    if not isinstance(data, dict) or "nodes" not in data:
        raise ValueError("graph JSON: expected an object with 'nodes' and 'edges'")
    if data.get("format", GRAPH_FORMAT) != GRAPH_FORMAT:
        raise ValueError(f"graph JSON: unknown format {data.get('format')!r}")
    g = nx.DiGraph(**dict(data.get("graph") or {}))
    for i, node in enumerate(data["nodes"]):
        if "id" not in node:
            raise ValueError(f"graph JSON: nodes[{i}] has no 'id'")
        attrs = {k: v for k, v in node.items() if k != "id"}
        g.add_node(node["id"], **attrs)
    for i, edge in enumerate(data.get("edges", data.get("links", []))):
        src, dst = edge.get("source"), edge.get("target")
        if src not in g or dst not in g:
            raise ValueError(f"graph JSON: edges[{i}] refers to an unknown node ({src!r} -> {dst!r})")
        attrs = {k: v for k, v in edge.items() if k not in ("source", "target")}
        g.add_edge(src, dst, **attrs)
    return g


def _local_signature(node: dict[str, Any]) -> tuple:
    shape = node.get("shape")
    return (
        node.get("kind"),
        node.get("callee") or node.get("op"),
        tuple(shape) if isinstance(shape, list) else shape,
        node.get("dtype"),
        node.get("name") if node.get("kind") == "param" else None,
    )


def node_signatures(data: dict[str, Any]) -> dict[str, str]:
    """A stable signature per node: (op/callee, shape, dtype) of the node and of its inputs, in argument order.

    The signature ignores var names and identities (except parameter names), so a node that a pass left as
    it was keeps its signature even if it was re-created.
    """
    sha1 = hashlib.sha1
    out: dict[str, str] = {}
    for nid, (own, ins) in _signature_keys(data).items():
        text = repr(own) + "<-" + "|".join(repr(sig) for sig in ins)  # an input missing from the graph: None
        out[nid] = sha1(text.encode("utf-8")).hexdigest()
    return out


def _signature_keys(data: dict[str, Any]) -> dict[str, tuple]:
    """What :func:`node_signatures` hashes, as hashable tuples (node id -> (local signature, local
    signatures of its inputs in argument order)): comparing these within one process needs no printing
    or hashing of text (a 50,000-node pair compares in a fraction of the time)."""
    nodes = {n["id"]: n for n in data.get("nodes", [])}
    inputs: dict[str, list[tuple[int, str]]] = {nid: [] for nid in nodes}
    for edge in data.get("edges", data.get("links", [])):
        dst = edge.get("target")
        if dst in inputs:
            inputs[dst].append((int(edge.get("index", 0) or 0), edge.get("source")))
    local = {nid: _local_signature(n) for nid, n in nodes.items()}
    out: dict[str, tuple] = {}
    for nid in nodes:
        ins = inputs[nid]
        if len(ins) > 1:
            ins.sort(key=lambda t: (t[0], str(t[1])))
        out[nid] = (local[nid], tuple(local.get(src) for _, src in ins))
    _release(inputs)
    return out


def _release(d: dict) -> None:
    """Empty a large dict item by item. Dropped at once (a function returning), its ~10^5 tuples and lists
    are freed in one C-level cascade that holds the GIL for tens of milliseconds (measured: 35 ms at 50,000
    nodes), stalling the GUI thread while the graph view's worker thread compares graphs; freed one item per
    Python step, other threads get the GIL in between."""
    while d:
        d.popitem()


def changed_nodes(before_json: dict[str, Any] | None, after_json: dict[str, Any]) -> set[str]:
    """Ids of nodes of ``after_json`` whose signature (see :func:`node_signatures`) is new.

    Signatures are compared as multisets: if ``before`` had two equal nodes and ``after`` has three, the
    extra one (the last in order) counts as changed. ``before_json`` None means everything is new.
    """
    after = _signature_keys(after_json)
    if before_json is None:
        return set(after)
    # Counted in a Python loop, not with Counter(iterable): that is one C call hashing 50,000 signature
    # tuples (~15-30 ms) that holds the GIL the GUI thread needs; a loop lets other threads in.
    available: dict[tuple, int] = {}
    before = _signature_keys(before_json)
    for sig in before.values():
        available[sig] = available.get(sig, 0) + 1
    _release(before)
    changed: set[str] = set()
    for nid in (n["id"] for n in after_json.get("nodes", [])):
        sig = after[nid]
        if available.get(sig, 0) > 0:
            available[sig] -= 1
        else:
            changed.add(nid)
    _release(available)
    _release(after)
    return changed


def synthetic_graph_json(n_nodes: int = 5000, *, legalized: bool = False, seed: int = 0) -> dict[str, Any]:
    """A realistic Relax-like graph JSON (stacked transformer blocks with weights, residuals, a tuple split)
    of about ``n_nodes`` nodes, in the :func:`graph_to_json` format; for benchmarks and tests of the views.

    ``legalized`` turns every op binding into a ``relax.call_tir`` of a PrimFunc named after the op.
    """
    import random  # noqa: PLC0415

    rnd = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    hidden = 768

    def add(kind: str, name: str, op: str | None, shape: list[Any], inputs: list[str], group: int | None,
            dtype: str = "float32", attrs: dict[str, str] | None = None) -> str:
        callee = None
        callee_kind = None
        if legalized and kind == "binding" and op and op.startswith("relax.") and op != "relax.const":
            callee = op.split(".")[-1] + (f"{len(nodes)}" if rnd.random() < 0.3 else "")
            callee_kind = "prim_func"
            op = "relax.call_tir"
        node_id = name
        dims = ", ".join(str(d) for d in shape)
        nodes.append({
            "id": node_id, "kind": kind, "name": name, "op": op, "callee": callee, "callee_kind": callee_kind,
            "composite": None, "label": callee or op or name, "shape": shape, "dtype": dtype,
            "type_text": f'R.Tensor(({dims}), dtype="{dtype}")', "attrs": dict(attrs or {}),
            "group": group, "is_dataflow": group is not None,
        })
        for k, src in enumerate(inputs):
            edges.append({"source": src, "target": node_id, "index": k, "indices": [k]})
        return node_id

    counter = [0]

    def lv() -> str:
        counter[0] += 1
        return f"lv{counter[0]}"

    x = add("param", "x", None, ["n", hidden], [], None)
    layer = 0
    while len(nodes) < n_nodes - 40:
        p = f"l{layer}_"
        w = {k: add("param", p + k, None, [hidden, hidden] if k.startswith("w") else [hidden], [], None)
             for k in ("ln1_g", "ln1_b", "wq", "wk", "wv", "wo", "ln2_g", "ln2_b", "w1", "w2")}
        g0 = 0
        h = add("binding", lv(), "relax.nn.layer_norm", ["n", hidden], [x, w["ln1_g"], w["ln1_b"]], g0,
                attrs={"axes": "[-1]", "epsilon": "1e-05"})
        q = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wq"]], g0)
        k = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wk"]], g0)
        v = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["wv"]], g0)
        q = add("binding", lv(), "relax.reshape", ["n", 12, 64], [q], g0)
        k = add("binding", lv(), "relax.reshape", ["n", 12, 64], [k], g0)
        v = add("binding", lv(), "relax.reshape", ["n", 12, 64], [v], g0)
        q = add("binding", lv(), "relax.permute_dims", [12, "n", 64], [q], g0, attrs={"axes": "[1, 0, 2]"})
        kt = add("binding", lv(), "relax.permute_dims", [12, 64, "n"], [k], g0, attrs={"axes": "[1, 2, 0]"})
        v = add("binding", lv(), "relax.permute_dims", [12, "n", 64], [v], g0, attrs={"axes": "[1, 0, 2]"})
        s = add("binding", lv(), "relax.matmul", [12, "n", "n"], [q, kt], g0)
        c = add("constant", f"const_{layer}", "relax.const", [], [], None)
        s = add("binding", lv(), "relax.divide", [12, "n", "n"], [s, c], g0)
        s = add("binding", lv(), "relax.nn.softmax", [12, "n", "n"], [s], g0, attrs={"axis": "-1"})
        o = add("binding", lv(), "relax.matmul", [12, "n", 64], [s, v], g0)
        o = add("binding", lv(), "relax.permute_dims", ["n", 12, 64], [o], g0)
        o = add("binding", lv(), "relax.reshape", ["n", hidden], [o], g0)
        o = add("binding", lv(), "relax.matmul", ["n", hidden], [o, w["wo"]], g0)
        x = add("binding", lv(), "relax.add", ["n", hidden], [x, o], g0)
        h = add("binding", lv(), "relax.nn.layer_norm", ["n", hidden], [x, w["ln2_g"], w["ln2_b"]], g0)
        h = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["w1"]], g0)
        h = add("binding", lv(), "relax.nn.gelu", ["n", hidden], [h], g0)
        if layer % 3 == 0:
            t = add("binding", lv(), "relax.split", [], [h], g0, attrs={"indices_or_sections": "2", "axis": "1"})
            nodes[-1]["shape"] = None
            nodes[-1]["dtype"] = None
            nodes[-1]["type_text"] = "T.Tuple(R.Tensor((n, 384)), R.Tensor((n, 384)))"
            a = add("binding", lv(), "tuple_get_item", ["n", hidden // 2], [t], g0, attrs={"index": "0"})
            b = add("binding", lv(), "tuple_get_item", ["n", hidden // 2], [t], g0, attrs={"index": "1"})
            h = add("binding", lv(), "relax.concat", ["n", hidden], [a, b], g0, attrs={"axis": "1"})
        h = add("binding", lv(), "relax.matmul", ["n", hidden], [h, w["w2"]], g0)
        x = add("binding", lv(), "relax.add", ["n", hidden], [x, h], g0)
        layer += 1
    add("output", "output", "return", ["n", hidden], [x], None)
    return {
        "format": GRAPH_FORMAT,
        "version": GRAPH_VERSION,
        "directed": True,
        "multigraph": False,
        "graph": {"function": "main", "groups": [{"id": 0, "label": "dataflow block 0"}]},
        "nodes": nodes,
        "edges": edges,
    }
