"""``app.CPUMatmul`` (register tiles, packed weights, symbolic rows and columns) and the rules' shared
schedule checks, against the unscheduled functions' numbers (split from ``test_dlight_app_rules.py``)."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from tests.test_dlight_app_rules import _legalized_mlp

tvm = pytest.importorskip("tvm")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- app.CPUMatmul ----

def _native():
    from pipeline_model.scriptlib.host import native_target

    return native_target({"kind": "llvm", "mcpu": "native"})


def _matmul_module(m, k, n, *, nt=False, batch=(), bias=False, gelu=False, residual=False, dtype="float32"):
    """A Relax ``x @ w`` (``w`` given as ``[n, k]`` and transposed when ``nt``) with the requested epilogue,
    legalized and fused as the default CPU pipeline does (FuseTransposeMatmul makes NT_matmul)."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((*batch, m, k), dtype))
    w = relax.Var("w", relax.TensorType((n, k) if nt else (k, n), dtype))
    params = [x, w]
    if bias:
        params.append(relax.Var("b", relax.TensorType((n,), dtype)))
    if residual:
        params.append(relax.Var("r", relax.TensorType((*batch, m, n), dtype)))
    with bb.function("main", params):
        with bb.dataflow():
            y = bb.emit(relax.op.matmul(x, bb.emit(relax.op.permute_dims(w)) if nt else w))
            if bias:
                y = bb.emit(relax.op.add(y, params[2]))
            if gelu:
                y = bb.emit(relax.op.nn.gelu_tanh(y))
            if residual:
                y = bb.emit(relax.op.add(y, params[-1]))
            out = bb.emit_output(y)
        bb.emit_func_output(out)
    passes = [relax.transform.FuseTransposeMatmul(), relax.transform.LegalizeOps(),
              relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(), relax.transform.FuseTIR(),
              relax.transform.DeadCodeElimination()]
    return tvm.ir.transform.Sequential(passes)(bb.get()), [tuple(int(d) for d in p.ty.shape) for p in params]


def _prims(mod):
    return {gv.name_hint: f for gv, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}


def _run_on(mod, target, arrays):
    from tvm import relax

    vm = relax.VirtualMachine(tvm.compile(mod, target=tvm.target.Target(target)), tvm.cpu())
    return vm["main"](*[tvm.runtime.tensor(a) for a in arrays]).numpy()


MATMUL_CASES = [  # (m, k, n, nt, batch, bias, gelu, residual)
    (32, 128, 256, False, (), True, True, False),   # GPT-2 style Conv1D + bias + GELU
    (32, 128, 256, True, (), True, True, False),    # nn.Linear (NT) + bias + GELU
    (64, 256, 128, True, (), True, False, True),    # projection + bias + residual add
    (64, 256, 128, False, (), False, False, False),  # plain matmul writing the output
    (13, 64, 48, False, (), True, False, False),    # odd rows, n = 3 x 16
    (7, 72, 40, True, (), True, False, False),      # odd rows, odd n, k = 72 (8-lane vectors)
    (17, 40, 24, False, (3,), False, False, True),  # batch, n = 24 (8-lane vectors)
    (32, 32, 32, True, (1, 4), False, False, False),  # attention q @ k^T (batch x heads)
    (32, 32, 32, False, (1, 4), False, False, False),  # attention att @ v
    (1, 256, 512, True, (), True, False, False),    # one row (decode step)
    (1, 1280, 1000, False, (), True, False, False),  # a CNN's classifier (EfficientNet-B0): wide one-row tiles
    (64, 256, 384, False, (), True, False, False),  # 6.3 M multiply-adds: over the floor, tiles in parallel
]


@pytest.mark.parametrize("target_kind", ["native", "generic"])
@pytest.mark.parametrize("case", MATMUL_CASES, ids=lambda c: "x".join(map(str, c[:3])) + ("_nt" if c[3] else "")
                         + ("_b" + "x".join(map(str, c[4])) if c[4] else "") + ("_bias" if c[5] else "")
                         + ("_gelu" if c[6] else "") + ("_res" if c[7] else ""))
