"""Benchmark of the graph view: a 5,000-node Relax function laid out and shown (target <= 1 s, layout off
the GUI thread) and pan/zoom repaints (target <= 16 ms).

Run: ``QT_QPA_PLATFORM=offscreen .venv/bin/python -m bench.bench_graph [--nodes 5000] [--real-layers N]
[--repeat 5]``. Prints figures and ratios (measured / target; <= 1.0 meets the target), medians over
``--repeat`` shows, and the load average (other processes on a 2-core machine move every figure).

Real models: ``bench/bench_graph.py --model SPEC_OR_FILE [--pipeline FILE] [--json] [--expand-all]`` runs the
pipeline (default: LegalizeOps, AnnotateTIROpPattern, FuseOps, FuseTIR, DeadCodeElimination) in the engine
process from the real main window (offscreen), then selects the input and each step in turn in its pipeline
list and reports per step: nodes, ``first_show_ms`` (selection -> graph painted, cold: the engine's graph
request, change detection and layout included: a large function's collapsed view), ``whole_graph_ms`` (until its
whole graph is shown in its place), ``coloured_ms`` (until the step's changes are coloured too: later than the first paint for a graph over
``GraphView.HIGHLIGHT_LATER_NODES`` nodes), ``queued_ms`` (waited before the selection for requests of the previous one still in the engine, e.g. the
texts of its diff; not part of ``first_show_ms``), ``reshow_ms`` (selected again after another step: the
caches), ``max_stall_ms`` (longest GUI-thread event-loop gap, the diff of the step included),
``fit_repaint_ms``, ``shown_rss_mb`` (the process's RSS then), with ``--expand-all`` ``expand_all_ms`` (Expand All
until painted at fit) and ``expanded_rss_mb``, plus the process's RSS at the end and its peak (this process is
the GUI side: it never imports TVM).
With ``--json`` the last line is ``{"steps": [{"name", "nodes", "first_show_ms", "reshow_ms",
"max_stall_ms", ...}], "rss_mb": N, "peak_rss_mb": N}``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

from PySide6.QtCore import QPoint
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import QApplication

from pipeline_model import ir_graph
from pipeline_model.layout import compute_layout
from pipeline_model.models import builtin_model_source
from widgets.graph_view import GraphView

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SHOW_TARGET_S = 1.0
REPAINT_TARGET_MS = 16.0


def real_graph_json(layers: int) -> dict:
    """Graph JSON of a real deep Relax module (nn.Module transformer-like stack), extracted with TVM."""
    from tvm.relax.frontend import nn

    class Block(nn.Module):
        def __init__(self) -> None:
            self.ln1 = nn.LayerNorm(256)
            self.q = nn.Linear(256, 256)
            self.k = nn.Linear(256, 256)
            self.v = nn.Linear(256, 256)
            self.o = nn.Linear(256, 256)
            self.ln2 = nn.LayerNorm(256)
            self.fc1 = nn.Linear(256, 1024)
            self.fc2 = nn.Linear(1024, 256)

        def forward(self, x):
            h = self.ln1(x)
            q, k, v = self.q(h), self.k(h), self.v(h)
            s = nn.softmax(nn.matmul(q, nn.permute_dims(k, [0, 2, 1])), axis=-1)
            x = x + self.o(nn.matmul(s, v))
            return x + self.fc2(nn.gelu(self.fc1(self.ln2(x))))

    class Net(nn.Module):
        def __init__(self) -> None:
            self.blocks = nn.ModuleList([Block() for _ in range(layers)])

        def forward(self, x):
            for b in self.blocks:
                x = b(x)
            return x

    mod, _ = Net().export_tvm({"forward": {"x": nn.spec.Tensor((1, "n", 256), "float32")}})
    from pipeline_model.engine.graph_extract_tvm import extract_graph

    return ir_graph.graph_to_json(extract_graph(mod, "forward"))


def time_show(app: QApplication, view: GraphView, data: dict, highlight: set) -> dict:
    t0 = time.perf_counter()
    view.set_graph(data, highlight)
    # the GUI thread keeps turning its event loop while the layout thread works: the longest gap between
    # two turns is how long the GUI could not react (GIL hand-over and the scene build included)
    stall = 0.0
    last = time.perf_counter()
    while view.is_busy() and last - t0 < 60:
        app.processEvents()
        view._pool.waitForDone(2)  # noqa: SLF001 - lets the worker run, as an idle event loop would
        now = time.perf_counter()
        stall = max(stall, now - last)
        last = now
    assert not view.is_busy(), "layout did not finish"
    view.fit_to_view()
    view.viewport().repaint()
    app.processEvents()
    total = time.perf_counter() - t0
    return {"total_s": total, "layout_s": view.last_layout_seconds, "build_s": view.last_build_seconds,
            "stall_s": stall}


def time_repaints(app: QApplication, view: GraphView, scale: float, steps: int = 30) -> dict:
    view.resetTransform()
    view.scale(scale, scale)
    view._apply_lod()  # noqa: SLF001 - same call the view makes after zooming
    lay = view.graph_layout()
    # centre on the middle of the graph
    mid = lay.layer_rows[len(lay.layer_rows) // 2][0]
    view.centerOn(*lay.positions[mid])
    view.viewport().repaint()
    app.processEvents()
    pan, zoom = [], []
    hbar, vbar = view.horizontalScrollBar(), view.verticalScrollBar()
    for i in range(steps):
        t = time.perf_counter()
        vbar.setValue(vbar.value() + (40 if i % 2 == 0 else -25))
        hbar.setValue(hbar.value() + (15 if i % 3 == 0 else -10))
        view.viewport().repaint()
        pan.append((time.perf_counter() - t) * 1000)
    for i in range(steps):
        t = time.perf_counter()
        factor = 1.1 if i % 2 == 0 else 1 / 1.1
        view.scale(factor, factor)
        view._apply_lod()  # noqa: SLF001
        view.viewport().repaint()
        zoom.append((time.perf_counter() - t) * 1000)
    return {"pan_ms": statistics.median(pan), "pan_max_ms": max(pan),
            "zoom_ms": statistics.median(zoom), "zoom_max_ms": max(zoom), "detail": view.detail_shown()}


def report(name: str, data: dict, app: QApplication, view: GraphView, repeat: int = 5) -> None:
    n = len(data["nodes"])
    print(f"\n== {name}: {n} nodes, {len(data['edges'])} edges")
    g = ir_graph.graph_from_json(data)
    t = time.perf_counter()
    lay = compute_layout(g)
    pure = time.perf_counter() - t
    print(f"layout alone (GUI-free): {pure * 1000:.0f} ms  layers={len(lay.layer_rows)} dummies={lay.dummy_count} "
          f"crossings {lay.crossings_before} -> {lay.crossings_after}  size={lay.width:.0f}x{lay.height:.0f}")
    highlight = {nd["id"] for nd in data["nodes"][::7]}
    runs = [time_show(app, view, data, highlight) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["total_s"])
    med = statistics.median(r["total_s"] for r in runs)
    med_layout = statistics.median(r["layout_s"] for r in runs)
    med_build = statistics.median(r["build_s"] for r in runs)
    print(f"set_graph -> shown + first paint: median {med * 1000:.0f} ms, best {best['total_s'] * 1000:.0f} ms, "
          f"worst {max(r['total_s'] for r in runs) * 1000:.0f} ms over {repeat} (median layout thread "
          f"{med_layout * 1000:.0f} ms, scene build {med_build * 1000:.0f} ms) "
          f"ratio {med / SHOW_TARGET_S:.2f} of {SHOW_TARGET_S:.0f} s target")
    stall = statistics.median(r["stall_s"] for r in runs)
    print(f"GUI thread during the layout: longest event-loop gap median {stall * 1000:.1f} ms "
          f"(the layout runs on a worker thread)")
    for label, scale in (("fit (overview)", None), ("0.2x", 0.2), ("0.42x (detail)", 0.42), ("0.5x", 0.5),
                         ("0.6x", 0.6), ("1.0x", 1.0), ("2.0x", 2.0)):
        if scale is None:
            view.fit_to_view()
            scale = view.current_scale()
        r = time_repaints(app, view, scale)
        worst = max(r["pan_ms"], r["zoom_ms"])
        print(f"repaint at {label:<15} scale={scale:.4f} detail={r['detail']!s:<5} pan median {r['pan_ms']:.1f} ms "
              f"(max {r['pan_max_ms']:.1f}), zoom median {r['zoom_ms']:.1f} ms (max {r['zoom_max_ms']:.1f}) "
              f"ratio {worst / REPAINT_TARGET_MS:.2f} of {REPAINT_TARGET_MS:.0f} ms target")


DEFAULT_STEPS = ("relax.LegalizeOps", "relax.AnnotateTIROpPattern", "relax.FuseOps", "relax.FuseTIR",
                 "relax.DeadCodeElimination")


def _rss_mb(field: str = "VmRSS:") -> float:
    """The process's resident set (``VmHWM:``: its peak) in MB."""
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field):
                return int(line.split()[1]) / 1024.0
    return 0.0


