"""Issue 18: access keys (the underlined letters of ``&File``, ``Open &Model…``) are unique in every menu
of the real main window — the menu bar and each menu, submenus included — in English and in Chinese;
Help ▸ Keyboard Shortcuts lists the graph's zoom."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings  # noqa: E402
from PySide6.QtWidgets import QMenu  # noqa: E402

_KEY = re.compile(r"&(.)")


def access_key(text: str) -> str:
    """The access key of a menu text (``""`` when it has none; ``&&`` is a literal ``&``)."""
    match = _KEY.search(text.replace("&&", ""))
    return match.group(1).lower() if match else ""


def duplicates(texts: list[str]) -> dict[str, list[str]]:
    keys: dict[str, list[str]] = {}
    for text in texts:
        key = access_key(text)
        if key:
            keys.setdefault(key, []).append(text)
    return {k: v for k, v in keys.items() if len(v) > 1}


def all_menus(win) -> list[tuple[str, list[str]]]:
    """``(menu title, [texts of its visible entries])`` for the menu bar and every (sub)menu."""
    bar = win.menuBar()
    out = [("menu bar", [a.text() for a in bar.actions() if a.isVisible()])]
    stack: list[QMenu] = [a.menu() for a in bar.actions() if a.menu() is not None]
    while stack:
        menu = stack.pop()
        menu.aboutToShow.emit()  # menus filled when opened (Open Recent) are filled now
        entries = [a for a in menu.actions() if not a.isSeparator() and a.isVisible()]
        out.append((menu.title(), [a.text() for a in entries]))
        stack.extend(a.menu() for a in entries if a.menu() is not None)
    return out


def _check(win) -> None:
    menus = all_menus(win)
    assert len(menus) > 6
    problems = {title: dup for title, texts in menus if (dup := duplicates(texts))}
    assert not problems, problems


def _window(tmp_path):
    from app.main_window import MainWindow

    return MainWindow(start_engine=False, settings=QSettings(str(tmp_path / "s.ini"), QSettings.Format.IniFormat))


def test_access_keys_are_unique_in_every_menu(qapp, gui_env, tmp_path):
    win = _window(tmp_path)
    try:
        _check(win)
    finally:
        win.close()


def test_access_keys_are_unique_in_every_menu_in_chinese(qapp, gui_env, tmp_path):
    from app.i18n import install_translator

    translator = install_translator(qapp, "zh_CN")
    assert translator is not None
    try:
        win = _window(tmp_path)
        try:
            assert win.menuBar().actions()[0].text() != "&File"
            _check(win)
        finally:
            win.close()
    finally:
        qapp.removeTranslator(translator)


def test_the_checker_finds_a_duplicate():
    assert duplicates(["Open &Model…", "Built-in &Models", "&Save", "Build && &Run"]) == {
        "m": ["Open &Model…", "Built-in &Models"]}


def test_shortcuts_list_zoom(qapp, gui_env, tmp_path):
    from app.help_controller import menu_shortcuts

    win = _window(tmp_path)
    try:
        rows = menu_shortcuts(win.menuBar())
        actions = {action for _menu, action, _keys in rows}
        assert {"Zoom In", "Zoom Out", "Fit Graph"} <= actions, actions
    finally:
        win.close()
