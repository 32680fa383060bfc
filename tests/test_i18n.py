"""Translations: every user-visible string of app/ and widgets/ goes through Qt's translation system,
the zh_CN translation is complete and compiled, and the window shows Chinese with it installed."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TS = ROOT / "resources" / "translations" / "relax_pipeline_studio_zh_CN.ts"
QM = TS.with_suffix(".qm")
SOURCE_DIRS = ("app", "widgets", "pipeline_model/passkinds")
#: Single core modules with texts people read (the environment report).
SOURCE_FILES = ("pipeline_model/env_report.py", "pipeline_model/debugging/reduce.py")
#: Technical words shown as they are (numpy / TVM names, not prose).
ALLOWED_LITERALS = {"rtol", "atol"}

#: method name → index of the text argument
TEXT_METHODS = {
    "setText": 0, "setToolTip": 0, "setWindowTitle": 0, "setPlaceholderText": 0, "setStatusTip": 0,
    "setWhatsThis": 0, "setHeaderLabels": 0, "setHorizontalHeaderLabels": 0, "setVerticalHeaderLabels": 0,
    "addMenu": 0, "showMessage": 0, "setTitle": 0, "setLabelText": 0, "addTab": 1, "insertTab": 2,
    "setTabText": 1, "setItemText": 1, "addItem": 0, "insertItem": 1, "addItems": 0, "setSpecialValueText": 0,
    "setSuffix": 0, "setPrefix": 0, "setFormat": 0, "status": 0, "banner": 0, "show_message": 0, "setHtml": 0,
    "addAction": 0, "addRow": 0, "setInformativeText": 0, "clear_graph": 0, "set_bars": 1, "drawText": 2,
}
#: constructors whose first argument is a shown text
CTORS = {"QAction", "QLabel", "QPushButton", "QCheckBox", "QRadioButton", "QGroupBox", "QMenu", "QDockWidget",
         "QToolBar", "QTreeWidgetItem", "QListWidgetItem", "QStandardItem", "QTableWidgetItem"}
MESSAGE_BOX = {"critical", "warning", "information", "question", "about"}
FILE_DIALOG = {"getOpenFileName": (1, 3), "getSaveFileName": (1, 3), "getExistingDirectory": (1,)}
TR_NAMES = {"tr", "translate", "QT_TR_NOOP", "QT_TRANSLATE_NOOP"}


def _is_tr(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    name = f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None
    if name in TR_NAMES:
        return True
    return isinstance(f, ast.Attribute) and f.attr in ("format", "arg") and _is_tr(f.value)


def _prose(text: str) -> bool:
    text = re.sub(r"<[^>]*>|&\w+;|builtin:", " ", text)  # markup, model specs (builtin:mlp)
    return bool(re.search(r"[A-Za-z]{2}", text)) and text.strip() not in ALLOWED_LITERALS


def _untranslated(node: ast.AST) -> bool:
    """A literal text (string, f-string, concatenation, ``"…".format``) that did not go through tr."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _prose(node.value)
    if isinstance(node, ast.JoinedStr):
        return any(_prose(v.value) for v in node.values if isinstance(v, ast.Constant)) or any(
            _untranslated(v.value) for v in node.values if isinstance(v, ast.FormattedValue))
    if isinstance(node, ast.BinOp):
        return _untranslated(node.left) or _untranslated(node.right)
    if isinstance(node, ast.IfExp):
        return _untranslated(node.body) or _untranslated(node.orelse)
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_untranslated(e) for e in node.elts)
    if isinstance(node, ast.Call) and not _is_tr(node):
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr in ("format", "join"):
            return _untranslated(f.value) or any(_untranslated(a) for a in node.args)
    return False


def scan_source(source: str) -> list[tuple[int, str]]:
    """``(line, call)`` of every user-visible Qt call given a literal text that bypasses translation,
    and of every ``tr``/``translate`` whose text is not a literal (lupdate could not see it)."""
    problems = []
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # lupdate does not look inside f-strings
            for inner in ast.walk(node):
                if inner is not node and _is_tr(inner):
                    problems.append((node.lineno, "tr() inside an f-string (lupdate cannot see it): " + ast.unparse(node)[:90]))
                    break
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        f, args = node.func, []
        if isinstance(f, ast.Attribute) and f.attr in TEXT_METHODS:
            i = TEXT_METHODS[f.attr]
            args = node.args[i:i + 1]
        elif isinstance(f, ast.Name) and f.id in CTORS:
            args = node.args[:1]
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "QMessageBox" and f.attr in MESSAGE_BOX:
            args = node.args[1:3]
        elif isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "QFileDialog" and f.attr in FILE_DIALOG:
            args = [node.args[i] for i in FILE_DIALOG[f.attr] if i < len(node.args)]
        elif isinstance(f, ast.Attribute) and f.attr == "emit" and isinstance(f.value, ast.Attribute) \
                and f.value.attr in ("status_message", "banner_message"):
            args = node.args[:1]
        elif isinstance(f, ast.Attribute) and f.attr == "emit" and isinstance(f.value, ast.Attribute) \
                and f.value.attr == "state_changed":
            args = node.args[1:2]  # (state key, shown message)
        for arg in args:
            if _untranslated(arg):
                problems.append((node.lineno, ast.unparse(node)[:120]))
        # A bare tr()/translate() must get a literal, or lupdate never sees the text.
        if isinstance(f, ast.Name) and f.id in ("tr", "translate") and node.args:
            text = node.args[-1] if f.id == "translate" else node.args[0]
            if f.id == "translate" and len(node.args) >= 2:
                text = node.args[1]
            if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
                problems.append((node.lineno, "tr() of a non-literal: " + ast.unparse(node)[:100]))
    return problems


