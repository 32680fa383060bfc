"""Benchmark of the diff view on a big TVMScript module (~85 k characters and more).

Builds a chain of Linear+GELU layers of distinct sizes (so LegalizeOps keeps one PrimFunc per layer),
diffs the module before/after LegalizeOps and measures: ``diff_snapshots`` alone, ``set_snapshots``
(diff + both editors filled + tints + visible highlighting), a scroll to the far end (lazy
highlighting of the newly visible lines) and a repaint. Targets (ratios printed, <= 1.0 meets them):
show <= 250 ms, scroll <= 100 ms, repaint <= 16 ms.

``--model builtin:decoder128`` diffs a real model's LegalizeOps step instead (the 128-layer decoder:
6.3k -> 6.7k lines); large texts are diffed on the view's worker thread, so "shown" is set_snapshots ->
``diff_shown`` -> painted, and the GUI thread's longest event-loop gap meanwhile is reported.
``--synthetic LINES`` diffs a generated TVMScript-like module of about that many lines (no TVM needed; every
7th function changed, every 11th grown, every 13th removed), e.g. ``--synthetic 50000``.

Per show it reports: the first rows on screen (set_snapshots -> the editors' first rows), the whole diff
in the editors and painted (``diff_shown``), and the longest GUI-thread gap meanwhile (a 2 ms timer
measuring event-loop gaps; the diff worker's GIL hand-offs included). The GIL switch interval is the
app's (1 ms, ``--switch-interval-ms``).

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_diff_view [--layers 20 | --model SPEC |
--synthetic LINES] [--texts-cache DIR]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from PySide6.QtWidgets import QApplication

from pipeline_model.diff import diff_snapshots
from widgets.diff_view import DiffView

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHOW_TARGET_MS = 250.0
SCROLL_TARGET_MS = 100.0
REPAINT_TARGET_MS = 16.0


def make_scripts(layers: int) -> tuple[str, str]:
    """Before/after LegalizeOps TVMScript of a ``layers``-deep Linear+GELU chain (TVM in this process)."""
    from tvm import relax
    from tvm.relax.frontend import nn
    from tvm.relax.frontend.nn import op

    class Deep(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(32 + i, 33 + i) for i in range(layers)])

        def forward(self, x):
            for layer in self.layers:
                x = op.gelu(layer(x))
            return x

    mod, _ = Deep().export_tvm({"forward": {"x": nn.spec.Tensor((1, 32), "float32")}})
    return mod.script(), relax.transform.LegalizeOps()(mod).script()


def model_scripts(spec: str) -> tuple[str, str]:
    """Before/after LegalizeOps TVMScript of a model spec (``builtin:decoder128``; TVM in this process)."""
    from tvm import relax

    from pipeline_model.importers.load_tvm import load_model

    loaded = load_model(spec)
    mod = loaded.mod if hasattr(loaded, "mod") else loaded.module
    return mod.script(), relax.transform.LegalizeOps()(mod).script()


def synthetic_scripts(lines: int) -> tuple[str, str]:
    """Before/after texts of a generated TVMScript-like module of about ``lines`` lines (TVM-free).

    PrimFuncs of 40-60 lines and one Relax ``main`` calling them; in "after" every 7th function has a
    changed line, every 11th two more lines and every 13th is gone (its call in ``main`` too)."""
    head = ["# from tvm.script import ir as I", "# from tvm.script import tir as T",
            "# from tvm.script import relax as R", "", "@I.ir_module", "class Module:"]
    before_funcs: list[list[str]] = []
    after_funcs: list[list[str]] = []
    calls_before: list[str] = []
    calls_after: list[str] = []
    k = 0
    total = len(head) + 10
    while total < lines:
        n = 64 + k % 37
        body = ["    @T.prim_func(private=True)",
                f'    def f{k}(A: T.Buffer((T.int64(1), T.int64({n})), "float32"), '
                f'B: T.Buffer((T.int64(1), T.int64({n})), "float32")):',
                '        T.func_attr({"tir.noalias": True})']
        for j in range(12 + k % 8):
            body += [f"        for i0, i1 in T.grid(T.int64(1), T.int64({n + j})):",
                     f'            with T.block("compute_{j}"):',
                     "                v_i0, v_i1 = T.axis.remap(\"SS\", [i0, i1])",
                     f"                B[v_i0, v_i1] = A[v_i0, v_i1] * T.float32({j + 1}) + T.float32({k})"]
        body.append("")
        changed = list(body)
        if k % 7 == 3:
            changed[4] = changed[4].replace("T.float32(", "T.float16(")
        if k % 11 == 5:
            changed[3:3] = ["        # with T.block(\"root\"):", '        T.evaluate(0)']
        before_funcs.append(body)
        calls_before.append(f'            lv{k} = R.call_tir(cls.f{k}, (x,), out_sinfo=R.Tensor((1, {n}), "float32"))')
        if k % 13 != 6:
            after_funcs.append(changed)
            calls_after.append(calls_before[-1])
        total += len(body) + 1
        k += 1

    def module(funcs: list[list[str]], calls: list[str]) -> str:
        main = ["    @R.function", '    def main(x: R.Tensor((1, 64), "float32")):', "        cls = Module",
                "        with R.dataflow():", *calls, "            R.output(x)", "        return x"]
        return "\n".join(head + [line for f in funcs for line in f] + main) + "\n"

    return module(before_funcs, calls_before), module(after_funcs, calls_after)


def _show(app: QApplication, view: DiffView, before: str, after: str,
          title: str) -> tuple[float, float, float, float]:
    """set_snapshots -> diff on screen and painted; returns (ms to the first rows in the editors, ms to the
    whole diff painted, longest GUI event-loop gap in ms, ms after set_snapshots at which that gap ended)."""
    from PySide6.QtCore import QEventLoop, QTimer

    done: list[bool] = []
    first: list[float] = []
    view.diff_shown.connect(lambda: done.append(True))

    def rows_in(count: int) -> None:
        if count > 1 and not first:
            first.append(time.perf_counter())

    view.right.blockCountChanged.connect(rows_in)
    gaps = [0.0, 0.0]
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        if now - last[0] > gaps[0]:
            gaps[0], gaps[1] = now - last[0], now
        last[0] = now

    timer = QTimer()
    timer.setInterval(2)
    timer.timeout.connect(tick)
    timer.start()
    t0 = time.perf_counter()
    view.set_snapshots(before, after, "before", title)
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(1)
    check.timeout.connect(lambda: loop.quit() if done else None)
    check.start()
    if not done:
        loop.exec()
    view.left.viewport().repaint()
    view.right.viewport().repaint()
    elapsed = (time.perf_counter() - t0) * 1000
    tick()
    timer.stop()
    check.stop()
    view.diff_shown.disconnect()
    view.right.blockCountChanged.disconnect(rows_in)
    first_ms = (first[0] - t0) * 1000 if first else elapsed
    return first_ms, elapsed, gaps[0] * 1000, (gaps[1] - t0) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=18, help="18 layers ~ 85 k characters after LegalizeOps")
    parser.add_argument("--model", help="diff this model's LegalizeOps step (e.g. builtin:decoder128)")
    parser.add_argument("--synthetic", type=int, metavar="LINES", help="a generated module of about LINES lines")
    parser.add_argument("--texts-cache", metavar="DIR", help="keep the model's before/after texts in DIR (TVM once)")
    parser.add_argument("--switch-interval-ms", type=float, default=1.0, help="GIL switch interval (the app's: 1)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sys.setswitchinterval(args.switch_interval_ms / 1000.0)
    app = QApplication.instance() or QApplication([])
    if args.synthetic:
        before, after = synthetic_scripts(args.synthetic)
    else:
        key = (args.model or f"layers{args.layers}").replace(":", "_").replace("/", "_")
        cached = [os.path.join(args.texts_cache, f"{key}.{side}.txt") for side in ("before", "after")] \
            if args.texts_cache else []
        if cached and all(os.path.exists(p) for p in cached):
            before, after = (open(p, encoding="utf-8").read() for p in cached)
        else:
            before, after = model_scripts(args.model) if args.model else make_scripts(args.layers)
            for path, text in zip(cached, (before, after)):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w", encoding="utf-8") as f:
                    f.write(text)
    print(f"module: {len(before)} -> {len(after)} characters, {len(before.splitlines())} -> "
          f"{len(after.splitlines())} lines; loadavg {' '.join(f'{x:.2f}' for x in os.getloadavg())}")

    t = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        diff_snapshots(before, after)
        t.append((time.perf_counter() - t0) * 1000)
    print(f"diff_snapshots: median {statistics.median(t):.1f} ms")

    view = DiffView()
    view.resize(1400, 800)
    view.show()
    app.processEvents()
    shows, firsts, scrolls, repaints, stalls, stall_at = [], [], [], [], [], []
    for i in range(args.repeat):
        title = f"step {i}"  # a new title each time: no shortcut
        first_ms, shown_ms, stall_ms, at_ms = _show(app, view, before, after, title)
        stall_at.append(at_ms)
        firsts.append(first_ms)
        shows.append(shown_ms)
        stalls.append(stall_ms)
        bar = view.left.verticalScrollBar()
        t0 = time.perf_counter()
        bar.setValue(bar.maximum())
        view.left.repaint()
        view.right.repaint()
        app.processEvents()
        scrolls.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        view.left.viewport().repaint()
        view.right.viewport().repaint()
        repaints.append((time.perf_counter() - t0) * 1000)
    show, scroll, rep = statistics.median(shows), statistics.median(scrolls), statistics.median(repaints)
    print(f"rows: {len(view.rows)}; first rows in the editors: median {statistics.median(firsts):.1f} ms "
          f"(max {max(firsts):.1f})")
    print(f"set_snapshots -> whole diff painted (first {shows[0]:.0f} ms): median {show:.1f} ms  "
          f"ratio {show / SHOW_TARGET_MS:.2f}")
    print(f"GUI thread meanwhile: longest event-loop gap median {statistics.median(stalls):.1f} ms "
          f"(max {max(stalls):.1f}); all: {' '.join(f'{x:.0f}' for x in stalls)} (ended at "
          f"{' '.join(f'{x:.0f}' for x in stall_at)} ms)")
    print(f"loadavg after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"scroll to end + paint: median {scroll:.1f} ms  ratio {scroll / SCROLL_TARGET_MS:.2f}")
    print(f"repaint both sides: median {rep:.1f} ms  ratio {rep / REPAINT_TARGET_MS:.2f}")


if __name__ == "__main__":
    main()
