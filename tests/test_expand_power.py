"""The app's step ``app.ExpandPower``: a power of a float tensor by a constant 2, 3 or 4 written as products
(``T.pow`` compiles into one libm ``powf`` call per element; GPT-2's GELU computes ``pow(x, 3)``)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from pipeline_model import emit
from pipeline_model.passkinds.registry import kind_for

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _power_module(with_int: bool = False):
    """x**2, x**3, x**4 and x**2.5 of a float tensor (and, ``with_int``, a power of an int tensor)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((3, 17), "float32"))
    i = relax.Var("i", relax.TensorType((3, 17), "int32"))
    with bb.function("main", [x, i] if with_int else [x]):
        with bb.dataflow():
            parts = [bb.emit(relax.op.power(x, relax.const(n, "float32"))) for n in (2.0, 3.0, 4.0, 2.5)]
            if with_int:
                parts.append(bb.emit(relax.op.power(i, relax.const(3, "int32"))))
            out = bb.emit_output(relax.Tuple(parts))
        bb.emit_func_output(out)
    return bb.get()


def _ops(mod):
    return [line.split("=", 1)[1].strip() for line in mod["main"].script().splitlines() if " = R." in line]


def test_small_powers_become_products_with_the_same_values():
    from tvm import relax

    from pipeline_model.passkinds.expand_power.script import expand_power

    ops = _ops(expand_power()(_power_module(with_int=True)))
    assert sum("R.power" in op for op in ops) == 2, ops  # 2.5 and the int power stay
    mod = _power_module()
    out = expand_power()(mod)
    ops = _ops(out)
    assert sum("R.power" in op for op in ops) == 1, ops
    # x*x, (x*x)*x, (x*x)*(x*x): 5 products, or 3 where the rewriter binds the one square once
    assert 3 <= sum("R.multiply" in op for op in ops) <= 5, ops
    assert expand_power()(out).same_as(out)  # nothing left to rewrite: the module comes back as it was
    x = np.random.default_rng(0).standard_normal((3, 17)).astype("float32") * 3
    results = []
    for m in (mod, out):
        ex = tvm.compile(relax.transform.LegalizeOps()(m), "llvm")
        vm = relax.VirtualMachine(ex, tvm.cpu())
        results.append([r.numpy() for r in vm["main"](tvm.runtime.tensor(x))])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


def test_divisions_by_constants_become_multiplications_by_their_reciprocals():
    """A Hardswish's ``/ 6`` and a per-channel ``/ std`` become multiplications by the
    reciprocal (a vector division costs about ten multiplications: MobileNetV3's Hardswish kernels 0.83-0.88x the
    time); a division by a tensor that is not constant and an integer division stay. Values within one rounding."""
    from tvm import relax

    from pipeline_model.passkinds.expand_power.script import expand_power

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((2, 3, 5), "float32"))
    y = relax.Var("y", relax.TensorType((2, 3, 5), "float32"))
    i = relax.Var("i", relax.TensorType((4,), "int32"))
    std = np.array([0.3, 1.7, 2.9, 0.11, 5.0], "float32")
    with bb.function("main", [x, y, i]):
        with bb.dataflow():
            gate = relax.op.clip(relax.op.add(x, relax.const(3.0, "float32")), 0, 6)
            hardswish = bb.emit(relax.op.divide(relax.op.multiply(x, gate), relax.const(6.0, "float32")))
            scaled = bb.emit(relax.op.divide(x, relax.const(std)))
            by_tensor = bb.emit(relax.op.divide(x, y))
            whole = bb.emit(relax.op.divide(i, relax.const(3, "int32")))
            out = bb.emit_output(relax.Tuple([hardswish, scaled, by_tensor, whole]))
        bb.emit_func_output(out)
    mod = bb.get()
    out = expand_power()(mod)
    ops = _ops(out)
    assert sum("R.divide" in op for op in ops) == 2, ops  # x / y and the int division stay
    assert expand_power()(out).same_as(out)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((2, 3, 5)).astype("float32") * 4, rng.uniform(1, 2, (2, 3, 5)).astype("float32"),
            np.array([7, -7, 9, 2], "int32")]
    results = []
    for m in (mod, out):
        vm = relax.VirtualMachine(tvm.compile(relax.transform.LegalizeOps()(m), "llvm"), tvm.cpu())
        results.append([r.numpy() for r in vm["main"](*[tvm.runtime.tensor(a) for a in args])])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=2e-7, atol=0)


def test_the_kind_is_in_the_catalogue_and_the_cpu_pipelines_and_exported_scripts_carry_its_code():
    from pipeline_model.export import export_script
    from pipeline_model.fileformat import load_pipeline
    from pipeline_model.passkinds.catalogue_tvm import catalogue

    kind = kind_for("app.ExpandPower")
    assert kind is not None and kind.name == "expand_power"
    expr = kind.recipe("app.ExpandPower", {})
    assert isinstance(expr, emit.ScriptCall) and expr.attr == "expand_power"
    source = emit.script_source("pipeline_model.passkinds.expand_power.script", "expand_power")
    assert source.startswith("def expand_power(") and "pipeline_model" not in source
    spec = catalogue().get("app.ExpandPower")
    assert spec is not None and spec.kind == "expand_power" and spec.available
    for name in ("cpu_build", "cpu_build_bound", "cpu_build_nhwc", "cpu_tuned_app", "cpu_build_fuse_transpose"):
        path = os.path.join(ROOT, "resources", "pipelines", f"{name}.json")
        ids = [s.pass_id for s in load_pipeline(path).steps]
        assert ids.index("app.ExpandPower") < ids.index("relax.FastMathTransform"), name
        with open(path, encoding="utf-8") as handle:  # the bundled file names the step itself
            assert "app.ExpandPower" in [s["pass"] for s in json.load(handle)["steps"]]
    script = export_script(load_pipeline(os.path.join(ROOT, "resources", "pipelines", "cpu_build.json")))
    assert "def expand_power(" in script and "expand_power()" in script
