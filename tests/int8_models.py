"""Tiny quantized ONNX models for the int8 tests (built with ``onnx.helper``, seeded; no onnxruntime needed).

:func:`qdq_conv_model`: ``QuantizeLinear -> DequantizeLinear -> Conv (int8 weights, DequantizeLinear) -> QuantizeLinear
-> DequantizeLinear -> Flatten -> Gemm (transB) -> QuantizeLinear -> DequantizeLinear``, the form ONNX Runtime's
``quantize_static`` writes (uint8 activations, int8 weights with zero point 0, scalar scales).
:func:`qdq_ties_model`: a QDQ convolution and a per-channel Gemm whose quantizations land on
rounding ties (exact halves) and saturate.
:func:`matmul_integer_model`: ``DynamicQuantizeLinear -> MatMulInteger (int8 weights) -> Cast -> Mul``, the form of
``quantize_dynamic``.
"""

from __future__ import annotations

import os

import numpy as np


def _save(model, path: str) -> str:  # noqa: ANN001 - an onnx.ModelProto
    import onnx

    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def qdq_conv_model(folder: str, cin: int = 8, cout: int = 32, size: int = 8, classes: int = 20) -> str:
    """Write the QDQ convolution model to ``folder/qdq_conv.onnx``; input ``x`` float32 ``[1, cin, size, size]``."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (cout, cin, 3, 3)).astype(np.int8)
    fc = rng.integers(-127, 128, (classes, cout * size * size)).astype(np.int8)
    inits = [
        numpy_helper.from_array(np.array(0.02, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
        numpy_helper.from_array(w, "w_q"),
        numpy_helper.from_array(np.array(0.004, np.float32), "w_scale"),
        numpy_helper.from_array(np.array(0, np.int8), "w_zp"),
        numpy_helper.from_array(rng.standard_normal(cout).astype(np.float32) * 0.1, "bias"),
        numpy_helper.from_array(np.array(0.05, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(0, np.uint8), "y_zp"),
        numpy_helper.from_array(fc, "fc_q"),
        numpy_helper.from_array(np.array(0.002, np.float32), "fc_scale"),
        numpy_helper.from_array(np.array(0, np.int8), "fc_zp"),
        numpy_helper.from_array(np.array(0.1, np.float32), "o_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "o_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"]),
        helper.make_node("Conv", ["xd", "wd", "bias"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("QuantizeLinear", ["r", "y_scale", "y_zp"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["yd"]),
        helper.make_node("Flatten", ["yd"], ["f"]),
        helper.make_node("DequantizeLinear", ["fc_q", "fc_scale", "fc_zp"], ["fcd"]),
        helper.make_node("Gemm", ["f", "fcd"], ["g"], transB=1),
        helper.make_node("QuantizeLinear", ["g", "o_scale", "o_zp"], ["oq"]),
        helper.make_node("DequantizeLinear", ["oq", "o_scale", "o_zp"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "qdq_conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                [1, cin, size, size])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, classes])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return _save(model, os.path.join(folder, "qdq_conv.onnx"))


def matmul_integer_model(folder: str, rows: int = 8, k: int = 64, n: int = 48, batch: int = 0) -> str:
    """Write the dynamically quantized matmul model to ``folder/matmul_integer.onnx`` (``matmul_integer_3d.onnx``
    with ``batch``); input ``x`` float32 ``[rows, k]`` (``[batch, rows, k]``)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    inits = [
        numpy_helper.from_array(rng.integers(-127, 128, (k, n)).astype(np.int8), "w_q"),
        numpy_helper.from_array(np.array(0, np.int8), "w_zp"),
        numpy_helper.from_array(np.array(0.01, np.float32), "w_scale"),
    ]
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"]),
        helper.make_node("MatMulInteger", ["xq", "w_q", "xz", "w_zp"], ["acc"]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["xs", "w_scale"], ["s"]),
        helper.make_node("Mul", ["accf", "s"], ["out"]),
    ]
    lead = [batch] if batch else []
    graph = helper.make_graph(nodes, "matmul_integer", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                      [*lead, rows, k])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [*lead, rows, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return _save(model, os.path.join(folder, "matmul_integer_3d.onnx" if batch else "matmul_integer.onnx"))


def qdq_ties_model(folder: str) -> tuple[str, np.ndarray]:
    """Write a QDQ model whose every quantization lands on rounding ties to ``folder/qdq_ties.onnx``; returns its
    path and an input ``x`` (float32 ``[1, 4, 4, 4]``).

    Scales are powers of two, so every value is exact in float32 and the values before each ``QuantizeLinear``
    are exact halves: the input (``x`` in quarters, scale 1/2), a 1x1 convolution with an int32 bias at scale
    ``sx * sw`` (``quantize_static``'s form) and output scale 1, then a Gemm with per-channel weight scales and
    output scale 4; some values saturate at both ends."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(3)
    inits = [
        numpy_helper.from_array(np.array(0.5, np.float32), "x_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "x_zp"),
        numpy_helper.from_array(rng.integers(-4, 5, (8, 4, 1, 1)).astype(np.int8), "w_q"),
        numpy_helper.from_array(np.array(0.25, np.float32), "w_scale"),
        numpy_helper.from_array(np.array(0, np.int8), "w_zp"),
        numpy_helper.from_array((np.arange(8) * 300 - 1100).astype(np.int32), "b_q"),
        numpy_helper.from_array(np.array(0.125, np.float32), "b_scale"),
        numpy_helper.from_array(np.array(0, np.int32), "b_zp"),
        numpy_helper.from_array(np.array(1.0, np.float32), "y_scale"),
        numpy_helper.from_array(np.array(3, np.uint8), "y_zp"),
        numpy_helper.from_array(rng.integers(-2, 3, (6, 128)).astype(np.int8), "fc_q"),
        numpy_helper.from_array((2.0 ** -rng.integers(0, 3, 6)).astype(np.float32), "fc_scale"),
        numpy_helper.from_array(np.zeros(6, np.int8), "fc_zp"),
        numpy_helper.from_array(np.array(4.0, np.float32), "o_scale"),
        numpy_helper.from_array(np.array(128, np.uint8), "o_zp"),
    ]
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "x_scale", "x_zp"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w_q", "w_scale", "w_zp"], ["wd"]),
        helper.make_node("DequantizeLinear", ["b_q", "b_scale", "b_zp"], ["bd"]),
        helper.make_node("Conv", ["xd", "wd", "bd"], ["c"]),
        helper.make_node("QuantizeLinear", ["c", "y_scale", "y_zp"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["yd"]),
        helper.make_node("Flatten", ["yd"], ["f"]),
        helper.make_node("DequantizeLinear", ["fc_q", "fc_scale", "fc_zp"], ["fcd"], axis=0),
        helper.make_node("Gemm", ["f", "fcd"], ["g"], transB=1),
        helper.make_node("QuantizeLinear", ["g", "o_scale", "o_zp"], ["oq"]),
        helper.make_node("DequantizeLinear", ["oq", "o_scale", "o_zp"], ["out"]),
    ]
    graph = helper.make_graph(nodes, "qdq_ties", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 4, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 6])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = (rng.integers(-600, 601, (1, 4, 4, 4)) * 0.25).astype(np.float32)
    return _save(model, os.path.join(folder, "qdq_ties.onnx")), x
