"""Function-grouped diffs of real TVMScript snapshots (TVM runs in the test process to make them)."""

from __future__ import annotations

import pytest

from pipeline_model import diff as D
from pipeline_model.engine.results import CHANGED, FAILED, SKIPPED, UNCHANGED, RunResult, StepResult

tvm = pytest.importorskip("tvm")
from tvm import relax  # noqa: E402
from tvm.relax.frontend import nn  # noqa: E402


class _MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 256)
        self.relu = nn.ReLU()
        self.fc2 = nn.Linear(256, 10, bias=False)

    def forward(self, x):
        return self.fc2(self.relu(self.fc1(x)))


@pytest.fixture(scope="module")
def mods() -> dict:
    mod, _ = _MLP().export_tvm({"forward": {"x": nn.spec.Tensor((1, 784), "float32")}})
    legal = relax.transform.LegalizeOps()(mod)
    annotated = relax.transform.AnnotateTIROpPattern()(legal)
    fused = relax.transform.FuseOps()(annotated)
    fused_tir = relax.transform.FuseTIR()(fused)
    dce = relax.transform.DeadCodeElimination()(fused_tir)
    return {"input": mod, "legal": legal, "annotated": annotated, "fused": fused, "fused_tir": fused_tir, "dce": dce}


def _names(mod) -> set[str]:
    return {gv.name_hint for gv in mod.functions}


def test_split_finds_every_function_with_its_decorator(mods: dict) -> None:
    for key in ("input", "legal", "fused", "fused_tir"):
        script = mods[key].script()
        blocks = D.split_functions(script)
        funcs = [b for b in blocks if b.kind != "module"]
        assert {b.name for b in funcs} == _names(mods[key]), key
        lines = script.splitlines()
        for b in funcs:
            assert b.lines[0].lstrip().startswith("@"), b.lines[0]
            assert f"def {b.name}(" in b.text
            assert lines[b.start - 1 : b.end] == b.lines  # line numbers are the module's
            expected = "relax" if isinstance(mods[key][b.name], relax.Function) else "prim_func"
            assert b.kind == expected
        # every non-blank line belongs to exactly one block, in order
        covered = [ln for b in blocks for ln in b.lines if ln.strip()]
        assert covered == [ln for ln in lines if ln.strip()]
        assert blocks[0].name == D.HEADER and "class Module" in blocks[0].text


def test_split_a_bare_prim_func() -> None:
    from tvm.script import tirx as T

    @T.prim_func
    def add_one(a: T.Buffer((4,), "float32"), b: T.Buffer((4,), "float32")):
        for i in range(4):
            b[i] = a[i] + T.float32(1)

    text = add_one.script()
    assert "class" not in text
    assert D.function_names(text) == ["add_one"]


def test_legalize_adds_prim_funcs_and_changes_forward(mods: dict) -> None:
    before, after = mods["input"].script(), mods["legal"].script()
    d = D.diff_snapshots(before, after)
    assert d.changed
    added = set(d.by_status(D.ADDED))
    assert added == _names(mods["legal"]) - _names(mods["input"]) and added
    assert d.by_status(D.CHANGED) == ["forward"]
    assert d.by_status(D.REMOVED) == []
    fwd = d.function("forward")
    assert fwd.hunks and fwd.added_lines > 0 and fwd.removed_lines > 0
    assert any(line.startswith("-") and "R.matmul" in line for h in fwd.hunks for line in h.lines)
    assert any(line.startswith("+") and "R.call_tir" in line for h in fwd.hunks for line in h.lines)
    _check_rows_match_texts(d, before, after)


def test_fuse_tir_removes_and_retypes_functions(mods: dict) -> None:
    before, after = mods["fused"].script(), mods["fused_tir"].script()
    d = D.diff_snapshots(before, after)
    removed = set(d.by_status(D.REMOVED))
    assert removed == _names(mods["fused"]) - _names(mods["fused_tir"]) and removed
    # the fused Relax function became a PrimFunc of the same name
    fused_names = [n for n in _names(mods["fused"]) if n.startswith("fused_")]
    assert fused_names
    for name in fused_names:
        f = d.function(name)
        assert f.status == D.CHANGED and f.before.kind == "relax" and f.after.kind == "prim_func"
    _check_rows_match_texts(d, before, after)