class _StallMonitor:
    """The GUI thread's longest event-loop gap: a 2 ms timer on the GUI thread notes how late each tick is."""

    def __init__(self) -> None:
        from PySide6.QtCore import QTimer  # noqa: PLC0415

        self.timer = QTimer()
        self.timer.setInterval(2)
        self.timer.timeout.connect(self._tick)
        self.last = time.perf_counter()
        self.worst = 0.0

    def _tick(self) -> None:
        now = time.perf_counter()
        self.worst = max(self.worst, now - self.last)
        self.last = now

    def reset(self) -> None:
        self.last = time.perf_counter()
        self.worst = 0.0
        self.timer.start()

    def stop(self) -> float:
        self.timer.stop()
        return self.worst


def _wait(cond: Any, limit_s: float = 300.0) -> bool:
    """Run the Qt event loop (as the app does) until ``cond()`` holds; False on time-out."""
    from PySide6.QtCore import QEventLoop, QTimer  # noqa: PLC0415

    if cond():
        return True
    loop = QEventLoop()
    check = QTimer()
    check.setInterval(1)
    check.timeout.connect(lambda: loop.quit() if cond() else None)
    check.start()
    QTimer.singleShot(int(limit_s * 1000), loop.quit)
    loop.exec()
    check.stop()
    return bool(cond())


