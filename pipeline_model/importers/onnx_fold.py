"""Folding an ONNX graph's shape arithmetic once its input dimensions are pinned (TVM-free; needs ``onnx``).

Exporters (``torch.onnx.export(dynamo=True)``) write a dynamic axis as ``Shape`` → ``Gather`` → ``Range`` /
``Concat`` → ``Reshape`` chains. With the inputs pinned (:mod:`pipeline_model.importers.dims`) those chains are
constants, but TVM 0.27's ``from_onnx`` still turns a ``Range`` over a computed length into a fresh symbolic
variable (``range_len_0``) and then fails on a ``Reshape`` of a tensor without a shape. :func:`fold_shape_subgraphs`
evaluates, with ONNX's reference evaluator, every node whose inputs are all known constants (``Constant``
nodes, integer initializers, ``Shape`` of a tensor whose inferred shape is static) and replaces it by a
``Constant`` node. Float weights are never read: a node that reads one is not folded.
"""

from __future__ import annotations

from typing import Any

#: Ops never folded (random, or with side inputs the reference evaluator cannot know).
_NEVER = {"RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike", "Multinomial", "Bernoulli",
          "If", "Loop", "Scan"}
#: A folded value larger than this many elements stays a node (no model-sized constants are made).
MAX_FOLD_ELEMENTS = 1 << 16


def fold_shape_subgraphs(model: Any, rounds: int = 6) -> int:
    """Fold constant shape arithmetic of ``model`` (an ``onnx.ModelProto``) in place; returns the nodes folded.

    The exported script embeds this function's source, so the app and the script import the same graph.
    """
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper
    from onnx.reference import ReferenceEvaluator

    graph = model.graph
    opset = [o for o in model.opset_import if o.domain in ("", "ai.onnx")]
    int_types = (onnx.TensorProto.INT64, onnx.TensorProto.INT32)
    known: dict[str, Any] = {t.name: numpy_helper.to_array(t) for t in graph.initializer
                             if t.data_type in int_types and int(np.prod(t.dims or [1])) <= MAX_FOLD_ELEMENTS}
    folded = 0
    for _ in range(rounds):
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
        static: dict[str, list[int]] = {}
        for v in list(inferred.graph.value_info) + list(inferred.graph.input) + list(inferred.graph.output):
            t = v.type.tensor_type
            if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
                static[v.name] = [int(d.dim_value) for d in t.shape.dim]
        for t in graph.initializer:
            static.setdefault(t.name, [int(d) for d in t.dims])
        changed = 0
        for i, node in enumerate(graph.node):
            if node.domain not in ("", "ai.onnx") or node.op_type in _NEVER:
                continue
            if node.op_type == "Constant":
                attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
                if node.output[0] not in known and "value" in attrs:
                    known[node.output[0]] = numpy_helper.to_array(attrs["value"])
                continue
            inputs = [n for n in node.input if n]
            if node.op_type == "Shape" and inputs and (inputs[0] in known or inputs[0] in static):
                dims = list(known[inputs[0]].shape) if inputs[0] in known else static[inputs[0]]
                attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
                value = np.array(dims[attrs.get("start", 0):attrs.get("end", len(dims))], dtype=np.int64)
                known[node.output[0]] = value
                graph.node[i].CopyFrom(helper.make_node("Constant", [], [node.output[0]], name=node.name or f"folded_{i}",
                                                        value=numpy_helper.from_array(value)))
                changed += 1
                continue
            if inputs and all(n in known for n in inputs):
                feeds = {n: known[n] for n in inputs}
            else:
                continue
            if any(v.size > MAX_FOLD_ELEMENTS for v in feeds.values()):
                continue
            sub = helper.make_graph(
                [node], "fold",
                [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape) for n, v in feeds.items()],
                [helper.make_tensor_value_info(o, 0, None) for o in node.output if o])
            try:
                outs = ReferenceEvaluator(helper.make_model(sub, opset_imports=opset)).run(None, feeds)
            except Exception:  # noqa: BLE001 - an op the reference evaluator cannot run stays a node
                continue
            outs = [np.asarray(o) for o in outs]
            if len(outs) != 1 or outs[0].size > MAX_FOLD_ELEMENTS:
                continue
            known[node.output[0]] = outs[0]
            graph.node[i].CopyFrom(helper.make_node("Constant", [], [node.output[0]], name=node.name or f"folded_{i}",
                                                    value=numpy_helper.from_array(outs[0])))
            changed += 1
        folded += changed
        if not changed:
            break
    return folded
