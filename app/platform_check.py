"""Before the QApplication exists: can Qt's xcb platform plugin load?

A virtual environment set up without a screen and later started with one (``DISPLAY`` set) dies in Qt
with "could not load the Qt platform plugin xcb" and no hint when system libraries the plugin needs are
missing (``libxcb-cursor0`` since Qt 6.5, ``libxcb-icccm4``, ``libxcb-keysyms1`` …). :func:`missing_xcb_libraries`
finds which ones (through the dynamic linker's cache, as ``ctypes.util.find_library`` does), and
:func:`xcb_problem` turns them into a message that names them and the ``apt-get`` command installing them.
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from typing import Callable, Mapping, Optional

#: Libraries Qt 6's xcb platform plugin loads: the ``find_library`` name → its Debian/Ubuntu package.
XCB_LIBRARIES: dict[str, str] = {
    "xcb": "libxcb1",
    "X11-xcb": "libx11-xcb1",
    "xcb-cursor": "libxcb-cursor0",
    "xcb-icccm": "libxcb-icccm4",
    "xcb-keysyms": "libxcb-keysyms1",
    "xcb-image": "libxcb-image0",
    "xcb-render-util": "libxcb-render-util0",
    "xcb-randr": "libxcb-randr0",
    "xcb-shape": "libxcb-shape0",
    "xcb-shm": "libxcb-shm0",
    "xcb-sync": "libxcb-sync1",
    "xcb-xfixes": "libxcb-xfixes0",
    "xcb-xkb": "libxcb-xkb1",
    "xkbcommon-x11": "libxkbcommon-x11-0",
    "xkbcommon": "libxkbcommon0",
}


def wants_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will try the xcb plugin: on Linux, with an X display, no other platform chosen (and
    no Wayland session that Qt would prefer)."""
    if not sys.platform.startswith("linux") or not environ.get("DISPLAY"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def missing_xcb_libraries(find: Callable[[str], Optional[str]] = ctypes.util.find_library) -> list[str]:
    """The packages of the xcb plugin's libraries that ``find`` does not find (in table order)."""
    return [package for name, package in XCB_LIBRARIES.items() if not find(name)]


def xcb_problem(environ: Optional[Mapping[str, str]] = None,
                find: Callable[[str], Optional[str]] = ctypes.util.find_library) -> Optional[str]:
    """The message to show instead of Qt's when the xcb plugin cannot load, else ``None``."""
    env = os.environ if environ is None else environ
    if not wants_xcb(env):
        return None
    missing = missing_xcb_libraries(find)
    if not missing:
        return None
    return ("Relax Pipeline Studio cannot open a window: Qt's X11 (xcb) platform plugin needs system "
            f"libraries that are not installed: {', '.join(missing)}.\n"
            f"Install them with:\n    sudo apt-get install {' '.join(missing)}\n"
            "(or run headless with QT_QPA_PLATFORM=offscreen; the command-line tools need no screen).")
