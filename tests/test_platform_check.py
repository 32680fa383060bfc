"""Issue 18: a screen but missing xcb libraries gives a message naming them and the apt-get command,
not Qt's raw "could not load the Qt platform plugin xcb"."""

from __future__ import annotations

import sys

import pytest

from app import platform_check

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="xcb is Linux's")


def _find_without(*absent: str):
    return lambda soname: None if soname in absent else soname


def test_missing_libraries_are_named_with_the_apt_command():
    env = {"DISPLAY": ":0"}
    message = platform_check.xcb_problem(env, _find_without("libxcb-cursor.so.0", "libxcb-icccm.so.4"))
    assert message is not None
    assert "libxcb-cursor0, libxcb-icccm4" in message
    assert "sudo apt-get install libxcb-cursor0 libxcb-icccm4" in message


def test_no_message_when_everything_is_there_or_xcb_is_not_used():
    find_all = _find_without()
    assert platform_check.xcb_problem({"DISPLAY": ":0"}, find_all) is None
    missing = _find_without("libxcb-cursor.so.0")
    assert platform_check.xcb_problem({}, missing) is None  # no screen
    assert platform_check.xcb_problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "offscreen"}, missing) is None
    assert platform_check.xcb_problem({"DISPLAY": ":0", "WAYLAND_DISPLAY": "wayland-0"}, missing) is None
    assert platform_check.xcb_problem({"DISPLAY": ":0", "QT_QPA_PLATFORM": "xcb"}, missing) is not None


def test_run_app_prints_the_message_instead_of_starting_qt(monkeypatch, capsys):
    from PySide6.QtWidgets import QApplication

    from app import application

    monkeypatch.setattr(platform_check, "xcb_problem", lambda: "missing: libxcb-cursor0")
    monkeypatch.setattr(QApplication, "instance", staticmethod(lambda: None))
    monkeypatch.setattr(application, "make_application", lambda *_a: pytest.fail("Qt was started"))
    assert application.run_app([]) == 3
    assert "libxcb-cursor0" in capsys.readouterr().err


def test_the_real_linker_is_asked():
    assert platform_check.loadable("libc.so.6") == "libc.so.6"
    assert platform_check.loadable("libdoes-not-exist-rps.so.9") is None