def _write_pipeline(args: argparse.Namespace, tmp: str) -> tuple[Any, str]:
    """The bench's pipeline document (``--pipeline`` or ``--steps``/the default steps on ``--model``, a generated
    decoder with ``--layers``), saved in ``tmp``: the document and its path."""
    from pipeline_model.document import PipelineDocument, Step  # noqa: PLC0415
    from pipeline_model.fileformat import load_pipeline, save_pipeline  # noqa: PLC0415

    model = args.model
    if args.layers:
        # A deeper builtin:decoder, written next to the pipeline (a 50,000-node real-structured graph
        # needs ~800 layers: 63 nodes per layer).
        model = os.path.join(tmp, f"decoder{args.layers}.py")
        with open(model, "w", encoding="utf-8") as handle:
            handle.write(builtin_model_source("decoder", layers=int(args.layers)))
    steps = [s.strip() for s in args.steps.split(",") if s.strip()] if args.steps else list(DEFAULT_STEPS)
    if args.pipeline:
        doc = load_pipeline(args.pipeline)
        doc.model = model
    else:
        doc = PipelineDocument(model=model, target={"kind": "llvm"}, steps=[Step(s) for s in steps])
    path = os.path.join(tmp, "bench.rps.json")
    save_pipeline(doc, path)
    return doc, path