def _sources() -> list[Path]:
    files = []
    for folder in SOURCE_DIRS:
        pattern = "**/*.py" if folder in ("pipeline_model/passkinds", "widgets") else "*.py"  # folders of kinds/views
        files.extend(sorted((ROOT / folder).glob(pattern)))
    return files + [ROOT / path for path in SOURCE_FILES]


def test_scanner_catches_untranslated_texts():
    bad = '''
from PySide6.QtWidgets import QLabel, QMessageBox
def f(self, n):
    QLabel("Plain text", self)
    self.label.setText(f"{n} steps ran")
    self.setToolTip("Hello " + name)
    QMessageBox.warning(self, "Title", self.tr("ok text"))
    self.ctx.status("Saved {0}".format(n))
    tr(VARIABLE)
    x = f"{tr('hidden')} text"
'''
    good = '''
def f(self, n):
    QLabel(self.tr("Plain text"), self)
    self.label.setText(self.tr("{n} steps ran").format(n=n))
    self.setToolTip(tr("Hello {0}").format(name))
    QMessageBox.warning(self, tr("Title"), self.tr("ok text"))
    self.label.setText("✕")
    self.label.setText(f"<b>{title}</b>")
    QLabel("rtol", self)
'''
    assert sorted(line for line, _ in scan_source(bad)) == [4, 5, 6, 7, 8, 9, 10]
    assert scan_source(good) == []


def test_every_user_visible_text_goes_through_tr():
    problems = [f"{p.relative_to(ROOT)}:{line}: {call}" for p in _sources()
                for line, call in scan_source(p.read_text(encoding="utf-8"))]
    assert not problems, "texts shown without tr()/translate():\n" + "\n".join(problems)


def _messages(ts_path: Path) -> list[tuple[str, str, ET.Element]]:
    root = ET.parse(ts_path).getroot()
    return [(ctx.findtext("name") or "", msg.findtext("source") or "", msg)
            for ctx in root.iter("context") for msg in ctx.iter("message")]


def _lupdate() -> str:
    exe = Path(sys.executable).with_name("pyside6-lupdate")
    return str(exe) if exe.exists() else (shutil.which("pyside6-lupdate") or "")


def test_zh_cn_translation_is_complete_and_current(tmp_path):
    assert TS.exists(), "run scripts/update_translations.sh"
    messages = _messages(TS)
    unfinished = [f"[{c}] {s!r}" for c, s, m in messages
                  if m.find("translation").get("type") in ("unfinished",) or not (m.findtext("translation") or "").strip()
                  and m.find("translation").get("type") != "vanished" and m.find("translation").get("type") != "obsolete"]
    assert not unfinished, "zh_CN entries without a translation:\n" + "\n".join(unfinished)
    lupdate = _lupdate()
    if not lupdate:
        pytest.skip("pyside6-lupdate not installed")
    # Every text lupdate finds in the sources today has a finished translation in the shipped file.
    fresh = tmp_path / "fresh.ts"
    files = [str(p) for p in _sources()]
    subprocess.run([lupdate, *files, "-ts", str(fresh)], check=True, capture_output=True)
    shipped = {(c, s): m for c, s, m in messages}
    missing = []
    for c, s, _m in _messages(fresh):
        m = shipped.get((c, s))
        t = None if m is None else m.find("translation")
        if t is None or t.get("type") in ("unfinished", "vanished", "obsolete") or not (t.text or "").strip():
            missing.append(f"[{c}] {s!r}")
    assert not missing, "texts without a zh_CN translation (run scripts/update_translations.sh and translate):\n" + "\n".join(missing)


def test_placeholders_survive_translation():
    for c, s, m in _messages(TS):
        t = m.findtext("translation") or ""
        if m.find("translation").get("type") in ("vanished", "obsolete"):
            continue
        assert sorted(re.findall(r"\{\w*\}", s)) == sorted(re.findall(r"\{\w*\}", t)), f"[{c}] {s!r} -> {t!r}"
        assert sorted(re.findall(r"%\d|%[vm]", s)) == sorted(re.findall(r"%\d|%[vm]", t)), f"[{c}] {s!r} -> {t!r}"
        mnemonic = re.compile(r"(?<!&)&(?!&|amp;)\S")  # "&File" → "文件(&F)": menus keep their Alt keys
        assert bool(mnemonic.search(s)) == bool(mnemonic.search(t)), f"[{c}] {s!r} -> {t!r}"


