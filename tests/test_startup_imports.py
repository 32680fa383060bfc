"""Start-up (issue 33): the first frame imports and builds only what it shows; the rest follows it or its first use.

The real ``run_app`` runs in a subprocess; a spy on :func:`app.application.after_first_paint` notes, when the
first paint came, which modules were imported, which of the main window's lazily built parts exist and whether
the engine's thread had started; then, one event-loop turn later (the window's own after-paint hook has run),
the same again; then it closes the window (the engine and the start-up document are never started). Other tests
use the first-built parts on a window of their own: each works on its first use. No timing is asserted.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import ROOT, qt_wait
from tests.gui_process import gui_env

#: Modules the first frame does not need (each costs milliseconds to 0.5 s to import on a 2-core machine).
HEAVY = ("networkx", "numpy", "jsonschema", "psutil", "pygments.lexers", "pygments.styles", "tvm",
         "pipeline_model.engine.client", "pipeline_model.diff_process", "pipeline_model.recovery",
         "widgets.latency_chart", "pipeline_model.env_report", "pipeline_model.models")
#: Modules of the panels behind the first frame's tabs (built on the turn after the first paint).
HIDDEN_PANELS = ("app.run_controller", "widgets.run_panel", "app.profile_controller", "widgets.profile_view",
                 "pipeline_model.build_api")
#: Modules of the dialogs' controllers (built on first use).
DIALOGS = ("app.bisect_controller", "app.diverge_controller", "app.compare_controller",
           "app.reproducer_controller", "app.reduce_controller", "app.pass_context_controller",
           "pipeline_model.debugging.bisect")
#: Longest wait for a paint or an answer of the fake engine (a guard against hangs, never a timing assertion).
GUARD_MS = 120_000
#: The window's parts built after the first paint or on first use (``functools.cached_property``).
LAZY_PARTS = ("run_controller", "profiles", "bisector", "diverger", "comparer", "reproducers", "reducer",
              "pass_context")

SPY = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
from PySide6.QtCore import QTimer
from app import application

seen = {}
real = application.after_first_paint
PARTS = %r

def note(window):
    return {"modules": sorted(sys.modules), "parts": [p for p in PARTS if p in vars(window)],
            "palette_rows": window.palette.model.rowCount(),
            "docks_filled": [d.objectName() for d in (window.run_dock, window.profile_dock) if d.widget() is not None],
            "engine_thread_started": window.worker.isRunning()}

def spy(window, callback, fallback_ms=2000):
    def at_first_paint():
        seen["paint"] = note(window)
        def after():
            seen["idle"] = note(window)
            window.close()
        QTimer.singleShot(0, after)  # after the window's own after-paint hook (installed earlier, called later)
    real(window, at_first_paint, fallback_ms=600000)  # no fallback: wait for the real paint

application.after_first_paint = spy
code = application.run_app([])
print(json.dumps(dict(seen, exit=code)))
""" % (LAZY_PARTS,)