def test_matmul_rule_schedules_and_matches_the_unscheduled_function(case, target_kind):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m, k, n, nt, batch, bias, gelu, residual = case
    target = _native() if target_kind == "native" else {"kind": "llvm"}
    mod, shapes = _matmul_module(m, k, n, nt=nt, batch=batch, bias=bias, gelu=gelu, residual=residual)
    with tvm.target.Target(target):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (name, func), = _prims(scheduled).items()
    text = func.script()
    assert "is_scheduled" in text and "T.vectorized(" in text, (name, text)
    parallel = m == 1 or m * k * n * int(np.prod(batch)) >= CPUMatmul.min_parallel_flops
    assert ("T.parallel(" in text) == parallel, (name, text)
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    got, want = _run_on(scheduled, target, arrays), _run_on(mod, target, arrays)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_matmul_rule_gives_a_narrow_output_one_vector_and_one_tile_no_thread_pool():
    """A classifier head (1 x 2048 @ 2048 x 10 + bias: no vector width divides 10) ran as a serial scalar loop
    (23 us of the bench CNN's 84); now one 10-lane vector accumulates over k, without starting the threads."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    target = _native()
    mod, shapes = _matmul_module(1, 2048, 10, bias=True)
    with tvm.target.Target(target):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (name, func), = _prims(scheduled).items()
    text = func.script()
    if CPUMatmul.lanes(tvm.target.Target(target)) == 4:  # 128-bit vectors: 10 is over two of them, declined
        assert "is_scheduled" not in text
        return
    assert "is_scheduled" in text and "T.vectorized(T.int64(10))" in text and "T.parallel(" not in text, text
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s).astype("float32") for s in shapes]
    got, want = _run_on(scheduled, target, arrays), _run_on(mod, target, arrays)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


@pytest.mark.parametrize("mcpu, n, columns, vectors", [
    ("skylake-avx512", 1000, 40, 5),   # 8-float vectors (16 does not divide 1000)
    ("skylake-avx512", 1024, 128, 8),
    ("haswell", 1000, 40, 5),
    ("skylake-avx512", 64, 32, 2),     # too narrow for wider tiles: the register tile of 2 vectors, as before
])
def test_one_row_matmul_tiles_read_weight_rows_in_long_runs(mcpu, n, columns, vectors):
    """A one-row ``x @ W[k, j]`` (a classifier at batch 1) is memory-bound: a tile of 8 columns read 32 bytes of
    each weight row (549 us for EfficientNet-B0's 1280 x 1000 with the weights out of cache, 376 us with 40);
    tiles are now up to 8 vectors wide while at least 4 tiles are left for the cores."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    mod, _shapes = _matmul_module(1, 256, n)
    with tvm.target.Target({"kind": "llvm", "mcpu": mcpu}):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    tiles = re.findall(r"T\.parallel\(T\.int64\((\d+)\)\)", text)
    assert tiles == [str(n // columns)], text
    assert f"T.unroll(T.int64({vectors}))" in text and f"T.vectorized(T.int64({columns // vectors}))" in text, text


def test_matmul_rule_vector_width_follows_the_target():
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    lanes = {mcpu: CPUMatmul.lanes(tvm.target.Target({"kind": "llvm", "mcpu": mcpu}))
             for mcpu in ("skylake-avx512", "haswell", "x86-64")}
    assert lanes == {"skylake-avx512": 16, "haswell": 8, "x86-64": 4}
    assert CPUMatmul.lanes(tvm.target.Target({"kind": "llvm", "mcpu": "x86-64", "mattr": ["+avx512f"]})) == 16


def _declines(mod, target=None):
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    rule = CPUMatmul()
    return all(rule.apply(f, tvm.target.Target(target or _native()), False) is None for f in _prims(mod).values())


def _symbolic_matmul(x_shape, w_shape, gelu_fused=False):
    """``x @ w`` legalized; ``gelu_fused``: with a GELU, legalized and fused as the default pipeline does."""
    from tvm import relax

    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType(x_shape, "float32"))
    w = relax.Var("w", relax.TensorType(w_shape, "float32"))
    with bb.function("main", [x, w]):
        with bb.dataflow():
            y = relax.op.matmul(x, w)
            out = bb.emit_output(bb.emit(relax.op.nn.gelu(y) if gelu_fused else y))
        bb.emit_func_output(out)
    passes = [relax.transform.LegalizeOps()]
    if gelu_fused:
        passes += [relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(), relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(bb.get())


@pytest.mark.parametrize("case", ["rows", "columns", "attention"])
def test_matmul_rule_pads_symbolic_extents_to_whole_tiles_and_stays_correct(case):
    """A dynamic sequence axis (issue 34) as the rows, as ``B[k, j]``'s columns, or both (attention scores with
    a fused GELU epilogue): the matmul computes whole register tiles of a zero-padded copy (``pad_einsum``), its
    accumulators a fixed-size local tile (not sized by the symbolic extent, which kept them off the registers),
    and the valid part is written out; right at lengths no tile divides, with one build."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m = tvm.tirx.Var("m", "int64")
    mod = {"rows": lambda: _symbolic_matmul((m, 64), (64, 64)),
           "columns": lambda: _symbolic_matmul((32, 64), (64, m)),
           "attention": lambda: _symbolic_matmul((4, m, 32), (4, 32, m), gelu_fused=True)}[case]()
    with tvm.target.Target(_native()):
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    assert "is_scheduled" in text and "_pad" in text and "T.vectorized(" in text, text
    # A symbolic extent counts as a typical sequence (128) against the work floor: m x 64 @ 64 x 64 (0.5 M at
    # 128 rows) and 32 x 64 @ 64 x m (0.26 M) stay serial, the 4-head attention product (2.1 M at 128) and an MLP
    # of m x 128 x 384 (6.3 M) run on the threads, as their static builds at 128 do.
    assert ("T.parallel(" in text) == (case == "attention"), text
    assert 128 * 64 * 64 < CPUMatmul.min_parallel_flops <= 4 * 128 * 32 * 128
    with tvm.target.Target(_native()):
        wide = dl.ApplyDefaultSchedule(CPUMatmul())(_symbolic_matmul((m, 128), (128, 384)))
    wide_text = next(iter(_prims(wide).values())).script()
    assert "T.parallel(" in wide_text
    # its write-back guard is the rows' bound alone: pad_einsum's "tile % tiles - tiles < 0 or ..." (always true)
    # dropped, so no clause LoopPartition cannot split stays in front of the vector stores
    (guard,) = [ln for ln in wide_text.splitlines() if "T.where(" in ln]
    assert " or " not in guard and "T.likely(" in guard, guard
    # A symbolic-row input is read in place, its row clamped to the last one (no padded copy: copying a dynamic
    # Llama's 128 x 344 activation made its product 2.2x the static one's time); B's symbolic columns are a
    # padded copy (clamped, its vector lanes would gather).
    assert '"x_pad"' not in text and ("T.min(" in text) == (case != "columns"), text
    assert ('"w_pad"' in text) == (case != "rows"), text
    # The guards are marked likely, so LoopPartition splits off the last partial tile and the whole tiles'
    # stores are vectors; serial tiles of a symbolic extent are loops of their own (no index divided by the
    # symbolic tile count, which LoopPartition cannot split).
    assert "T.likely(" in text, text
    if case != "attention":  # serial
        assert " // ((m + " not in text and " % ((m + " not in text, text
    # B's padded columns stay a copy: a big one (3072 x m: 393 k elements at 128 columns) copies its rows in
    # parallel, a small one (64 x m above) on the calling thread.
    with tvm.target.Target(_native()):
        tall = dl.ApplyDefaultSchedule(CPUMatmul())(_symbolic_matmul((32, 3072), (3072, m)))
    pad_loop = r'in T\.parallel\([^\n]*\n(\s*for [^\n]*\n)*?\s*with T\.sblock\("w_pad"\)'
    tall_text = next(iter(_prims(tall).values())).script()
    assert re.search(pad_loop, tall_text), tall_text
    assert not re.search(pad_loop, text), text
    # No reduction block under a guard (the last tile's, inside the k loop: what padding avoids).
    guarded = [b for b in text.split("with T.sblock(")[1:] if "T.axis.reduce" in b and "T.where(" in b]
    assert not guarded, text
    vm = relax.VirtualMachine(tvm.compile(scheduled, target=tvm.target.Target(_native())), tvm.cpu())
    rng = np.random.default_rng(5)
    for length in (1, 37, 50, 128):
        shapes = {"rows": [(length, 64), (64, 64)], "columns": [(32, 64), (64, length)],
                  "attention": [(4, length, 32), (4, 32, length)]}[case]
        x, w = (rng.standard_normal(s).astype("float32") for s in shapes)
        want = x @ w
        if case == "attention":
            from math import erf

            want = want * 0.5 * (1.0 + np.vectorize(erf)(want / np.sqrt(2.0)))
        got = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_an_epilogue_over_padded_columns_runs_in_vectors_the_column_count_divides():
    """Llama's 344 columns are padded to whole tiles of 16-float vectors; the fused epilogue (here GELU) is written
    in vectors of 8, which 344 divides, so each vector is wholly in or out and the guard, once simplified, tests the
    vector (in 16-lane vectors it tested each lane and the whole epilogue ran lane by lane: a dynamic Llama's
    gate product 1.39x its static build's time, the same after). Right at lengths no tile divides."""
    from tvm import relax
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    m = tvm.tirx.Var("m", "int64")
    mod = _symbolic_matmul((m, 64), (64, 344), gelu_fused=True)
    target = tvm.target.Target(_native())
    if CPUMatmul.lanes(target) < 16:
        pytest.skip("padded columns are a 16-lane target's case")
    with target:
        scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
    (_name, func), = _prims(scheduled).items()
    text = func.script()
    epilogue = text[text.index("with T.sblock(\"T_multiply"):]
    assert '"w_pad"' in text and "T.vectorized(T.int64(8))" in text[:text.index("with T.sblock(\"T_multiply")], text
    assert "T.likely(" in epilogue and "< T.int64(344)" in epilogue, text
    vm = relax.VirtualMachine(tvm.compile(scheduled, target=target), tvm.cpu())
    rng = np.random.default_rng(8)
    from math import erf

    for length in (1, 37, 128):
        x = rng.standard_normal((length, 64)).astype("float32")
        w = rng.standard_normal((64, 344)).astype("float32")
        want = x @ w
        want = want * 0.5 * (1.0 + np.vectorize(erf)(want / np.sqrt(2.0)))
        got = vm["main"](tvm.runtime.tensor(x), tvm.runtime.tensor(w)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * float(np.abs(want).max()))


def test_matmul_rule_declines_tiny_non_float32_and_non_matmul_functions():
    assert _declines(_matmul_module(2, 4, 16)[0])  # 256 flops: not worth a schedule
    assert _declines(_matmul_module(32, 64, 64, dtype="float16")[0])
    # n = 34: no 4-lane vector fits; with 8 or 16 lanes it is padded to whole tiles, on 128-bit vectors declined
    assert _declines(_matmul_module(32, 64, 34)[0], {"kind": "llvm", "mcpu": "x86-64"})
    mlp = _legalized_mlp()  # fused matmul + add + relu (one output row: scheduled), then a sum (declined)
    sums = tvm.IRModule({n: f for n, f in _prims(mlp).items() if n.startswith("sum")})
    assert len(sums.functions) == 1 and _declines(sums) and not _declines(mlp)
    assert _declines(_matmul_module(32, 64, 64)[0], {"kind": "cuda", "arch": "sm_80"})


def test_matmul_rule_runs_before_parallel_in_the_default_pipeline():
    from pipeline_model.fileformat import load_pipeline

    for name in ("cpu_build", "cpu_build_bound", "cpu_build_nhwc", "cpu_build_fuse_transpose", "cpu_build_dlight"):
        doc = load_pipeline(os.path.join(ROOT, "resources", "pipelines", f"{name}.json"))
        rules = [s.params["rules"] for s in doc.steps if s.pass_id == "dlight.ApplyDefaultSchedule"]
        assert len(rules) == 1 and rules[0].index("app.CPUMatmul") < rules[0].index("app.CPUParallel"), name
        assert doc.target == {"kind": "llvm", "mcpu": "native", "opt-level": 2}, name


def test_native_target_is_this_machines_cpu_and_other_targets_are_kept():
    from tvm.target import codegen

    from pipeline_model.scriptlib.host import native_target
    from pipeline_model.targets import is_native

    host = native_target({"kind": "llvm", "mcpu": "native", "opt-level": 3})
    assert host.get("mcpu") != "native" and host["num-cores"] >= 1 and host["opt-level"] == 3
    if str(codegen.llvm_get_system_cpu()) not in ("", "generic"):
        assert host["mcpu"] == str(codegen.llvm_get_system_cpu())
    assert native_target({"kind": "llvm", "mcpu": "native", "num-cores": 7})["num-cores"] == 7
    for other in ({"kind": "llvm"}, {"kind": "llvm", "mcpu": "haswell"}, {"kind": "cuda", "arch": "sm_80"}):
        assert native_target(other) is other and not is_native(other)
    assert is_native({"kind": "llvm", "mcpu": "native"})
    tvm.target.Target(host)  # TVM accepts it


# ---- the rules' shared base (AppRule): unchecked schedules and a look at the blocks without one ----


def _legalized_net():
    """A small network after FuseTIR: a padded convolution with ReLU, a mean, a matmul with bias, a softmax."""
    from tvm import relax
    from tvm.script import relax as R

    @tvm.script.ir_module
    class Mod:
        @R.function
        def main(x: R.Tensor((1, 16, 8, 8), "float32"), w: R.Tensor((32, 16, 3, 3), "float32"),
                 m: R.Tensor((32, 64), "float32"), b: R.Tensor((64,), "float32")):
            with R.dataflow():
                c = R.nn.relu(R.nn.conv2d(x, w, padding=[1, 1, 1, 1]))
                p = R.mean(c, axis=[2, 3])
                y = R.nn.softmax(R.add(R.matmul(p, m), b), axis=-1)
                R.output(y)
            return y

    passes = [relax.transform.LegalizeOps(), relax.transform.AnnotateTIROpPattern(), relax.transform.FuseOps(),
              relax.transform.FuseTIR()]
    return tvm.ir.transform.Sequential(passes)(Mod)


def test_unchecked_schedules_give_the_same_schedules_as_checked_ones(monkeypatch):
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule
    from pipeline_model.passkinds.dlight.rules.cpu_conv2d_tvm import CPUConv2d
    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul
    from pipeline_model.passkinds.dlight.rules.cpu_parallel_tvm import CPUParallel

    mod = _legalized_net()
    func = next(f for _, f in mod.functions_items() if isinstance(f, tvm.tirx.PrimFunc))
    sch = AppRule.schedule(func)
    assert isinstance(sch, tvm.s_tir.Schedule)
    assert type(sch).split is tvm.s_tir.Schedule.split.__wrapped__  # TVM's Python-side type check skipped
    with pytest.raises(Exception):  # noqa: B017 - TVM's C++ side still refuses a wrong argument
        sch.get_loops("not a block")

    def apply(m):
        with tvm.target.Target({"kind": "llvm", "mcpu": "skylake-avx512", "num-cores": 2}):
            return dl.ApplyDefaultSchedule(CPUMatmul(), CPUConv2d(), CPUParallel())(m)

    fast = apply(tvm.ir.load_json(tvm.ir.save_json(mod)))
    monkeypatch.setattr(AppRule, "schedule", staticmethod(tvm.s_tir.Schedule))
    checked = apply(tvm.ir.load_json(tvm.ir.save_json(mod)))
    tvm.ir.assert_structural_equal(fast, checked)
    texts = {gv.name_hint: f.script() for gv, f in fast.functions_items() if isinstance(f, tvm.tirx.PrimFunc)}
    conv = next(t for name, t in texts.items() if "conv2d" in name)
    assert "T.vectorized(" in conv and "T.parallel(" in conv  # the rules did schedule


def test_reductions_are_the_reduction_blocks_the_schedule_sees():
    from tvm.s_tir.dlight.analysis import get_root_block

    from pipeline_model.passkinds.dlight.rules.app_rule_tvm import AppRule

    seen = []
    for mod in (_legalized_net(), _legalized_mlp()):
        for _, func in mod.functions_items():
            if not isinstance(func, tvm.tirx.PrimFunc):
                continue
            sch = tvm.s_tir.Schedule(func)
            kinds = [[int(iv.iter_type) for iv in sch.get(b).iter_vars] for b in sch.get_child_blocks(get_root_block(sch))]
            expected = [k for k in kinds if 2 in k]
            assert AppRule.reductions(func) == expected, func.script()
            seen.extend(map(tuple, expected))
    # The convolution (SSSSRRR), the mean and softmax sums, the matmul reductions were all there to be found.
    assert (0, 0, 0, 0, 2, 2, 2) in seen and (0, 0, 2, 2) in seen and (0, 0, 2) in seen


def test_matmul_rule_runs_small_matmuls_on_the_calling_thread_and_big_ones_in_parallel():
    """Issue 35: a parallel loop costs a launch and a second core's cold cache. GPT-2's attention output
    (32 x 128 @ 128 x 128: 0.5 M multiply-adds) runs its tiles serially; a matmul over ``min_parallel_flops`` (its
    MLP, 32 x 128 @ 128 x 512: 2.1 M; its LM head, 8.4 M) and one-row matmuls (memory-bound) run parallel tiles."""
    from tvm.s_tir import dlight as dl

    from pipeline_model.passkinds.dlight.rules.cpu_matmul_tvm import CPUMatmul

    assert 32 * 128 * 128 < CPUMatmul.min_parallel_flops <= 32 * 128 * 512
    found = {}
    for m, k, n in ((32, 128, 128), (32, 128, 512), (1, 128, 512)):
        mod, _shapes = _matmul_module(m, k, n)
        with tvm.target.Target(_native()):
            scheduled = dl.ApplyDefaultSchedule(CPUMatmul())(mod)
        (_name, func), = _prims(scheduled).items()
        text = func.script()
        assert "is_scheduled" in text and "T.vectorized(" in text, text
        found[m, n] = "T.parallel(" in text
    assert found == {(32, 128): False, (32, 512): True, (1, 512): True}