class _ModelBench:
    """A real model's bench in the real main window: its run, and the timing of each step's selection (the
    figures of the module docstring)."""

    def __init__(self, args: argparse.Namespace, app: QApplication, win: Any) -> None:
        self.args, self.app, self.win = args, app, win
        self.gv, self.insp, self.graphs = win.graph_view, win.inspector, win.graphs
        self.monitor = _StallMonitor()
        self.queued: list[float] = []
        self.painted: list[float] = []  # when this selection's graph was first on screen (maybe not yet coloured)
        self.watching = ""
        self.coloured: list[float] = []
        self.replies: list[float] = []
        self.whole: list[float] = []

    def run_pipeline(self, path: str, doc: Any) -> tuple[float, Any]:
        """Open the pipeline file and run it in the engine: the seconds until it settled, and its result."""
        win = self.win
        if not _wait(lambda: win.ctx.catalogue.catalogue is not None, 120):
            raise SystemExit("bench_graph: no pass catalogue from the engine")
        finished: list = []
        win.session.run_finished.connect(lambda _rev, result: finished.append(result))
        t = time.perf_counter()
        win.files.open_pipeline(path, remember=False)
        win.session.run_pipeline()
        def settled() -> bool:  # the last run of this document ended (opening may start more than one)
            return (bool(finished) and not win.act_stop.isEnabled() and len(finished[-1].steps) == len(doc.steps)
                    and all(win.step_model.result(st.uid) is not None for st in win.ctrl.doc.steps))

        if not _wait(settled, 900):
            raise SystemExit("bench_graph: the pipeline did not finish")
        _wait(lambda: False, 0.5)  # a run started by the model probe would show now
        if not _wait(settled, 900):
            raise SystemExit("bench_graph: the pipeline did not finish")
        run_s = time.perf_counter() - t
        result = finished[-1]
        if result.error or result.failed_index is not None:
            failed = result.steps[result.failed_index].error if result.failed_index is not None else ""
            raise SystemExit(f"bench_graph: the pipeline failed: {result.error or failed}")
        return run_s, result

    def _shown(self, key: str) -> bool:
        gv, graphs = self.gv, self.graphs
        return (not gv.is_busy() and gv._key is not None and gv._key[0] == key  # noqa: SLF001
                and graphs._shown_graph is not None and graphs._shown_graph[0] == key)  # noqa: SLF001

    def _select(self, uid: str) -> None:
        win = self.win
        moved: list = []
        slot = moved.append
        win.pipeline_view.current_step_changed.connect(slot)
        win.pipeline_view.select_uids([uid] if uid else [])
        win.pipeline_view.current_step_changed.disconnect(slot)
        if not moved:  # the current step did not change (e.g. a one-step pipeline): show it as a click does
            self.insp.show_step(uid)

    def _engine_idle(self) -> bool:  # nothing asked of the engine is queued or running
        worker = self.win.ctx.engine
        return worker._current is None and not worker._jobs and worker._pending_run is None  # noqa: SLF001

    def _on_graph_shown(self) -> None:
        gv = self.gv
        if not self.painted and gv._key is not None and gv._key[0] == self.watching:  # noqa: SLF001
            gv.viewport().repaint()  # painted now, as the next event-loop turn would
            self.painted.append(time.perf_counter())

    def show(self, uid: str, key: str) -> tuple[float, float]:
        """Select a step and wait until its graph is shown: seconds to its first paint, and the longest stall."""
        app, gv, graphs, win = self.app, self.gv, self.graphs, self.win
        # Requests of an earlier selection (its step texts for the diff) still running in the engine
        # would delay this one; they are waited for first and reported apart (queued_ms).
        tq = time.perf_counter()
        _wait(self._engine_idle, 300)
        self.queued.append(time.perf_counter() - tq)
        if _tracer(app) is not None:
            app.mark()  # type: ignore[attr-defined]
            app.recording = True  # type: ignore[attr-defined]
        self.monitor.reset()
        self.painted.clear()
        self.watching = key
        t0 = time.perf_counter()
        self._select(uid)
        fn = graphs._current_function  # noqa: SLF001
        _wait(lambda: (key, fn) in graphs.graph_cache or (key, fn) in graphs._collapsed, 120)  # noqa: SLF001
        self.replies.append(time.perf_counter() - t0)
        if not _wait(lambda: self._shown(key), 120):
            raise SystemExit(f"bench_graph: the graph of {key} was not shown: {win.graph_caption.text()} "
                             f"(view: {gv._key}, busy {gv.is_busy()}; graphs: {graphs._shown_graph})")  # noqa: SLF001
        gv.viewport().repaint()
        done = time.perf_counter()
        # first paint of the graph; a large step graph's changes are coloured after it (coloured_ms)
        elapsed = (self.painted[0] if self.painted else done) - t0
        self.coloured.append(done - t0)
        # a collapsed view first: the whole graph comes next (what expanding and find read)
        _wait(lambda: not gv.is_partial() and not gv.is_busy(), 300)
        self.whole.append(time.perf_counter() - t0)
        app.processEvents()
        return elapsed, self.monitor.stop()

    def _end_trace(self, tracer: Any, label: str) -> None:
        """With ``--slow-events``: stop recording once the diff is done and report the selection's events."""
        if tracer is not None:
            _wait(lambda: not self.insp.diff_view.is_busy(), 60)
            tracer.recording = False
            tracer.report(label, sys.stderr)

    def first_show_row(self, name: str, uid: str, key: str) -> dict:
        """Select a step for the first time (cold): its row of figures."""
        gv = self.gv
        profiler = None
        if self.args.profile:
            import cProfile  # noqa: PLC0415

            profiler = cProfile.Profile()  # the GUI thread only: what stalls it
            profiler.enable()
        tracer = _tracer(self.app)
        first, stall = self.show(uid, key)
        self._end_trace(tracer, f"{name}: first show")
        if profiler is not None:
            import pstats  # noqa: PLC0415

            profiler.disable()
            print(f"--- {name}: first show, GUI thread", file=sys.stderr)
            pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(8)
        gv.fit_to_view()
        t1 = time.perf_counter()
        gv.viewport().repaint()
        fit_ms = (time.perf_counter() - t1) * 1000
        return {"name": name, "nodes": len((gv.graph_json() or {}).get("nodes", [])),
                "queued_ms": round(self.queued[-1] * 1000, 1),
                "graph_reply_ms": round(self.replies[-1] * 1000, 1),
                "shown_nodes": len(gv.node_ids()), "first_show_ms": round(first * 1000, 1),
                "coloured_ms": round(self.coloured[-1] * 1000, 1), "whole_graph_ms": round(self.whole[-1] * 1000, 1),
                "max_stall_ms": round(stall * 1000, 1), "fit_repaint_ms": round(fit_ms, 1),
                "shown_rss_mb": round(_rss_mb(), 1)}

    def reshow(self, row: dict, name: str, uid: str, key: str) -> None:
        """Select a step again after another one (graph cache + layout cache), then ``--expand-all``: into its row."""
        tracer = _tracer(self.app)
        reshow, stall = self.show(uid, key)
        self._end_trace(tracer, f"{name}: shown again")
        row["reshow_ms"] = round(reshow * 1000, 1)
        row["max_stall_ms"] = max(row["max_stall_ms"], round(stall * 1000, 1))
        if self.args.expand_all:
            self.expand_all(row)

    def expand_all(self, row: dict) -> None:
        """Expand All until painted at fit (figures into ``row``), then collapse again."""
        gv = self.gv
        self.monitor.reset()
        t3 = time.perf_counter()
        gv.expand_all()
        _wait(lambda: not gv.is_busy(), 120)
        gv.fit_to_view()
        gv.viewport().repaint()
        row.update(expanded_nodes=len(gv.node_ids()), expand_all_ms=round((time.perf_counter() - t3) * 1000, 1),
                   expand_all_stall_ms=round(self.monitor.stop() * 1000, 1), expanded_rss_mb=round(_rss_mb(), 1))
        gv.collapse_all()
        _wait(lambda: not gv.is_busy(), 120)

    def measure(self, steps: list[tuple[str, str, str]]) -> list[dict]:
        """Each step with a snapshot selected cold, then each again after another: one row per step."""
        self.gv.graph_shown.connect(self._on_graph_shown)
        shown = [s for s in steps if s[2]]
        rows = [self.first_show_row(name, uid, key) for name, uid, key in shown]
        for row, (name, uid, key) in zip(rows, shown):
            self.reshow(row, name, uid, key)
        return rows