@pytest.fixture(scope="module")
def startup(tmp_path_factory):
    """What the spy noted at the first paint (``paint``) and one event-loop turn later (``idle``), the pass
    catalogue cached by an earlier start (the palette shows it in the first frame)."""
    from app.engine_worker import save_cached_catalogue
    from tests.fake_engine import FakeEngineClient

    tmp_path = tmp_path_factory.mktemp("startup")
    cache = tmp_path / "rps_cache"
    save_cached_catalogue(str(cache), "fake", FakeEngineClient().catalogue())
    proc = subprocess.run([sys.executable, "-c", SPY, ROOT], env=gui_env(tmp_path, RPS_CACHE_DIR=str(cache)),
                          cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "paint" in seen, "the window was never painted"
    assert "idle" in seen, "no event-loop turn came after the first paint"
    return seen


def test_first_paint_imports_nothing_heavy_and_starts_no_engine(startup):
    paint = startup["paint"]
    loaded = [name for name in HEAVY + HIDDEN_PANELS + DIALOGS if name in paint["modules"]]
    assert loaded == [], f"imported before the first paint: {loaded}"
    assert paint["parts"] == [] and paint["docks_filled"] == []  # nothing of them was built
    assert paint["engine_thread_started"] is False  # the engine starts behind the painted window
    assert "app.main_window" in paint["modules"] and "widgets.diff_view" in paint["modules"]
    assert paint["palette_rows"] > 0  # the cached catalogue is in the first frame


def test_hidden_panels_are_built_right_after_the_first_paint(startup):
    idle = startup["idle"]
    assert [name for name in HIDDEN_PANELS if name not in idle["modules"]] == []
    assert set(idle["parts"]) == {"run_controller", "profiles"}
    assert idle["docks_filled"] == ["runDock", "profileDock"]
    # the dialogs wait for their first use; the engine for run_app's own hook (replaced by the spy here)
    assert [name for name in DIALOGS if name in idle["modules"]] == []
    assert idle["engine_thread_started"] is False


@pytest.fixture
def fresh_window(gui_env, qapp, qtbot):
    """A main window on the fake engine, not shown (nothing built after a first paint yet)."""
    from app.main_window import MainWindow
    from tests.fake_engine import FakeEngineClient

    win = MainWindow(client_factory=FakeEngineClient, start_engine=False)
    win.ctx.consent.override = True
    qtbot.addWidget(win)
    assert [part for part in LAZY_PARTS if part in vars(win)] == []
    assert win.run_dock.widget() is None and win.profile_dock.widget() is None
    yield win
    win.worker.shutdown()


def test_dialogs_work_on_their_first_use(fresh_window):
    win = fresh_window
    win.worker.start()
    assert qt_wait(lambda: win.ctx.catalogue.catalogue is not None, GUARD_MS)
    win.act_bisect.trigger()
    assert win.bisector.dialog is not None and win.bisector.dialog.isVisible()
    win.act_compare_many.trigger()
    assert win.comparer.dialog is not None and win.comparer.dialog.isVisible()
    win.act_pass_context.trigger()
    assert win.pass_context.dialog is not None and win.pass_context.dialog.isVisible()
    win.act_reduce.trigger()
    assert win.reducer.dialog is not None and win.reducer.dialog.isVisible()
    assert win.reducer.reproducers is win.reproducers and win.reproducers.bisector is win.bisector
    win.pipeline_view.reproducer_requested.emit("no-such-step")  # the step list's menu
    assert "nothing to reproduce" in win.statusBar().currentMessage()
    assert win.help.show_environment().isVisible()  # Help ▸ Environment (its dialog's module comes with it)
    win.act_diverge.trigger()  # no step selected: says so
    assert "diverger" in vars(win) and win.diverger.dialog is None


def test_hidden_panels_work_on_their_first_use(fresh_window):
    win = fresh_window
    win.act_heat.setChecked(False)  # View ▸ Profile Heat Overlay builds the Profile dock's controller
    assert "profiles" in vars(win) and win.profile_dock.widget() is win.profile_view
    assert win.graph_view.heat_visible() is False
    win.target_menu.aboutToShow.emit()  # the target button's menu builds the Build & Run panel and controller
    assert "run_controller" in vars(win) and win.run_dock.widget().widget() is win.run_panel
    assert win.target_menu.actions()  # filled by the controller
    win.build_hidden_parts()  # nothing built twice
    assert win.run_dock.widget().widget() is win.run_panel and win.profile_dock.widget() is win.profile_view


def test_a_hidden_panel_on_top_at_start_is_built_for_the_first_frame(gui_env, qapp, qtbot):
    """A remembered layout with the Profile tab on top: its panel is there when the first frame is painted."""
    from PySide6.QtCore import QEvent, QObject

    from app.main_window import MainWindow

    first = MainWindow(start_engine=False)
    qtbot.addWidget(first)
    first.resize(1024, 700)
    first.show()
    qtbot.waitExposed(first, timeout=GUARD_MS)
    first.profile_dock.raise_()
    qtbot.waitUntil(lambda: not first.profile_dock.visibleRegion().isEmpty(), timeout=GUARD_MS)
    first.close()  # remembers the layout
    win = MainWindow(start_engine=False)
    qtbot.addWidget(win)
    painted: list[tuple[bool, bool]] = []

    class Spy(QObject):
        def eventFilter(self, obj, event):  # noqa: N802 - Qt API
            if obj is win and event.type() == QEvent.Type.Paint and not painted:
                painted.append((win.profile_dock.widget() is not None, win.run_dock.widget() is not None))
            return False

    spy = Spy()
    win.installEventFilter(spy)
    win.show()
    qtbot.waitUntil(lambda: bool(painted), timeout=GUARD_MS)
    assert painted[0] == (True, False)  # the Profile panel is on the first frame; Build & Run's follows it
    qtbot.waitUntil(lambda: win.run_dock.widget() is not None, timeout=GUARD_MS)
    assert not win.profile_dock.visibleRegion().isEmpty()
