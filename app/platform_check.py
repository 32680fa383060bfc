"""Before the QApplication exists: can Qt's xcb platform plugin load?

A virtual environment set up without a screen and later started with one (``DISPLAY`` set) dies in Qt
with "could not load the Qt platform plugin xcb" and no hint when system libraries the plugin needs are
missing (``libxcb-cursor0`` since Qt 6.5, ``libxcb-icccm4``, ``libxcb-keysyms1`` …). :func:`missing_xcb_libraries`
finds which ones (by asking the dynamic linker to load each, so ``LD_LIBRARY_PATH`` counts), and
:func:`xcb_problem` turns them into a message that names them and the ``apt-get`` command installing them.
"""

from __future__ import annotations

import os
import sys
from typing import Callable, Mapping, Optional

#: Libraries Qt 6's xcb platform plugin loads: soname → its Debian/Ubuntu package.
XCB_LIBRARIES: dict[str, str] = {
    "libxcb.so.1": "libxcb1",
    "libX11-xcb.so.1": "libx11-xcb1",
    "libxcb-cursor.so.0": "libxcb-cursor0",
    "libxcb-icccm.so.4": "libxcb-icccm4",
    "libxcb-keysyms.so.1": "libxcb-keysyms1",
    "libxcb-image.so.0": "libxcb-image0",
    "libxcb-render-util.so.0": "libxcb-render-util0",
    "libxcb-randr.so.0": "libxcb-randr0",
    "libxcb-shape.so.0": "libxcb-shape0",
    "libxcb-shm.so.0": "libxcb-shm0",
    "libxcb-sync.so.1": "libxcb-sync1",
    "libxcb-xfixes.so.0": "libxcb-xfixes0",
    "libxcb-xkb.so.1": "libxcb-xkb1",
    "libxkbcommon-x11.so.0": "libxkbcommon-x11-0",
    "libxkbcommon.so.0": "libxkbcommon0",
}


def loadable(soname: str) -> Optional[str]:
    """``soname`` when the dynamic linker can load it (``LD_LIBRARY_PATH`` included), else ``None``."""
    import ctypes  # only when an X display is to be used (not imported by an offscreen or Wayland start)

    try:
        ctypes.CDLL(soname)
    except OSError:
        return None
    return soname


def wants_xcb(environ: Mapping[str, str]) -> bool:
    """Whether Qt will try the xcb plugin: on Linux, with an X display, no other platform chosen (and
    no Wayland session that Qt would prefer)."""
    if not sys.platform.startswith("linux") or not environ.get("DISPLAY"):
        return False
    chosen = environ.get("QT_QPA_PLATFORM", "").strip()
    if chosen:
        return chosen.split(":")[0].split(";")[0] == "xcb"
    return not environ.get("WAYLAND_DISPLAY")


def missing_xcb_libraries(find: Callable[[str], Optional[str]] = loadable) -> list[str]:
    """The packages of the xcb plugin's libraries that ``find`` does not find (in table order)."""
    return [package for name, package in XCB_LIBRARIES.items() if not find(name)]


def xcb_problem(environ: Optional[Mapping[str, str]] = None,
                find: Callable[[str], Optional[str]] = loadable) -> Optional[str]:
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