def bench_model(args: argparse.Namespace, app: QApplication, view: Any = None) -> dict:
    """Per-step figures for a real model in the real main window (see the module docstring)."""
    import tempfile  # noqa: PLC0415

    from PySide6.QtCore import QSettings  # noqa: PLC0415

    tmp = tempfile.mkdtemp(prefix="bench_graph_")
    os.environ.setdefault("RPS_CACHE_DIR", os.path.join(tmp, "cache"))
    from app.main_window import MainWindow  # noqa: PLC0415

    doc, path = _write_pipeline(args, tmp)
    win = MainWindow(settings=QSettings(os.path.join(tmp, "studio.ini"), QSettings.Format.IniFormat))
    win.resize(args.width + 500, args.height + 300)
    if args.layers:
        win.ctx.trust.override = True  # the generated model file is code the bench wrote itself
    win.show()
    bench = _ModelBench(args, app, win)
    try:
        run_s, result = bench.run_pipeline(path, doc)
        if not args.json:
            print(f"engine: pipeline of {len(doc.steps)} steps on {args.model} in {run_s:.1f} s (main window)")
        steps = [("input", "", result.input_key)] + [(s.pass_id, s.uid, s.snapshot_key) for s in result.steps]
        rows = bench.measure(steps)
        if not args.json:
            for row in rows:
                print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))
        return {"steps": rows, "rss_mb": round(_rss_mb(), 1), "peak_rss_mb": round(_rss_mb("VmHWM:"), 1),
                "engine_run_s": round(run_s, 2), "loadavg": _loadavg()}
    finally:
        win.ctrl.undo_stack.setClean()
        win.close()


