"""Custom Python passes: trust, syntax errors naming the line, plain functions and pass classes."""

from __future__ import annotations

import pytest

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402
from tvm.script import relax as R  # noqa: E402

from pipeline_model.passkinds.catalogue_tvm import PassBuildContext, PassConfigError, make_pass  # noqa: E402


def _mlp() -> tvm.IRModule:
    bb = relax.BlockBuilder()
    x = relax.Var("x", R.Tensor((1, 784), "float32"))
    w1 = relax.Var("w1", R.Tensor((784, 256), "float32"))
    w2 = relax.Var("w2", R.Tensor((256, 10), "float32"))
    with bb.function("main", [x, w1, w2]):
        with bb.dataflow():
            h = bb.emit(relax.op.nn.relu(relax.op.matmul(x, w1)))
            out = bb.emit_output(relax.op.matmul(h, w2))
        bb.emit_func_output(out)
    return bb.get()


def _ctx(trusted: bool = True) -> PassBuildContext:
    return PassBuildContext(target={"kind": "llvm"}, trust_custom_code=trusted, step_number=3)


def _prim_funcs(mod) -> int:
    return sum(isinstance(f, tvm.tirx.PrimFunc) for f in mod.functions.values())


def test_untrusted_is_refused():
    with pytest.raises(PassConfigError, match="not trusted"):
        make_pass("custom.python", {}, _ctx(trusted=False))


def test_syntax_error_names_the_line():
    source = "import tvm\n\ndef transform(mod)\n    return mod\n"
    with pytest.raises(PassConfigError) as info:
        make_pass("custom.python", {"source": source}, _ctx())
    assert "<custom step 3>" in str(info.value) and "line 3" in str(info.value)


def test_runtime_error_names_the_line():
    source = "x = 1\ny = 1 / 0\n"
    with pytest.raises(PassConfigError, match=r"line 2.*ZeroDivisionError"):
        make_pass("custom.python", {"source": source}, _ctx())


def test_plain_function_on_mlp():
    source = (
        "from tvm import relax\n\n"
        "def helper(mod):\n    return relax.transform.LegalizeOps()(mod)\n\n"
        "def transform(mod):\n    return helper(mod)\n"
    )
    mod = _mlp()
    assert _prim_funcs(mod) == 0
    the_pass = make_pass("custom.python", {"source": source}, _ctx())
    with tvm.target.Target("llvm"), tvm.transform.PassContext(opt_level=3):
        out = the_pass(mod)
    assert _prim_funcs(out) == 3


def test_default_template_is_identity():
    mod = _mlp()
    out = make_pass("custom.python", {}, _ctx())(mod)
    tvm.ir.assert_structural_equal(out, mod)


def test_decorated_class_and_instance():
    source = (
        "import tvm\nfrom tvm import relax\n\n"
        "@tvm.transform.module_pass(opt_level=0)\n"
        "class Legalize:\n"
        "    def transform_module(self, mod, ctx):\n"
        "        return relax.transform.LegalizeOps()(mod)\n"
    )
    out = make_pass("custom.python", {"source": source}, _ctx())(_mlp())
    assert _prim_funcs(out) == 3
    inst = "from tvm import relax\nmy_pass = relax.transform.LegalizeOps()\n"
    assert _prim_funcs(make_pass("custom.python", {"source": inst}, _ctx())(_mlp())) == 3


def test_no_pass_defined_and_wrong_return():
    with pytest.raises(PassConfigError, match="defines no pass"):
        make_pass("custom.python", {"source": "x = 1\n"}, _ctx())
    bad = make_pass("custom.python", {"source": "def f(mod):\n    return 1\n"}, _ctx())
    with pytest.raises(Exception, match="not an IRModule"):
        bad(_mlp())
