"""The app's step ``app.SinkReshape``: reshapes move below elementwise ops so a matmul's epilogue (bias, GELU,
residual add) fuses into the matmul, with the same numbers, also over a dynamic sequence axis (issue 34);
broadcasting is left alone;
the step is in the catalogue and exported scripts hold its code."""

from __future__ import annotations

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.registry import kind_for

tvm = pytest.importorskip("tvm")


def _gpt2_mlp(dynamic=False, broadcast_residual=False):
    """GPT-2's MLP as torch.export gives it: Conv1D views (2-D matmul + bias, viewed back to 3-D), GELU (tanh
    form, written out), a second Conv1D and a residual add on the 3-D hidden state."""
    from tvm import relax

    bb = relax.BlockBuilder()
    seq = tvm.tirx.Var("s", "int64") if dynamic else 16
    h = relax.Var("h", relax.TensorType((1, seq, 32), "float32"))
    res_shape = (1, 1, 32) if broadcast_residual else (1, seq, 32)
    r = relax.Var("r", relax.TensorType(res_shape, "float32"))
    w1, b1 = relax.Var("w1", relax.TensorType((32, 64), "float32")), relax.Var("b1", relax.TensorType((64,), "float32"))
    w2, b2 = relax.Var("w2", relax.TensorType((64, 32), "float32")), relax.Var("b2", relax.TensorType((32,), "float32"))
    c = lambda v: relax.const(v, "float32")  # noqa: E731
    with bb.function("main", [h, r, w1, b1, w2, b2]):
        with bb.dataflow():
            x = bb.emit(relax.op.reshape(h, (seq, 32)))
            y = bb.emit(relax.op.add(b1, relax.op.matmul(x, w1)))
            y = bb.emit(relax.op.reshape(y, (1, seq, 64)))
            inner = bb.emit(relax.op.multiply(relax.op.add(y, relax.op.multiply(relax.op.power(y, c(3.0)), c(0.044715))),
                                              c(0.7978845608)))
            g = bb.emit(relax.op.multiply(relax.op.multiply(y, c(0.5)), relax.op.add(relax.op.tanh(inner), c(1.0))))
            g = bb.emit(relax.op.reshape(g, (seq, 64)))
            z = bb.emit(relax.op.add(b2, relax.op.matmul(g, w2)))
            z = bb.emit(relax.op.reshape(z, (1, seq, 32)))
            out = bb.emit_output(relax.op.add(z, r))
        bb.emit_func_output(out)
    return bb.get()


def test_dynamic_sequence_axis_sinks_alike():
    """Issue 34: with a symbolic seq the epilogue fuses as with a static one; the result is a fixed point."""
    mod = _gpt2_mlp(dynamic=True)
    after = _kernels(_sink(mod))
    assert len([k for k in after if "matmul" in k and "tanh" in k]) == 1, after
    assert len([k for k in after if not k.startswith("reshape")]) == 2, after
    tvm.ir.assert_structural_equal(_sink(_sink(mod)), _sink(mod))


def _sink(mod):
    from pipeline_model.passkinds.sink_reshape.script import sink_reshapes

    return sink_reshapes()(mod)


def _kernels(mod):
    from tvm import relax

    seq = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
           relax.transform.FuseTIR()]
    fused = tvm.ir.transform.Sequential(seq)(mod)
    return [line.split("R.call_tir(")[1].split(",")[0].split(".")[-1]
            for line in fused["main"].script().splitlines() if "R.call_tir(" in line]


def _run(mod, arrays):
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


def test_gelu_and_residual_fuse_into_their_matmuls_and_numbers_are_unchanged():
    mod = _gpt2_mlp()
    before, after = _kernels(mod), _kernels(_sink(mod))
    # without the step: the reshape stops FuseOps, GELU and the residual add are kernels of their own
    assert not any("matmul" in k and "tanh" in k for k in before), before
    gelu = [k for k in after if "matmul" in k and "tanh" in k]
    assert len(gelu) == 1, after  # matmul + bias + the whole GELU: one kernel
    assert any(k.startswith("fused_matmul") and k.count("_add") == 2 and "tanh" not in k for k in after), after  # + residual
    # the reshapes left on their own become views at build time (RewriteDataflowReshape): no copy, no kernel
    computing = [k for k in after if not k.startswith("reshape")]
    assert len(computing) == 2 and len([k for k in before if not k.startswith("reshape")]) == 4, (before, after)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype("float32") for s in ((1, 16, 32), (1, 16, 32), (32, 64), (64,), (64, 32), (32,))]
    np.testing.assert_array_equal(_run(_sink(mod), arrays), _run(mod, arrays))  # same ops on the same values