def _tracer(app: QApplication) -> Any:
    """The event-timing application (``--slow-events``; it records from each selection on); None without it."""
    from bench.event_trace import TimingApplication  # noqa: PLC0415

    return app if isinstance(app, TimingApplication) else None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--model", help="builtin:NAME or a model file: bench the real model's steps instead")
    ap.add_argument("--pipeline", help="pipeline file (default: the five fusion steps)")
    ap.add_argument("--function", default=None, help="Relax function to show (default: the module's)")
    ap.add_argument("--json", action="store_true", help="print one JSON object as the last line")
    ap.add_argument("--profile", action="store_true", help="cProfile the GUI thread while steps are shown (stderr)")
    ap.add_argument("--expand-all", action="store_true", help="also time expanding every group")
    ap.add_argument("--layers", type=int, default=0,
                    help="with --model builtin:decoder: bench a generated decoder with this many layers instead")
    ap.add_argument("--steps", default="", help="comma-separated pass ids instead of the default five steps")
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--real-layers", type=int, default=0,
                    help="also bench a real Relax module with this many transformer blocks (needs TVM)")
    ap.add_argument("--repeat", type=int, default=5, help="shows per graph (the median is reported)")
    ap.add_argument("--switch-interval-ms", type=float, default=0.0,
                    help="GIL switch interval of this (GUI) process; default: the app's (app.application)")
    ap.add_argument("--width", type=int, default=1280)
    ap.add_argument("--height", type=int, default=800)
    ap.add_argument("--slow-events", type=float, default=0.0, metavar="MS",
                    help="log GUI-thread events taking MS or longer and every LayoutRequest per selection (stderr; "
                         "bench/event_trace.py: timing every event costs GUI-thread time of its own)")
    args = ap.parse_args()
    if args.slow_events and QApplication.instance() is None:
        from bench.event_trace import TimingApplication  # noqa: PLC0415

        TimingApplication(sys.argv, threshold_ms=args.slow_events)
    app = QApplication.instance() or QApplication(sys.argv)
    if args.model:
        from app.application import make_application  # noqa: PLC0415 - as the app: style, GIL switch interval

        make_application()
        if args.switch_interval_ms:
            sys.setswitchinterval(args.switch_interval_ms / 1000.0)
        if not args.json:
            print(f"platform={app.platformName()} cores={os.cpu_count()} loadavg at start: {_loadavg()}")
        res = bench_model(args, app)
        if args.json:
            import json  # noqa: PLC0415

            print(json.dumps(res))
        else:
            print(f"GUI-side RSS {res['rss_mb']} MB (peak {res['peak_rss_mb']} MB); loadavg at end: {_loadavg()}")
        return
    view = GraphView()
    view.resize(args.width, args.height)
    view.show()
    app.processEvents()
    print(f"platform={app.platformName()} viewport={args.width}x{args.height} cores={os.cpu_count()} "
          f"loadavg at start: {_loadavg()}")
    report("synthetic transformer-like Relax graph", ir_graph.synthetic_graph_json(args.nodes), app, view,
           args.repeat)
    report("synthetic, legalized (call_tir)", ir_graph.synthetic_graph_json(args.nodes, legalized=True), app, view,
           args.repeat)
    if args.real_layers:
        t = time.perf_counter()
        data = real_graph_json(args.real_layers)
        print(f"\n(real module exported and extracted in {time.perf_counter() - t:.1f} s)")
        report(f"real nn.Module stack, {args.real_layers} blocks", data, app, view, args.repeat)
    # a grab into an image, the way a screenshot is taken
    img = QImage(view.viewport().size(), QImage.Format.Format_ARGB32_Premultiplied)
    painter = QPainter(img)
    view.viewport().render(painter, QPoint())
    painter.end()
    print(f"\nloadavg at end: {_loadavg()}")


def _loadavg() -> str:
    try:
        with open("/proc/loadavg", encoding="ascii") as fh:
            return " ".join(fh.read().split()[:3])
    except OSError:
        return "n/a"


if __name__ == "__main__":
    main()
