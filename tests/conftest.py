"""Shared pytest fixtures.

``engine``: one :class:`pipeline_model.engine.client.EngineClient` (a real engine process) shared by the
whole test session — starting an engine imports TVM (seconds), so tests that only need *an* engine use
this one. Tests that crash or kill the engine on purpose create their own client.
"""

from __future__ import annotations

import contextlib
import os

import pytest

#: Session-wide tuning fixtures (``tuned_mlp``: the suite's one real MetaSchedule run).
pytest_plugins = ["tests.tuning_fixtures", "tests.process_guard"]
#: ``tests.process_guard``: a session that leaves a process it started alive fails; TVM worker pools started
#: in-process by a test are ended after it.

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: Folder of the bundled example pipelines.
PIPELINES_DIR = os.path.join(ROOT, "resources", "pipelines")


@pytest.fixture(scope="session")
def engine():
    """A session-wide EngineClient (step watchdog 300 s); closed at the end of the session."""
    from pipeline_model.engine.client import EngineClient

    client = EngineClient(step_timeout_s=300.0)
    yield client
    client.close()


@pytest.fixture(scope="session")
def repo_root() -> str:
    """Absolute path of the repository root."""
    return ROOT


def bundled_pipeline_paths() -> list[str]:
    """Paths of the bundled example pipeline files (``resources/pipelines/*.json``)."""
    return sorted(os.path.join(PIPELINES_DIR, n) for n in os.listdir(PIPELINES_DIR) if n.endswith(".json"))


@pytest.fixture(scope="session")
def bundled_pipelines() -> list[str]:
    """Paths of :func:`bundled_pipeline_paths`."""
    return bundled_pipeline_paths()


#: Bundled pipelines that need custom code (trust) or real MetaSchedule tuning (about a minute); they
#: have their own tests (tests/test_tuning_engine.py) and are left out of the quick "runs cleanly" ones.
SPECIAL_PASS_PREFIXES = ("custom.python", "relax.MetaScheduleTune")


def quick_bundled_pipeline_paths() -> list[str]:
    """Bundled pipelines that run to the end quickly without trust: every one without special steps."""
    import json

    quick = []
    for path in bundled_pipeline_paths():
        with open(path, encoding="utf-8") as fh:
            steps = json.load(fh).get("steps") or []
        if not any(str(s.get("pass", "")).startswith(SPECIAL_PASS_PREFIXES) for s in steps):
            quick.append(path)
    return quick


@pytest.fixture(scope="session")
def quick_bundled_pipelines() -> list[str]:
    """Paths of :func:`quick_bundled_pipeline_paths`."""
    return quick_bundled_pipeline_paths()


# ---- Qt fixtures (GUI tests) -----------------------------------------------------------------


def qt_wait(cond, timeout_ms: int = 120_000) -> bool:
    """Process Qt events until ``cond()`` is true or ``timeout_ms`` passed; returns ``cond()``'s outcome."""
    from PySide6.QtCore import QDeadlineTimer, QThread
    from PySide6.QtWidgets import QApplication

    deadline = QDeadlineTimer(timeout_ms)
    while not cond():
        if deadline.hasExpired():
            return False
        QApplication.processEvents()
        QThread.msleep(10)
    return True


def profiled_build_and_run(win) -> dict:
    """Build & Run the selected step's module with *Profile* checked on a main window; its answer."""
    win.run_panel.profile_check.setChecked(True)
    try:
        done: list = []
        win.run_controller.finished.connect(lambda kind, value: done.append(value))
        win.run_controller.failed.connect(lambda kind, message: done.append(message))
        assert win.run_controller.build_and_run()
        assert qt_wait(lambda: bool(done), 300_000)
        assert isinstance(done[0], dict), done[0]
        return done[0]
    finally:
        win.run_panel.profile_check.setChecked(False)


@pytest.fixture(scope="module")
def gui_env(tmp_path_factory):
    """Settings and cache folders of the app in a temporary folder (per test module)."""
    base = tmp_path_factory.mktemp("gui_env")
    old = {k: os.environ.get(k) for k in ("RPS_CONFIG_DIR", "RPS_CACHE_DIR", "XDG_STATE_HOME", "XDG_CONFIG_HOME")}
    os.environ["RPS_CONFIG_DIR"] = str(base / "config")
    os.environ["RPS_CACHE_DIR"] = str(base / "cache")
    os.environ["XDG_STATE_HOME"] = str(base / "state")  # recovery files (autosave)
    os.environ["XDG_CONFIG_HOME"] = str(base / "xdg_config")
    yield base
    for k, v in old.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v


def answer_of(controller, start, timeout_ms: int = 20_000):
    """What ``controller`` answers (the value of its ``finished`` signal or the message of its ``failed`` one) to
    the engine work ``start()`` begins (``start`` must return true)."""
    got: list = []
    controller.finished.connect(got.append)
    controller.failed.connect(got.append)
    assert start()
    assert qt_wait(lambda: bool(got), timeout_ms)
    return got[0]


@contextlib.contextmanager
def shown_window(client, timeout_ms: int = 120_000, size=None, **kwargs):
    """A main window on ``client`` (``kwargs``: more ``MainWindow`` arguments; ``size``: resized to it), all code
    consented to (``ctx.consent.override``), shown and its catalogue arrived; after the block its undo stack is
    made clean and it is closed."""
    from app.main_window import MainWindow

    win = MainWindow(client_factory=lambda: client, **kwargs)
    win.ctx.consent.override = True
    if size is not None:
        win.resize(*size)
    win.show()
    assert qt_wait(lambda: win.ctx.catalogue.catalogue is not None, timeout_ms), "the catalogue never arrived"
    yield win
    win.ctrl.undo_stack.setClean()
    win.close()


@pytest.fixture(scope="module")
def studio(gui_env, engine, qapp):
    """A shown main window on the session engine, catalogue loaded, custom code trusted (per module)."""
    with shown_window(engine, close_client=False) as win:
        yield win


@pytest.fixture(scope="module")
def fake_studio(gui_env, qapp):
    """A shown main window on the TVM-free fake engine (``tests/fake_engine.py``), all code consented to
    (``ctx.consent.override``)."""
    from tests.fake_engine import FakeEngineClient

    client = FakeEngineClient()
    with shown_window(client, 20_000, close_client=False) as win:
        win.fake_client = client
        yield win


@pytest.fixture
def own_window(gui_env, qapp):
    """A real main window with an engine of its own (tests that crash, stop or restart it), consenting to all code."""
    from pipeline_model.engine.client import EngineClient

    client = EngineClient(step_timeout_s=300.0)
    with shown_window(client) as win:
        win.client = client
        yield win
    client.close()


@pytest.fixture
def zh_window(qapp, gui_env, tmp_path):
    """The main window in zh_CN on the fake engine (settings in ``tmp_path``), its translator removed after."""
    from app.i18n import install_translator
    from PySide6.QtCore import QSettings

    from tests.fake_engine import FakeEngineClient

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    with shown_window(FakeEngineClient(), 20_000, (1400, 900), close_client=False,
                      settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat)) as win:
        yield win
    qapp.removeTranslator(translator)
