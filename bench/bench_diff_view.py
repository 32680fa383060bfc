"""Benchmark of the diff view on a big TVMScript module (~85 k characters and more).

Builds a chain of Linear+GELU layers of distinct sizes (so LegalizeOps keeps one PrimFunc per layer),
diffs the module before/after LegalizeOps and measures: ``diff_snapshots`` alone, ``set_snapshots``
(diff + both editors filled + tints + visible highlighting), a scroll to the far end (lazy
highlighting of the newly visible lines) and a repaint. Targets (ratios printed, <= 1.0 meets them):
show <= 250 ms, scroll <= 100 ms, repaint <= 16 ms.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_diff_view [--layers 20]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=18, help="18 layers ~ 85 k characters after LegalizeOps")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    before, after = make_scripts(args.layers)
    print(f"module: {len(before)} -> {len(after)} characters, {len(after.splitlines())} lines")

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
    shows, scrolls, repaints = [], [], []
    for i in range(args.repeat):
        title = f"step {i}"  # a new title each time: no shortcut
        t0 = time.perf_counter()
        view.set_snapshots(before, after, "before", title)
        app.processEvents()
        shows.append((time.perf_counter() - t0) * 1000)
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
    print(f"set_snapshots (first {shows[0]:.0f} ms): median {show:.1f} ms  ratio {show / SHOW_TARGET_MS:.2f}")
    print(f"scroll to end + paint: median {scroll:.1f} ms  ratio {scroll / SCROLL_TARGET_MS:.2f}")
    print(f"repaint both sides: median {rep:.1f} ms  ratio {rep / REPAINT_TARGET_MS:.2f}")


if __name__ == "__main__":
    main()