def test_shipped_qm_matches_the_ts(tmp_path):
    lrelease = Path(sys.executable).with_name("pyside6-lrelease")
    if not lrelease.exists():
        pytest.skip("pyside6-lrelease not installed")
    out = tmp_path / "x.qm"
    subprocess.run([str(lrelease), str(TS), "-qm", str(out)], check=True, capture_output=True)
    assert QM.exists() and QM.read_bytes() == out.read_bytes(), "the .qm is stale: run scripts/update_translations.sh"


def test_system_locale_and_override_pick_the_language():
    from PySide6.QtCore import QLocale

    from app.i18n import resolve_language

    assert resolve_language("system", QLocale("zh_CN")) == "zh_CN"
    assert resolve_language("system", QLocale("en_US")) == "en"
    assert resolve_language("system", QLocale("de_DE")) == "en"
    assert resolve_language("en", QLocale("zh_CN")) == "en"
    assert resolve_language("zh_CN", QLocale("en_US")) == "zh_CN"


def test_main_window_menus_in_chinese(gui_env, qapp):
    from app.i18n import install_translator
    from app.main_window import MainWindow

    assert install_translator(qapp, "zh_CN") is not None
    try:
        win = MainWindow(start_engine=False)
        titles = [a.text() for a in win.menuBar().actions()]
        assert titles[:4] == ["文件(&F)", "编辑(&E)", "运行(&R)", "视图(&V)"], titles
        assert "帮助(&H)" in titles
        assert win.palette_dock.windowTitle() == "Pass 列表"
        assert win.act_run.text() == "运行流水线(&R)"
        assert win.diff_view.hide_unchanged_box.text() == "隐藏未改变的函数"  # a widgets/ text (self.tr)
        assert win.param_editor.empty_label.text() == "未选择步骤。"
        win.ctrl.undo_stack.setClean()
        win.close()
    finally:
        install_translator(qapp, "en")
    win = MainWindow(start_engine=False)
    assert [a.text() for a in win.menuBar().actions()][0] == "&File"
    win.close()


def test_core_report_texts_follow_the_installed_translator(qapp):
    """Step reports rendered by the pass kinds (Qt-free core) come out in Chinese once the GUI installed
    its translator, and in English without one (CLI, engine)."""
    from app.i18n import install_translator
    from pipeline_model import i18n as core_i18n
    from pipeline_model.passkinds import step_report_html

    report = {"dlight": {"scheduled": {"fused_matmul": "gpu.Matmul"}, "unscheduled": ["add"], "rules": ["gpu.Matmul"]}}
    core_i18n.set_translator(None)
    english = step_report_html("dlight.ApplyDefaultSchedule", report, {"kind": "llvm"})
    assert "1 PrimFunc(s) scheduled, 1 not" in english and "no rule applied" in english
    try:
        assert install_translator(qapp, "zh_CN") is not None
        chinese = step_report_html("dlight.ApplyDefaultSchedule", report, {"kind": "llvm"})
        assert "已调度 1 个 PrimFunc，1 个未调度" in chinese and "未应用规则" in chinese
    finally:
        install_translator(qapp, "en")
        core_i18n.set_translator(None)


def test_pass_categories_are_translated_and_match_the_catalogue(qapp):
    """The palette's category names are the catalogue's (one list, marked for lupdate) and show in Chinese."""
    from app.i18n import install_translator
    from pipeline_model.catalogue import CATEGORY_ORDER
    from widgets.pass_palette import CATEGORY_LABELS, category_label

    assert tuple(CATEGORY_ORDER) == CATEGORY_LABELS
    try:
        assert install_translator(qapp, "zh_CN") is not None
        assert category_label("Fusion") == "融合" and category_label("Unknown category") == "Unknown category"
    finally:
        install_translator(qapp, "en")
        from pipeline_model import i18n as core_i18n

        core_i18n.set_translator(None)


def test_tuning_panel_status_and_end_words_are_translated(qapp):
    """The Tuning dock's task status column and its end reason show in Chinese (they had been wrapped in a helper
    lupdate does not see, so the zh_CN build showed "done")."""
    from app.i18n import install_translator
    from widgets.tuning_panel import end_reason, status_text

    assert status_text("done") == "done" and end_reason({"finished": True, "done": 4, "total": 4}) == "done"
    try:
        assert install_translator(qapp, "zh_CN") is not None
        assert status_text("done") == "完成" and status_text("not reached") == "未轮到"
        assert end_reason({"finished": True, "done": 4, "total": 4}) == "完成"
        assert end_reason({"stopped": True}) == "已停止；已测量的试验会保留"
        assert status_text("something new") == "something new"  # an unknown word is shown as it came
    finally:
        install_translator(qapp, "en")