def _check_rows_match_texts(d: D.ModuleDiff, before: str, after: str) -> None:
    a, b = before.splitlines(), after.splitlines()
    rows = d.rows()
    for r in rows:
        if r.left_no is not None:
            assert a[r.left_no - 1] == r.left_text
        if r.right_no is not None:
            assert b[r.right_no - 1] == r.right_text
        if r.tag == D.EQUAL:
            assert r.left_text == r.right_text
        if r.tag == D.INSERT:
            assert r.left_no is None and r.right_no is not None
        if r.tag == D.DELETE:
            assert r.right_no is None and r.left_no is not None
    # both sides of the side-by-side view show every non-blank line exactly once
    for side, text in ((0, a), (2, b)):
        numbers = [r[side] for r in rows if r[side] is not None]
        assert len(numbers) == len(set(numbers))
        if side == 2:  # blocks follow the "after" text's order
            assert numbers == sorted(numbers)
        assert {i + 1 for i, t in enumerate(text) if t.strip()} <= set(numbers)


def test_identical_snapshots_have_no_changes(mods: dict) -> None:
    text = mods["legal"].script()
    d = D.diff_snapshots(text, text)
    assert not d.changed
    assert all(f.status == D.UNCHANGED and not f.hunks for f in d.functions)
    assert d.unified() == ""
    assert all(r.tag == D.EQUAL for r in d.rows() if r.tag != D.GAP)
    assert d.rows(hide_unchanged=True) == []


def test_hide_unchanged_and_single_function_rows(mods: dict) -> None:
    d = D.diff_snapshots(mods["legal"].script(), mods["annotated"].script())
    # AnnotateTIROpPattern only adds attributes to PrimFuncs: forward is unchanged
    assert d.function("forward").status == D.UNCHANGED
    assert set(d.by_status(D.CHANGED)) == {n for n in _names(mods["legal"]) if n != "forward"}
    visible = d.rows(hide_unchanged=True)
    assert visible and not any("def forward(" in r.left_text for r in visible)
    one = d.rows("transpose")
    assert one == d.function("transpose").rows
    assert any(r.tag == D.REPLACE and "op_pattern" in r.right_text for r in one)


def test_none_sides() -> None:
    text = "@I.ir_module\nclass Module:\n    @R.function\n    def main(x):\n        return x\n"
    d = D.diff_snapshots(None, text)
    assert d.by_status(D.ADDED) == ["main"]
    assert all(r.left_no is None for r in d.rows() if r.tag != D.GAP)
    d2 = D.diff_snapshots(text, None)
    assert d2.by_status(D.REMOVED) == ["main"]


def test_moved_function_appears_once() -> None:
    def mod(*names: str) -> str:
        body = "".join(f"    @T.prim_func\n    def {n}():\n        T.evaluate(0)\n\n" for n in names)
        return "@I.ir_module\nclass Module:\n" + body
    d = D.diff_snapshots(mod("a", "b", "c"), mod("c", "a", "d"))
    assert sorted(d.names()) == ["a", "b", "c", "d"]
    assert d.function("b").status == D.REMOVED and d.function("d").status == D.ADDED
    assert d.function("a").status == D.UNCHANGED


def _step(i: int, state: str, script: str | None) -> StepResult:
    return StepResult(index=i, uid=f"u{i}", pass_id="relax.X", title=f"X{i}", state=state, script=script)


def test_unchanged_steps_and_step_snapshots(mods: dict) -> None:
    s_in, s_legal, s_fused = mods["input"].script(), mods["legal"].script(), mods["fused_tir"].script()
    run = RunResult(
        input_script=s_in,
        steps=[
            _step(0, CHANGED, s_legal),
            _step(1, UNCHANGED, s_legal),
            _step(2, SKIPPED, s_legal),
            _step(3, CHANGED, s_fused),
            _step(4, UNCHANGED, s_fused),
            _step(5, FAILED, None),
        ],
        failed_index=5,
        last_good_script=s_fused,
    )
    assert D.unchanged_steps(run) == [1, 4]
    assert D.step_snapshots(run, 0) == (s_in, s_legal)
    assert D.step_snapshots(run, 3) == (s_legal, s_fused)
    assert D.step_snapshots(run, 5) == (s_fused, None)
    assert D.text_equal_steps(run) == [1, 2, 4]
    # round trip through JSON (as the GUI receives it) keeps the answer
    assert D.unchanged_steps(RunResult.from_json(run.to_json())) == [1, 4]


