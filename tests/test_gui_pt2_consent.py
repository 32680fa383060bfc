"""The GUI's open paths ask before a pickle-bearing ``.pt2`` archive loads (issue 20): File ▸ Open, Open Recent
and a drop of a pipeline whose model is such an archive, and Open Model… of the archive itself. The consent
dialog shows what the pickles would run (an archive has no source). On the fake engine, which refuses exactly
like the engine (``pipeline_model.consent``)."""

from __future__ import annotations

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QMimeData, QUrl  # noqa: E402
from PySide6.QtWidgets import QMenu, QMessageBox  # noqa: E402

from pipeline_model import consent  # noqa: E402
from pipeline_model.document import PipelineDocument, Step  # noqa: E402
from tests.conftest import qt_wait  # noqa: E402
from tests.test_gui_consent import asked, studio  # noqa: E402,F401 - fixtures
from tests.test_pickle_scan import evil_archives, pt2  # noqa: E402,F401 - fixtures


def _saved_pipeline(folder, model: str) -> str:
    from pipeline_model.fileformat import save_pipeline

    path = folder / "p.json"
    save_pipeline(PipelineDocument(model=model, steps=[Step("relax.LegalizeOps")]), str(path))
    return str(path)


@pytest.mark.parametrize("how", ["open", "recent", "drop"])
def test_open_paths_ask_before_a_pickled_archive_loads(studio, asked, tmp_path, pt2, how):  # noqa: F811
    questions, _answers = asked
    fake = studio.fake_client
    archive = evil_archives(pt2, tmp_path, str(tmp_path / "ran"))["weights"]
    path = _saved_pipeline(tmp_path, archive)
    studio.session.auto_run = True
    if how == "open":
        assert studio.files.open_pipeline(path)
    elif how == "recent":
        from app import settings as app_settings_mod

        app_settings_mod.add_recent_file(studio.ctx.settings, path)
        menu = QMenu()
        studio.files.fill_recent_menu(menu)
        action = next(a for a in menu.actions() if a.text() == path)
        action.trigger()
    else:
        mime = QMimeData()
        mime.setUrls([QUrl.fromLocalFile(path)])
        assert studio.files.open_dropped(mime)
    assert qt_wait(lambda: bool(questions), 10_000), "no consent question for the archive"
    assert "data/weights/weight_0" in questions[0] and "system" in questions[0]
    assert qt_wait(lambda: bool(fake.refusals), 10_000), "the engine was not asked (and refused)"
    assert fake.refusals[-1][0]["kind"] == consent.KIND_MODEL
    assert qt_wait(lambda: studio.session.last_run is not None and "holds a pickle" in (studio.session.last_run.error
                                                                                          or ""), 10_000)


def test_open_model_of_a_pickled_archive_asks_first(studio, asked, tmp_path, pt2, monkeypatch):  # noqa: F811
    questions, _answers = asked
    archive = evil_archives(pt2, tmp_path, str(tmp_path / "ran"))["inputs"]
    warnings: list = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: warnings.append(a[2])))
    studio.files.open_model(archive)
    assert len(questions) == 1 and "sample_inputs" in questions[0]
    assert studio.ctrl.doc.model == "builtin:mlp"


def test_plain_archive_asks_nothing(studio, asked, tmp_path, pt2):  # noqa: F811
    questions, _answers = asked
    path = _saved_pipeline(tmp_path, pt2)
    studio.session.auto_run = True
    assert studio.files.open_pipeline(path)
    qt_wait(lambda: studio.session.last_run is not None, 10_000)
    assert questions == []
