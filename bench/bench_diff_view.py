"""Benchmark of the diff view on a big TVMScript module (~85 k characters and more).

Builds a chain of Linear+GELU layers of distinct sizes (so LegalizeOps keeps one PrimFunc per layer),
diffs the module before/after LegalizeOps and measures: ``diff_snapshots`` alone, ``set_snapshots``
(diff + both editors filled + tints + visible highlighting), a scroll to the far end (lazy
highlighting of the newly visible lines) and a repaint. Targets (ratios printed, <= 1.0 meets them):
show <= 250 ms, scroll <= 100 ms, repaint <= 16 ms.

``--model builtin:decoder128`` diffs a real model's LegalizeOps step instead (the 128-layer decoder:
6.3k -> 6.7k lines); large texts are diffed on the view's worker thread, so "shown" is set_snapshots ->
``diff_shown`` -> painted, and the GUI thread's longest event-loop gap meanwhile is reported.

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_diff_view [--layers 20 | --model SPEC]``.
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


def model_scripts(spec: str) -> tuple[str, str]:
    """Before/after LegalizeOps TVMScript of a model spec (``builtin:decoder128``; TVM in this process)."""
    from tvm import relax

    from pipeline_model.models_tvm import load_model

    loaded = load_model(spec)
    mod = loaded.mod if hasattr(loaded, "mod") else loaded.module
    return mod.script(), relax.transform.LegalizeOps()(mod).script()


def _show(app: QApplication, view: DiffView, before: str, after: str, title: str) -> tuple[float, float]:
    """set_snapshots -> diff on screen and painted; returns (ms, longest GUI event-loop gap in ms)."""
    from PySide6.QtCore import QEventLoop, QTimer

    done: list[bool] = []
    view.diff_shown.connect(lambda: done.append(True))
    gaps = [0.0]
    last = [time.perf_counter()]

    def tick() -> None:
        now = time.perf_counter()
        gaps[0] = max(gaps[0], now - last[0])
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
    timer.stop()
    check.stop()
    view.diff_shown.disconnect()
    return elapsed, gaps[0] * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=18, help="18 layers ~ 85 k characters after LegalizeOps")
    parser.add_argument("--model", help="diff this model's LegalizeOps step (e.g. builtin:decoder128)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    app = QApplication.instance() or QApplication([])
    before, after = model_scripts(args.model) if args.model else make_scripts(args.layers)
    print(f"module: {len(before)} -> {len(after)} characters, {len(before.splitlines())} -> "
          f"{len(after.splitlines())} lines; loadavg {os.getloadavg()[0]:.2f}")

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
    shows, scrolls, repaints, stalls = [], [], [], []
    for i in range(args.repeat):
        title = f"step {i}"  # a new title each time: no shortcut
        shown_ms, stall_ms = _show(app, view, before, after, title)
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
    print(f"set_snapshots (first {shows[0]:.0f} ms): median {show:.1f} ms  ratio {show / SHOW_TARGET_MS:.2f}")
    print(f"GUI thread meanwhile: longest event-loop gap median {statistics.median(stalls):.1f} ms "
          f"(max {max(stalls):.1f})")
    print(f"scroll to end + paint: median {scroll:.1f} ms  ratio {scroll / SCROLL_TARGET_MS:.2f}")
    print(f"repaint both sides: median {rep:.1f} ms  ratio {rep / REPAINT_TARGET_MS:.2f}")


if __name__ == "__main__":
    main()