def test_large_module_diff_is_complete() -> None:
    """A 40-layer module before/after LegalizeOps (85k characters): every line of both sides is in the rows.
    Its speed is measured by ``python -m bench.bench_diff_view``, not here."""
    from tvm.relax.frontend.nn import op

    class Deep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(32 + i, 33 + i) for i in range(40)])

        def forward(self, x):
            for layer in self.layers:
                x = op.gelu(layer(x))
            return x

    mod, _ = Deep().export_tvm({"forward": {"x": nn.spec.Tensor((1, 32), "float32")}})
    before = mod.script()
    after = relax.transform.LegalizeOps()(mod).script()
    assert len(after) > 85_000
    d = D.diff_snapshots(before, after)
    rows = d.rows()
    assert d.changed and len(rows) >= max(len(before.splitlines()), len(after.splitlines()))
    # every non-blank line of each side is in the rows (functions may be regrouped, so compare as multisets)
    def lines(text: str) -> list[str]:
        return sorted(t for t in text.splitlines() if t.strip())

    assert lines("\n".join(r.right_text for r in rows if r.right_no is not None)) == lines(after)
    assert lines("\n".join(r.left_text for r in rows if r.left_no is not None)) == lines(before)


# ---- large inputs: the patience diff (unique-line anchors) and the diff view's worker ------------------
def _apply(a: list[str], b: list[str], codes) -> list[str]:
    out: list[str] = []
    ai = bj = 0
    for tag, i1, i2, j1, j2 in codes:
        assert (i1, j1) == (ai, bj), "opcodes must be contiguous"
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        out.extend(b[j1:j2])
        ai, bj = i2, j2
    assert (ai, bj) == (len(a), len(b))
    return out


def test_diff_opcodes_rebuild_the_after_side_small_and_large():
    import random

    from pipeline_model.diff import DIFFLIB_MAX_PAIRS, diff_opcodes

    rng = random.Random(7)
    for size in (0, 5, 60, 700, 3000):
        a = [f"  lv{rng.randint(0, size)} = R.add(x, y)" for _ in range(size)]
        b = list(a)
        for _ in range(size // 20 + 3):
            k = rng.randint(0, len(b))
            roll = rng.random()
            if roll < 0.4:
                b.insert(k, f"  new{rng.randint(0, 10**6)} = R.call_tir(f, (x,))")
            elif roll < 0.8 and b:
                del b[min(k, len(b) - 1)]
            elif b:
                b[min(k, len(b) - 1)] = "  changed"
        assert _apply(a, b, diff_opcodes(a, b)) == b
    big = 2 * int(DIFFLIB_MAX_PAIRS ** 0.5)  # above the difflib limit: the anchored path
    a = [f"line {i}" for i in range(big)]
    b = a[:10] + ["inserted"] + a[10:big // 2] + a[big // 2 + 5:] + ["tail"]
    codes = diff_opcodes(a, b)
    assert _apply(a, b, codes) == b
    changed = [c for c in codes if c[0] != "equal"]
    assert [c[0] for c in changed] == ["insert", "delete", "insert"]  # minimal: nothing else marked


def test_large_function_diff_rows_and_counts():
    from pipeline_model.diff import DIFFLIB_MAX_PAIRS

    n = 3 * int(DIFFLIB_MAX_PAIRS ** 0.5)
    body = [f"        lv{i} = R.add(lv{i - 1}, lv{i - 1})" for i in range(1, n)]
    before = "@I.ir_module\nclass Module:\n    @R.function\n    def main(x):\n" + "\n".join(body) + "\n        return x\n"
    after_body = body[:100] + ["        extra = R.multiply(lv99, lv99)"] + body[100:200] + body[210:]
    after = "@I.ir_module\nclass Module:\n    @R.function\n    def main(x):\n" + "\n".join(after_body) + "\n        return x\n"
    d = D.diff_snapshots(before, after)
    main = d.function("main")
    assert main.status == D.CHANGED and main.added_lines == 1 and main.removed_lines == 10
    rows = main.rows
    assert [r.right_text for r in rows if r.right_no is not None] == main.after.lines
    assert [r.left_text for r in rows if r.left_no is not None] == main.before.lines
    assert "        extra = R.multiply(lv99, lv99)" in main.after.lines