def test_broadcasting_is_left_alone_and_rewriting_ends():
    broadcast = _sink(_gpt2_mlp(broadcast_residual=True))  # z + r with r [1, 1, 32]: stays after the reshape
    text = broadcast["main"].script()
    assert "R.add(lv" in text and text.count("R.reshape(") >= 2
    main = broadcast["main"]
    last = main.body.blocks[0].bindings[-1].value
    assert last.op.name == "relax.add" and last.args[0].ty.ndim == 3  # the residual add still on the 3-D view
    once = _sink(_gpt2_mlp())
    tvm.ir.assert_structural_equal(_sink(once), once)  # a fixed point: a second run changes nothing


def test_the_step_is_a_kind_of_its_own_with_script_code():
    kind = kind_for("app.SinkReshape")
    assert kind is not None and kind.name == "sink_reshape"
    expr = kind.recipe("app.SinkReshape", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "sink_reshapes"
    source = emit.script_source("pipeline_model.passkinds.sink_reshape.script", "sink_reshapes")
    assert source.startswith("def sink_reshapes(") and "pipeline_model" not in source


def test_the_engine_catalogue_has_the_step():
    from pipeline_model.passkinds.catalogue_tvm import catalogue

    spec = catalogue().get("app.SinkReshape")
    assert spec is not None and spec.kind == "sink_reshape" and spec.available


def _squeeze_excitation():
    """EfficientNet's squeeze-excitation as torch.export gives it: 1x1 convolutions whose biases are reshaped to
    [1, C, 1, 1] and added (reshape on the second operand), SiLU written out as x * sigmoid(x) (both operands
    reshapes after sinking), the scale broadcast over the feature map."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((1, 32, 8, 8), "float32"))
    w1, b1 = relax.Var("w1", relax.TensorType((8, 32, 1, 1), "float32")), relax.Var("b1", relax.TensorType((8,), "float32"))
    w2, b2 = relax.Var("w2", relax.TensorType((32, 8, 1, 1), "float32")), relax.Var("b2", relax.TensorType((32,), "float32"))
    with bb.function("main", [x, w1, b1, w2, b2]):
        with bb.dataflow():
            m = bb.emit(relax.op.mean(x, axis=[-1, -2], keepdims=True))
            c1 = bb.emit(relax.op.nn.conv2d(m, w1))
            a1 = bb.emit(relax.op.add(c1, bb.emit(relax.op.reshape(b1, (1, 8, 1, 1)))))
            s1 = bb.emit(relax.op.multiply(a1, bb.emit(relax.op.sigmoid(a1))))
            c2 = bb.emit(relax.op.nn.conv2d(s1, w2))
            a2 = bb.emit(relax.op.add(c2, bb.emit(relax.op.reshape(b2, (1, 32, 1, 1)))))
            out = bb.emit_output(relax.op.multiply(bb.emit(relax.op.sigmoid(a2)), x))
        bb.emit_func_output(out)
    return bb.get()


def test_squeeze_excitation_keeps_its_numbers():
    """Found by the issue-19 bench (EfficientNet-B0 / MobileNetV3 as .pt2): the step took the wrong operand for
    the one bound to the reshape (``conv + reshape(bias)`` became ``bias + bias``) and reshaped a broadcast
    operand; the whole pipeline's check failed (1e-2) or the step raised."""
    mod = _squeeze_excitation()
    sunk = _sink(mod)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype("float32") for s in ((1, 32, 8, 8), (8, 32, 1, 1), (8,), (32, 8, 1, 1), (32,))]
    np.testing.assert_allclose(_run(sunk, arrays), _run(mod, arrays), rtol=1e-6, atol=1e-6)
