"""Tiny quantized ONNX models for the int8 tests (built with ``onnx.helper``, seeded; no onnxruntime needed).

:func:`qdq_conv_model`: ``QuantizeLinear -> DequantizeLinear -> Conv (int8 weights, DequantizeLinear) -> QuantizeLinear
-> DequantizeLinear -> Flatten -> Gemm (transB) -> QuantizeLinear -> DequantizeLinear``, the form ONNX Runtime's
``quantize_static`` writes (uint8 activations, int8 weights with zero point 0, scalar scales).
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


def matmul_integer_model(folder: str, rows: int = 8, k: int = 64, n: int = 48) -> str:
    """Write the dynamically quantized matmul model to ``folder/matmul_integer.onnx``; input ``x`` float32
    ``[rows, k]``."""
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
    graph = helper.make_graph(nodes, "matmul_integer", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                                      [rows, k])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [rows, n])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    return _save(model, os.path.join(folder, "matmul_integer.onnx"))
